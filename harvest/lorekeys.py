"""The Lore vocabulary, its dialects, and the normalised view of one commit's Lore trailers.

Keys are compared case-insensitively and mapped to one *concept* (the Lore v1.0 key). The
dialects and what we decided for each:

* Lore v1.0 (lore-protocol.com, reference CLI): the twelve keys of ``LORE_V1_KEYS``.
* oh-my-codex and lora: the same keys without ``Lore-id``; other enum values
  (``broad``, ``messy``, ``moderate``/``difficult`` for Reversibility).
* CommitLore / Annals 2.0: renamed keys (``Limit``, ``Ruled-out``, ``Warn``, ``Blast``, ``Undo``,
  ``Certainty``, ``Verified``, ``Unverified``, ``Record-Id``), plus ``Follows``, ``Expires``,
  ``Evidence``, ``Provenance`` and a version key.

Enum values go through one alias map per concept, accepting every dialect's values whatever
the key's dialect (a ``Blast: wide`` is read as ``wide``); the raw value is always kept.
Judgement calls, documented because the specs do not settle them:

* Reversibility ``messy`` and lora's ``moderate`` -> ``migration-needed`` (undoing takes more than
  a revert, but is possible); ``difficult`` -> ``irreversible`` (the conservative reading).
* CommitLore ``Undo``: ``easy`` -> ``clean``, ``costly`` -> ``migration-needed``,
  ``permanent`` -> ``irreversible``.
* CommitLore ``Blast``: ``local`` -> ``narrow``, ``module`` -> ``moderate``, ``system`` -> ``wide``.
* CommitLore ``Certainty``: ``firm`` -> ``high``, ``tentative`` -> ``medium``, ``guess`` -> ``low``.
* ``Follows`` (the prior record of a decision chain) -> ``related``: it neither retires nor
  requires the earlier record, so it must not feed supersession or dependency staleness.
* A value is matched on its leading words (``high -- ran the suite`` -> ``high``); an unknown
  value normalises to ``None`` and is flagged, never dropped.
* A repeated enum key: the last valid value wins (the reference CLI's rule); every raw value
  stays in ``trailers``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from comind.harvest.trailers import Trailer

# The twelve Lore v1.0 keys, in their canonical case.
LORE_V1_KEYS: tuple[str, ...] = (
    "Lore-id",
    "Constraint",
    "Rejected",
    "Confidence",
    "Scope-risk",
    "Reversibility",
    "Directive",
    "Tested",
    "Not-tested",
    "Supersedes",
    "Depends-on",
    "Related",
)

# Dialect keys (canonical case) -> the v1.0 concept they stand for. Keys without a v1.0
# equivalent map to themselves.
DIALECT_KEYS: dict[str, str] = {
    "Limit": "Constraint",
    "Ruled-out": "Rejected",
    "Warn": "Directive",
    "Blast": "Scope-risk",
    "Undo": "Reversibility",
    "Certainty": "Confidence",
    "Verified": "Tested",
    "Unverified": "Not-tested",
    "Record-Id": "Lore-id",
    "Follows": "Related",
    "Expires": "Expires",
    "Evidence": "Evidence",
    "Provenance": "Provenance",
    "CommitLore-Version": "Version",
    "Annals-Version": "Version",
}

# Every key of the vocabulary, lower-cased -> canonical case.
LORE_KEYS: dict[str, str] = {k.lower(): k for k in (*LORE_V1_KEYS, *DIALECT_KEYS)}

# Canonical key -> concept (v1.0 key, or the dialect-only concept name).
CONCEPT: dict[str, str] = {**{k: k for k in LORE_V1_KEYS}, **DIALECT_KEYS}

LORE_ID_RE = re.compile(r"[0-9a-f]{8}")
RECORD_ID_RE = re.compile(r"r-[a-z0-9]{6,}")

# Concept -> {alias: normalised value}. Aliases are lower case; spaces and underscores in a
# raw value are read as hyphens before matching.
ENUM_ALIASES: dict[str, dict[str, str]] = {
    "Confidence": {
        "low": "low",
        "medium": "medium",
        "high": "high",
        "firm": "high",
        "tentative": "medium",
        "guess": "low",
    },
    "Scope-risk": {
        "narrow": "narrow",
        "moderate": "moderate",
        "wide": "wide",
        "broad": "wide",
        "local": "narrow",
        "module": "moderate",
        "system": "wide",
    },
    "Reversibility": {
        "clean": "clean",
        "migration-needed": "migration-needed",
        "irreversible": "irreversible",
        "messy": "migration-needed",
        "moderate": "migration-needed",
        "difficult": "irreversible",
        "easy": "clean",
        "costly": "migration-needed",
        "permanent": "irreversible",
    },
}
# Longest alias first, so "migration-needed" is tried before a shorter alias could match.
_ENUM_ORDER = {c: sorted(a, key=len, reverse=True) for c, a in ENUM_ALIASES.items()}

_SEPARATORS = re.compile(r"[\s_]+")
_UNTIL_RE = re.compile(r"\[until:([^\]]*)\]", re.IGNORECASE)  # (spaces around it: read by hand, in one pass)
_UNTIL_DATE_RE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?")
_EXPIRES_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def canonical_lore_key(key: str) -> str | None:
    """The canonical case of a Lore key (any dialect, any case), or None for other keys."""
    return LORE_KEYS.get(key.lower())


class Rejection(NamedTuple):
    """A ``Rejected:`` / ``Ruled-out:`` value split on its first ``|``."""

    option: str
    reason: str
    raw: str


@dataclass(frozen=True)
class Directive:
    text: str  # the value without a parsed ``[until:DATE]`` label
    until: date | None  # last day the directive holds (YYYY-MM means the month's last day)
    label: str | None  # the raw ``[until:…]`` label when it is not a date (kept in ``text`` too)
    raw: str


@dataclass(frozen=True)
class EnumValue:
    value: str | None  # normalised value, None when unknown
    raw: str


@dataclass(frozen=True)
class Ref:
    """A ``Supersedes`` / ``Depends-on`` / ``Related`` / ``Follows`` reference."""

    value: str  # one Lore-id or Record-Id, or the free text as written
    lore_id: str | None  # set when ``value`` is a valid Lore-id or Record-Id
    raw: str


@dataclass(frozen=True)
class LoreAtom:
    lore_id: str | None = None
    constraints: tuple[str, ...] = ()
    rejected: tuple[Rejection, ...] = ()
    directives: tuple[Directive, ...] = ()
    tested: tuple[str, ...] = ()
    not_tested: tuple[str, ...] = ()
    confidence: EnumValue | None = None
    scope_risk: EnumValue | None = None
    reversibility: EnumValue | None = None
    supersedes: tuple[Ref, ...] = ()
    depends_on: tuple[Ref, ...] = ()
    related: tuple[Ref, ...] = ()
    evidence: tuple[str, ...] = ()
    expires: str | None = None  # raw ``Expires:`` value
    expires_on: date | None = None  # when it is a YYYY-MM-DD date
    provenance: str | None = None
    version: str | None = None  # CommitLore-Version / Annals-Version
    custom: tuple[Trailer, ...] = ()  # the other trailers of a message that has Lore
    trailers: tuple[Trailer, ...] = ()  # every Lore trailer as parsed, in order
    problems: tuple[str, ...] = field(default=())  # e.g. "lore-id-invalid: xyz"

    @property
    def has_lore(self) -> bool:
        return bool(self.trailers)

    @property
    def lore_id_valid(self) -> bool:
        return self.lore_id is not None and not any(p.startswith("lore-id") for p in self.problems)


def normalise_enum(concept: str, raw: str) -> str | None:
    """The normalised value of an enum concept (``Confidence``, ``Scope-risk``, ``Reversibility``)."""
    aliases = ENUM_ALIASES.get(concept)
    if aliases is None:
        return None
    text = raw.strip().lower()[:64]
    if text in aliases:  # the common case: exactly a known value
        return aliases[text]
    text = _SEPARATORS.sub("-", text)
    for alias in _ENUM_ORDER[concept]:
        if text.startswith(alias) and (len(text) == len(alias) or not text[len(alias)].isalnum()):
            return aliases[alias]
    return None


def split_rejected(raw: str) -> Rejection:
    """Split on the first ``|`` (spaces optional); no ``|`` means an empty reason."""
    option, bar, reason = raw.partition("|")
    return Rejection(option.strip(), reason.strip() if bar else "", raw)


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def parse_directive(raw: str) -> tuple[Directive, str | None]:
    """A directive and, when its ``[until:…]`` looks like a date but is not one, a problem."""
    # a dated label anywhere counts, as the Lore CLI reads it (`… [until:2027-01]`); else a leading one
    dated = next((f for f in _UNTIL_RE.finditer(raw) if _UNTIL_DATE_RE.fullmatch(f.group(1).strip())), None)
    m = dated or _UNTIL_RE.match(raw, len(raw) - len(raw.lstrip()))
    if m is None:
        return Directive(raw.strip(), None, None, raw), None
    label = m.group(1).strip()
    d = _UNTIL_DATE_RE.fullmatch(label)
    if d is None:
        return Directive(raw.strip(), None, label, raw), None
    year, month, day = int(d.group(1)), int(d.group(2)), d.group(3)
    try:
        until = date(year, month, int(day)) if day else _month_end(year, month)
    except ValueError:
        return Directive(raw.strip(), None, label, raw), f"directive-until-invalid: {label}"
    before, after = raw[: m.start()], raw[m.end() :]
    spaced = before[-1:].isspace() or after[:1].isspace()  # (a label written inside a word or a link leaves no gap)
    text = f"{before.rstrip()}{' ' if spaced else ''}{after.lstrip()}".strip()
    return Directive(text, until, None, raw), None


def _refs(raw: str) -> list[Ref]:
    parts = [p for p in re.split(r"[\s,]+", raw.strip()) if p]
    if parts and all(LORE_ID_RE.fullmatch(p) or RECORD_ID_RE.fullmatch(p) for p in parts):
        return [Ref(p, p, raw) for p in parts]
    text = raw.strip()
    return [Ref(text, None, raw)] if text else []


def atom_from_trailers(trailers: list[Trailer] | tuple[Trailer, ...]) -> LoreAtom:
    """Normalise parsed trailers (from ``parse_lore``) into one ``LoreAtom``."""
    if not any(t.key.lower() in LORE_KEYS for t in trailers):  # the common case: no Lore at all
        if not trailers:
            return EMPTY_ATOM
        atom = object.__new__(LoreAtom)  # LoreAtom(custom=…) without the 20-field frozen __init__
        atom.__dict__.update(EMPTY_ATOM.__dict__, custom=tuple(trailers))
        return atom
    lore: list[Trailer] = []
    custom: list[Trailer] = []
    problems: list[str] = []
    lists: dict[str, list[str]] = {"Constraint": [], "Tested": [], "Not-tested": [], "Evidence": []}
    rejected: list[Rejection] = []
    directives: list[Directive] = []
    refs: dict[str, list[Ref]] = {"Supersedes": [], "Depends-on": [], "Related": []}
    enums: dict[str, EnumValue] = {}
    singles: dict[str, str] = {}
    lore_id: str | None = None

    for t in trailers:
        canonical = canonical_lore_key(t.key)
        if canonical is None:
            custom.append(t)
            continue
        lore.append(t)
        concept = CONCEPT[canonical]
        value = t.value
        if concept == "Lore-id":
            ident = value.strip()
            pattern = RECORD_ID_RE if canonical == "Record-Id" else LORE_ID_RE
            if lore_id is None:
                lore_id = ident
                if not pattern.fullmatch(ident):
                    problems.append(f"lore-id-invalid: {ident}")
            elif ident != lore_id:
                problems.append(f"lore-id-repeated: {ident}")
        elif concept in lists:
            if value:
                lists[concept].append(value)
        elif concept == "Rejected":
            r = split_rejected(value)
            rejected.append(r)
            if not r.reason:
                problems.append(f"rejected-without-reason: {r.option}")
        elif concept == "Directive":
            d, problem = parse_directive(value)
            directives.append(d)
            if problem:
                problems.append(problem)
        elif concept in refs:
            refs[concept].extend(_refs(value))
        elif concept in ENUM_ALIASES:
            norm = normalise_enum(concept, value)
            if norm is None:
                problems.append(f"enum-invalid: {canonical}: {value}")
                enums.setdefault(concept, EnumValue(None, value))
            else:
                enums[concept] = EnumValue(norm, value)  # the last valid value wins
        else:  # Expires, Provenance, Version: single values, the first one wins
            singles.setdefault(concept, value)

    expires = singles.get("Expires")
    expires_on: date | None = None
    if expires is not None and (m := _EXPIRES_DATE_RE.fullmatch(expires.strip())):
        try:
            expires_on = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            problems.append(f"expires-invalid: {expires}")

    atom = object.__new__(LoreAtom)  # LoreAtom(...) without the frozen __init__'s per-field cost
    atom.__dict__.update(
        lore_id=lore_id,
        constraints=tuple(lists["Constraint"]),
        rejected=tuple(rejected),
        directives=tuple(directives),
        tested=tuple(lists["Tested"]),
        not_tested=tuple(lists["Not-tested"]),
        confidence=enums.get("Confidence"),
        scope_risk=enums.get("Scope-risk"),
        reversibility=enums.get("Reversibility"),
        supersedes=tuple(refs["Supersedes"]),
        depends_on=tuple(refs["Depends-on"]),
        related=tuple(refs["Related"]),
        evidence=tuple(lists["Evidence"]),
        expires=expires,
        expires_on=expires_on,
        provenance=singles.get("Provenance"),
        version=singles.get("Version"),
        custom=tuple(custom),
        trailers=tuple(lore),
        problems=tuple(problems),
    )
    return atom


EMPTY_ATOM = LoreAtom()
