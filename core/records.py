"""The record model (DESIGN §3): typed, evidenced, append-only records.

A record is a JSON object. Its identity is ``id``; its content address is ``hash``, the blake3 of
the RFC 8785 canonical JSON of the record without ``hash``. Records are validated at the boundary
(``new_record`` for what we create, ``load_record`` for what we read back) and never change.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime
from typing import Any, NamedTuple

from comind.anchors import ROLES, SCOPES
from comind.errors import ValidationError
from comind.sanitize import clean_path, clean_text, each_string, find_secret, shown

SCHEMA = 1
KNOWLEDGE_KINDS = ("intent", "decision", "attempt", "constraint", "gotcha", "question", "suppression")
KINDS = (*KNOWLEDGE_KINDS, "relation")
RELATION_KINDS = ("supersedes", "retracts", "confirms", "disputes", "relates")
OUTCOMES = ("failed", "reverted", "abandoned", "partial")
SEVERITIES = ("must", "should")
AUTHOR_KINDS = ("human", "agent", "harvested")
SOURCES = ("cli", "git", "mr", "bot", "import", "mcp")
EVIDENCE_TYPES = ("commit", "url", "record", "test", "file", "text", "mr")

TITLE_MAX = 120  # characters
TRIGGER_MAX = 200  # characters
BODY_MAX = 2048  # UTF-8 bytes
RECORD_MAX = 512 * 1024  # canonical bytes: bounds an attempt's approach fingerprint
DEPTH_MAX = 32  # levels of nesting: validation and readers recurse, and records are shallow

# Harvested ids are UUIDv5 in this namespace (uuid5 of this URL), so a source key always yields the same id.
NAMESPACE_URL = "https://comind.dev/ns/records"

_UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
_HEX = r"^[0-9a-f]{7,64}$"
_DATE = r"^(\d{4})-(\d{2})(?:-(\d{2}))?$"
_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$"
_INVISIBLE = "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"


class Field(NamedTuple):
    """One kind-specific field: its name, shape and limits (a gitlint-style spec row)."""

    name: str
    shape: str = "text"  # text | choice | list | alternatives | mapping | record
    required: bool = False
    choices: tuple[str, ...] = ()
    max_len: int = 1000


KIND_FIELDS: dict[str, tuple[Field, ...]] = {
    "intent": (Field("need", required=True),),
    "decision": (
        Field("chosen", required=True),
        Field("alternatives", "alternatives", required=True),
    ),
    "attempt": (
        Field("approach", required=True),
        Field("outcome", "choice", required=True, choices=OUTCOMES),
        Field("retry_when"),
        Field("conditions"),
        Field("reason"),
        Field("fingerprint", "mapping"),
        Field("pattern", "mapping"),
    ),
    "constraint": (
        Field("rule", required=True),
        Field("severity", "choice", required=True, choices=SEVERITIES),
        Field("check", "mapping"),
        Field("exceptions", "list"),
    ),
    "gotcha": (Field("symptom", required=True), Field("cause", required=True), Field("workaround")),
    "question": (Field("question", required=True),),
    "suppression": (
        Field("constraint", required=True, max_len=200),
        Field("reason", required=True),
        Field("owner", required=True, max_len=200),
        Field("expires", max_len=10),
    ),
    "relation": (
        Field("relation", "choice", required=True, choices=RELATION_KINDS),
        Field("target", "record", required=True),
        Field("source", "record"),
        Field("reason"),
        Field("commit", max_len=64),
    ),
}

_TOP_LEVEL = {
    "schema",
    "id",
    "hash",
    "kind",
    "title",
    "body",
    "trigger",
    "anchors",
    "evidence",
    "fields",
    "provenance",
    "valid_from",
    "created_at",
    "trust",
    "attributes",
    "until",
}


def authored_id() -> str:
    """A new UUIDv7: time-ordered ids for records people and agents write."""
    from uuid_utils.compat import uuid7

    return str(uuid7())


def harvested_id(source_key: str) -> str:
    """The UUIDv5 of a stable source key, e.g. ``git-revert:<repo>:<revert sha>``."""
    import uuid

    return str(uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, NAMESPACE_URL), source_key))


def short_id(record_id: str) -> str:
    """The id as shown to people: its last 8 hex digits (UUIDv7 ids share their leading time bits)."""
    return record_id[-8:]


def quoted(text: str) -> str:
    """A title or a commit subject inside a sentence people read, quoted one way wherever it is shown
    (`remember`, `review`, reasons, findings): not repr's ' or ", which turns on the text's own quotes."""
    return f"“{text}”"


def now_utc() -> str:
    """Now as an RFC 3339 UTC string; COMIND_NOW (an ISO time) fixes the clock for tests and replays."""
    import os

    fixed = os.environ.get("COMIND_NOW")
    moment = datetime.fromisoformat(fixed.replace("Z", "+00:00")) if fixed else datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


_MAX_INT = 2**53 - 1


def _jcs_ready(value: Any) -> Any:
    """Dicts re-keyed in JCS order (UTF-16 code units); None when a float or big int needs rfc8785."""
    if isinstance(value, dict):
        items = []
        for key in sorted(value, key=lambda k: k.encode("utf-16-be") if isinstance(k, str) else b""):
            if not isinstance(key, str):
                return None
            inner = _jcs_ready(value[key])
            if inner is None and value[key] is not None:
                return None
            items.append((key, inner))
        return dict(items)
    if isinstance(value, list | tuple):
        out = []
        for item in value:
            kind = type(item)
            if kind is str or item is None or kind is bool or (kind is int and -_MAX_INT <= item <= _MAX_INT):
                out.append(item)  # most items (a fingerprint line's number, text and flag): no call
                continue
            inner = _jcs_ready(item)
            if inner is None and item is not None:
                return None
            out.append(inner)
        return out
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and -_MAX_INT <= value <= _MAX_INT:
        return value
    return None


def canonical(data: Mapping[str, Any]) -> bytes:
    """RFC 8785 (JCS) canonical JSON.

    For the values records hold (strings, small ints, booleans, null, lists, objects) JCS equals
    compact `json.dumps` with keys in UTF-16 order, which is ~20x faster than the pure-Python
    rfc8785 package; anything else (floats) goes through rfc8785. A property test keeps the two equal.
    """
    ready = _jcs_ready(dict(data))
    if ready is None:
        import rfc8785

        return bytes(rfc8785.dumps(data))
    return json.dumps(ready, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def content_hash(data: Mapping[str, Any], canonical_bytes: bytes | None = None) -> str:
    from blake3 import blake3

    body = canonical_bytes or canonical({k: v for k, v in data.items() if k != "hash"})
    return str(blake3(body).hexdigest())


def restates(title: str, text: Any) -> bool:
    """Does a field's `text` say nothing its record's `title` does not: the title itself, or the
    title is the text and an addition (`, fixing …`, ` (#12)`)? Readers print such a field not at all."""
    if not isinstance(text, str):
        return False
    said, titled = (" ".join(t.casefold().split()).rstrip(".!…") for t in (text, title))
    return bool(said) and (titled == said or titled.startswith((said + ",", said + " (")))


def beyond_title(title: str, text: str) -> str | None:
    """What a field's `text` says beyond its record's `title`, for a reader who has the title: None
    when nothing (`restates`, or the title after a lead-in: `re-doing: <title>`); what follows it
    when it is the title and more (`<title> (0871179de7)` gives ` (0871179de7)`); else `text`."""
    if restates(title, text):
        return None
    said, titled = " ".join(text.split()), " ".join(title.split())
    if said[: len(titled)].casefold() == titled.casefold() and said[len(titled) :].startswith((" (", ",")):
        return said[len(titled) :]
    lead = said[: len(said) - len(titled)].strip()
    if said[len(lead) :].strip().casefold() == titled.casefold() and lead.endswith(":") and len(lead.split()) <= 3:
        return None
    return text


def told_in(body: str, text: Any) -> bool:
    """Does the record's `body` open with a field's whole `text` (whitespace aside)? A harvested
    revert's reason is its body's first 1,000 characters: `show` prints it once, as the body (a
    gotcha's symptom keeps its label, though its body says it too)."""
    if not isinstance(text, str) or not body:
        return False
    said = " ".join(text.split())
    return bool(said) and " ".join(body.split()).startswith(said)


def gave_no_reason(record: Record) -> bool:
    """Is this a harvested revert that gave no reason? Its body is then the harvester's own sentence
    saying so, naming the title again: readers say "no reason given" instead of quoting it."""
    harvester = record.provenance.get("harvester")
    return (
        record.kind == "attempt"
        and isinstance(harvester, dict)
        and harvester.get("name") == "reverts"
        and not record.fields.get("reason")
    )


_QUALIFIED_MR = re.compile(r"(?P<repo>[\w.-]+(?:/[\w.-]+)+)#(?P<number>\d+)")


class Record:
    """A validated, hashed record. Read-only by convention: build a new one to change anything."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    id = property(lambda self: str(self.data["id"]))
    hash = property(lambda self: str(self.data["hash"]))
    kind = property(lambda self: str(self.data["kind"]))
    title = property(lambda self: str(self.data["title"]))
    body = property(lambda self: str(self.data.get("body", "")))
    trigger = property(lambda self: str(self.data.get("trigger", "")))
    created_at = property(lambda self: str(self.data["created_at"]))

    @property
    def anchors(self) -> list[dict[str, Any]]:
        return list(self.data.get("anchors", []))

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return list(self.data.get("evidence", []))

    @property
    def shown_evidence(self) -> list[dict[str, Any]]:
        """The evidence as people and agents read it: a merge request of the record's own repository
        by its bare number (`#12`, whether the commit wrote `#12` or `owner/name#12`), each item once.
        Another repository's stays qualified; the stored record keeps what the commit said."""
        own = str(self.provenance.get("repo") or "").casefold()
        out: list[dict[str, Any]] = []
        for item in self.evidence:
            qualified = _QUALIFIED_MR.fullmatch(str(item.get("ref", ""))) if item.get("type") == "mr" else None
            if qualified and qualified["repo"].casefold() == own:
                item = {**item, "ref": f"#{qualified['number']}"}
            if item not in out:
                out.append(item)
        return out

    @property
    def fields(self) -> dict[str, Any]:
        return dict(self.data.get("fields", {}))

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self.data["provenance"])

    @property
    def key(self) -> str:
        """The object name in the store's inbox: unique per content, so puts are create-only."""
        return f"{self.id}-{self.hash}.json"

    def to_json(self) -> bytes:
        return canonical(self.data)

    def __repr__(self) -> str:
        return f"Record({self.kind} {self.id} {self.title!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data["hash"])


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    """Strip invisible controls and redact secrets in every string, recursively; the paths of the
    tree (`_paths`) as `clean_path` cleans them."""
    cleaned: dict[str, Any] = each_string(data, clean_text)
    for container, key in _paths(data):
        _at(cleaned, container)[key] = clean_path(_at(data, container)[key])
    return cleaned


def _paths(data: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(where its container is, its key) of each field holding a path of the repository's tree as
    text: an anchor's, a fingerprint file's."""
    anchors = data.get("anchors")
    for i, anchor in enumerate(anchors if isinstance(anchors, list) else []):
        for key in ("path", "raw"):
            if isinstance(anchor, dict) and isinstance(anchor.get(key), str):
                yield ("anchors", i), key
    fields = data.get("fields")
    fingerprint = fields.get("fingerprint") if isinstance(fields, dict) else None
    files = fingerprint.get("files") if isinstance(fingerprint, dict) else None
    for i, file in enumerate(files if isinstance(files, list) else []):
        for key in ("path", "old_path"):
            if isinstance(file, dict) and isinstance(file.get(key), str):
                yield ("fields", "fingerprint", "files", i), key


def _path_fields(data: Mapping[str, Any]) -> set[str]:
    """The names `_strings` gives the fields `_paths` finds (`anchors[0].path`)."""
    return {
        "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in (*container, key)).lstrip(".")
        for container, key in _paths(data)
    }


def _at(value: Any, where: tuple[str | int, ...]) -> Any:
    for step in where:
        value = value[step]
    return value


def _too_deep(value: Any, limit: int = DEPTH_MAX) -> bool:
    """Nested deeper than `limit` (checked without recursion, before anything recursive reads it)."""
    level = [value]
    for _ in range(limit + 1):
        level = (
            [
                v
                for item in level
                for v in (item.values() if isinstance(item, dict) else item)
                if isinstance(v, dict | list | tuple)
            ]
            if level
            else []
        )
        if not level:
            return False
    return True


def new_record(
    kind: str,
    *,
    title: str,
    anchors: Iterable[Mapping[str, Any]],
    fields: Mapping[str, Any],
    provenance: Mapping[str, Any],
    body: str = "",
    trigger: str = "",
    evidence: Iterable[Mapping[str, Any]] = (),
    valid_from: str | None = None,
    created_at: str | None = None,
    record_id: str | None = None,
    trust: int | None = None,
    attributes: Mapping[str, str] | None = None,
    until: str | None = None,
) -> Record:
    """Build, clean, validate and hash a record. Raises ValidationError listing every bad field."""
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "id": record_id or authored_id(),
        "kind": kind,
        "title": shown(title).strip(),  # one line: a title is shown in listings
        "body": body.strip(),
        "trigger": shown(trigger).strip(),
        "anchors": [dict(a) for a in anchors],
        "evidence": [dict(e) for e in evidence],
        "fields": {k: v for k, v in fields.items() if v not in (None, "", [], {})},
        "provenance": {k: v for k, v in provenance.items() if v is not None},
        "created_at": created_at or now_utc(),
    }
    if valid_from:
        data["valid_from"] = valid_from
    if trust is not None:
        data["trust"] = trust
    if attributes:
        data["attributes"] = dict(attributes)
    if until:
        data["until"] = until
    if _too_deep(data):
        raise ValidationError([f"record: nested deeper than {DEPTH_MAX} levels"])
    data = _clean(data)
    problems, canonical_bytes = _validated(data, check_hash=False)
    if problems:
        raise ValidationError(problems)
    data["hash"] = content_hash(data, canonical_bytes)
    return Record(data)


def cleaned(record: Record) -> Record:
    """The record with its text cleaned as `new_record` cleans it (controls stripped, secrets
    redacted) and hashed again; the record itself when there was nothing to clean. For records
    that come from elsewhere (an import of an older version's export)."""
    before = {k: v for k, v in record.data.items() if k != "hash"}
    data = _clean(before)
    for key in ("title", "trigger"):
        if isinstance(data.get(key), str):
            data[key] = shown(data[key]).strip()
    if data == before:
        return record
    _mark_cleaned_lines(before, data)
    problems = validate(data, check_hash=False)
    if problems:
        raise ValidationError(problems)
    data["hash"] = content_hash(data)
    return Record(data)


def recleaned(raw: bytes) -> Record | None:
    """A stored record as `cleaned` cleans it by the current rules, when that changes it: a record an
    older version wrote may hold a secret its rules missed (which `load_record` refuses). None when
    there is nothing to clean, or when `raw` is not a record written whole (its hash must match its
    content: cleaning launders nothing)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or _too_deep(data):
        return None
    if data.get("hash") != content_hash(data):
        return None
    record = Record(data)
    try:
        fresh = cleaned(record)
    except (ValidationError, TypeError, ValueError):
        return None
    return None if fresh is record else fresh


def _mark_cleaned_lines(before: Mapping[str, Any], after: dict[str, Any]) -> None:
    """Mark trivial each fingerprint line `[line, text, trivial]` whose text cleaning changed, as the
    harvest stores a line holding a secret: redacted, kept, and ignored by the matcher."""

    def files(data: Mapping[str, Any]) -> list[Any]:
        fields = data.get("fields")
        fingerprint = fields.get("fingerprint") if isinstance(fields, dict) else None
        found = fingerprint.get("files") if isinstance(fingerprint, dict) else None
        return found if isinstance(found, list) else []

    for old, new in zip(files(before), files(after), strict=False):
        for side in ("added", "removed") if isinstance(old, dict) and isinstance(new, dict) else ():
            for was, line in zip(old.get(side) or (), new.get(side) or (), strict=False):
                if isinstance(line, list) and len(line) == 3 and isinstance(was, list) and line[1:2] != was[1:2]:
                    line[2] = True


class CorruptRecord(ValueError):
    """A stored object that is not a valid record (bad JSON, hash mismatch, unknown schema…)."""


def load_record(raw: bytes, key: str | None = None) -> Record:
    """Parse and verify a stored record; raise CorruptRecord saying what is wrong."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptRecord(f"not JSON ({exc})") from None
    except RecursionError:
        raise CorruptRecord(f"nested deeper than {DEPTH_MAX} levels") from None
    if not isinstance(data, dict):
        raise CorruptRecord("not a JSON object")
    if _too_deep(data):
        raise CorruptRecord(f"nested deeper than {DEPTH_MAX} levels")
    if data.get("schema") != SCHEMA:
        raise CorruptRecord(f"unknown schema {data.get('schema')!r}")
    problems = validate(data, check_hash=True)
    if problems:
        raise CorruptRecord("; ".join(problems))
    record = Record(data)
    if key is not None and key.rsplit("/", 1)[-1] != record.key:
        raise CorruptRecord(f"object name does not match its id and hash (expected {record.key})")
    return record


def validate(data: Mapping[str, Any], *, check_hash: bool) -> list[str]:
    """Every problem with a record, one message per bad field."""
    return _validated(data, check_hash=check_hash)[0]


def _validated(data: Mapping[str, Any], *, check_hash: bool) -> tuple[list[str], bytes | None]:
    """(every problem, the canonical bytes without `hash` when they were computed)."""
    problems: list[str] = []
    add = problems.append
    for key in sorted(set(data) - _TOP_LEVEL):
        add(f"{key}: unknown field")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        add(f"kind: must be one of {', '.join(KINDS)}, not {kind!r}")
    if not isinstance(data.get("id"), str) or not re.match(_UUID, data["id"]):
        add("id: must be a lowercase UUID")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        if kind != "relation":
            add("title: required")
    elif len(title) > TITLE_MAX:
        add(f"title: {len(title)} characters, at most {TITLE_MAX}")
    trigger = data.get("trigger", "")
    if not isinstance(trigger, str):
        add("trigger: must be text")
    elif len(trigger) > TRIGGER_MAX:
        add(f"trigger: {len(trigger)} characters, at most {TRIGGER_MAX}")
    body = data.get("body", "")
    if not isinstance(body, str):
        add("body: must be text")
    elif len(body.encode()) > BODY_MAX:
        add(f"body: {len(body.encode())} bytes, at most {BODY_MAX}")
    problems += _validate_anchors(data.get("anchors"), kind)
    problems += _validate_evidence(data.get("evidence", []), kind)
    if isinstance(kind, str) and kind in KIND_FIELDS:
        problems += _validate_fields(data.get("fields"), KIND_FIELDS[kind])
    problems += _validate_provenance(data.get("provenance"))
    if not isinstance(data.get("created_at"), str) or not _is_time(data["created_at"]):
        add("created_at: must be an RFC 3339 UTC time like 2026-01-31T12:00:00Z")
    if "valid_from" in data and (not isinstance(data["valid_from"], str) or not re.match(_HEX, data["valid_from"])):
        add("valid_from: must be a commit id")
    if "trust" in data and data["trust"] not in (0, 1, 2, 3):
        add("trust: must be 0, 1, 2 or 3 (4 is only ever derived)")
    if "until" in data and (not isinstance(data["until"], str) or _date_or_none(data["until"]) is None):
        add(f"until: {str(data['until'])[:40]!r} is not a date YYYY-MM or YYYY-MM-DD (year 1 to 9999)")
    attributes = data.get("attributes", {})
    if (
        not isinstance(attributes, dict)
        or len(attributes) > 32
        or not all(isinstance(k, str) and isinstance(v, str) and len(v) <= 500 for k, v in attributes.items())
    ):
        add("attributes: must map at most 32 names to short texts")
    problems += _scan_text(data)
    if check_hash and not isinstance(data.get("hash"), str):
        add("hash: missing")
    if problems:
        return problems, None
    try:
        body = canonical({k: v for k, v in data.items() if k != "hash"})
    except ValueError as exc:  # rfc8785: floats out of domain, ints above 2**53 - 1
        return [f"record: cannot be canonicalised ({exc})"], None
    if len(body) > RECORD_MAX:
        add(f"record: {len(body)} bytes canonical, at most {RECORD_MAX}")
    elif check_hash and data["hash"] != content_hash(data, body):
        add("hash: does not match the content")
    return problems, body


def until_date(text: str) -> date:
    """The last day `until` holds: YYYY-MM-DD, or the last day of YYYY-MM; ValueError when it is no real date."""
    m = re.match(_DATE, text)
    if not m:
        raise ValueError(f"not a date: {text!r}")
    year, month = int(m[1]), int(m[2])
    if not 1 <= month <= 12:
        raise ValueError(f"month out of range: {text!r}")
    return date(year, month, int(m[3]) if m[3] else calendar.monthrange(year, month)[1])


def _date_or_none(text: str) -> date | None:
    try:
        return until_date(text)
    except ValueError:  # also year 0: date() refuses it
        return None


def _is_time(text: str) -> bool:
    """An RFC 3339 UTC time that is a real moment (readers parse it to compare ages)."""
    if not re.match(_TIME, text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# Anchor keys readers take as they are: text, positive ints (lines), and the dependency's texts.
_ANCHOR_TEXT = ("raw", "path", "symbol", "module", "commit", "blob", "kind", "sig_hash", "body_hash", "shape_hash")
_ANCHOR_LINE = ("line", "end_line")
_LINE_MAX = 10**9


def _is_line(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _LINE_MAX


def _anchor_shape(anchor: dict[str, Any], where: str) -> list[str]:
    problems = [
        f"{where}.{k}: must be text of at most 1000 characters"
        for k in _ANCHOR_TEXT
        if k in anchor and not (isinstance(anchor[k], str) and len(anchor[k]) <= 1000)
    ]
    problems += [f"{where}.{k}: must be a line number" for k in _ANCHOR_LINE if k in anchor and not _is_line(anchor[k])]
    if "span" in anchor and not (
        isinstance(anchor["span"], list) and len(anchor["span"]) == 2 and all(map(_is_line, anchor["span"]))
    ):
        problems.append(f"{where}.span: must be two line numbers")
    scope = anchor.get("scope")
    if scope == "symbol" and not isinstance(anchor.get("symbol"), str):
        problems.append(f"{where}.symbol: required for a symbol anchor")
    if scope == "module" and not isinstance(anchor.get("module"), str):
        problems.append(f"{where}.module: required for a module anchor")
    if scope == "dependency" or "dep" in anchor:
        dep = anchor.get("dep")
        if not (
            isinstance(dep, dict)
            and isinstance(dep.get("ecosystem"), str)
            and isinstance(dep.get("package"), str)
            and all(isinstance(v, str) and len(v) <= 1000 for v in dep.values())
        ):
            problems.append(f"{where}.dep: must name an ecosystem and a package")
    return problems


def _validate_anchors(anchors: Any, kind: Any) -> list[str]:
    if not isinstance(anchors, list):
        return ["anchors: must be a list"]
    problems = []
    if not anchors and kind not in ("relation", "suppression"):
        problems.append("anchors: at least one anchor is required (use --on PATH, PATH::Symbol or repo:)")
    if len(anchors) > 200:
        problems.append(f"anchors: {len(anchors)} anchors, at most 200")
    for i, anchor in enumerate(anchors):
        if not isinstance(anchor, dict):
            problems.append(f"anchors[{i}]: must be an object")
            continue
        if anchor.get("scope") not in SCOPES:
            problems.append(f"anchors[{i}].scope: must be one of {', '.join(SCOPES)}")
        if anchor.get("role", "subject") not in ROLES:
            problems.append(f"anchors[{i}].role: must be one of {', '.join(ROLES)}")
        if anchor.get("scope") in ("symbol", "file") and not isinstance(anchor.get("path"), str):
            problems.append(f"anchors[{i}].path: required for a {anchor.get('scope')} anchor")
        problems += _anchor_shape(anchor, f"anchors[{i}]")
    return problems


def _validate_evidence(evidence: Any, kind: Any) -> list[str]:
    if not isinstance(evidence, list):
        return ["evidence: must be a list"]
    problems = []
    if kind == "attempt" and not evidence:
        problems.append("evidence: an attempt needs at least one piece of evidence (--evidence COMMIT|URL|TEXT)")
    if len(evidence) > 100:
        problems.append(f"evidence: {len(evidence)} items, at most 100")
    for i, item in enumerate(evidence):
        if not isinstance(item, dict) or item.get("type") not in EVIDENCE_TYPES:
            problems.append(f"evidence[{i}].type: must be one of {', '.join(EVIDENCE_TYPES)}")
        elif not isinstance(item.get("ref"), str) or not item["ref"] or len(item["ref"]) > 1000:
            problems.append(f"evidence[{i}].ref: required, at most 1000 characters")
    return problems


def _validate_fields(fields: Any, spec: tuple[Field, ...]) -> list[str]:
    if not isinstance(fields, dict):
        return ["fields: must be an object"]
    problems = []
    known = {f.name for f in spec}
    for name in sorted(set(fields) - known):
        problems.append(f"fields.{name}: unknown for this kind (known: {', '.join(sorted(known))})")
    for field in spec:
        where = f"fields.{field.name}"
        if field.name not in fields:
            if field.required:
                problems.append(f"{where}: required")
            continue
        value = fields[field.name]
        if field.shape in ("text", "record", "choice"):
            if not isinstance(value, str) or not value.strip():
                problems.append(f"{where}: must be non-empty text")
            elif len(value) > field.max_len:
                problems.append(f"{where}: {len(value)} characters, at most {field.max_len}")
            elif field.shape == "choice" and value not in field.choices:
                problems.append(f"{where}: must be one of {', '.join(field.choices)}, not {value!r}")
            elif field.shape == "record" and not re.match(_UUID, value):
                problems.append(f"{where}: must be a record id (UUID)")
        elif field.shape == "list":
            if not isinstance(value, list) or not all(isinstance(v, str) and len(v) <= 1000 for v in value):
                problems.append(f"{where}: must be a list of texts")
        elif field.shape == "mapping":
            if not isinstance(value, dict):
                problems.append(f"{where}: must be a mapping")
        elif field.shape == "alternatives":
            ok = isinstance(value, list) and all(
                isinstance(a, dict)
                and set(a) <= {"option", "why_not"}
                and isinstance(a.get("option"), str)
                and a["option"].strip()
                and isinstance(a.get("why_not", ""), str)
                and len(a["option"]) <= 500
                and len(a.get("why_not", "")) <= 1000
                for a in value
            )
            if not ok:
                problems.append(f"{where}: must be a list of {{option, why_not}} (option required)")
    return problems


def _validate_provenance(provenance: Any) -> list[str]:
    if not isinstance(provenance, dict):
        return ["provenance: required"]
    problems = []
    actor = provenance.get("actor")
    if not isinstance(actor, str) or not actor or "@" in actor or any(c.isspace() for c in actor):
        problems.append("provenance.actor: must be a pseudonymous id (no names or emails)")
    if provenance.get("author_kind") not in AUTHOR_KINDS:
        problems.append(f"provenance.author_kind: must be one of {', '.join(AUTHOR_KINDS)}")
    if provenance.get("source") not in SOURCES:
        problems.append(f"provenance.source: must be one of {', '.join(SOURCES)}")
    if provenance.get("author_kind") == "harvested":
        harvester = provenance.get("harvester")
        if not isinstance(harvester, dict) or not harvester.get("name") or not harvester.get("version"):
            problems.append("provenance.harvester: name and version required for harvested records")
    for key in ("repo", "branch", "head_commit"):
        if key in provenance and not isinstance(provenance[key], str):
            problems.append(f"provenance.{key}: must be text")
    return problems


def _strings(value: Any, where: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{where}.{k}" if where else str(k))


def _scan_text(data: Mapping[str, Any]) -> list[str]:
    """Secrets are refused and invisible controls reported, naming the field."""
    if not any(map(_flagged, _texts(data))):  # most records: nothing to name, no field's name made
        return []
    problems = []
    paths = _path_fields(data)
    for where, text in _strings(dict(data), ""):
        if where == "hash":
            continue
        if secret := find_secret(text, path=where in paths):
            problems.append(f"{where}: contains {secret}; remove the secret (records are shared and shown)")
        elif re.search(_INVISIBLE, text):
            problems.append(f"{where}: contains invisible Unicode control characters")
    return problems


_INVISIBLE_RE = re.compile(_INVISIBLE)


def _flagged(text: str) -> bool:
    return find_secret(text) is not None or (not text.isascii() and _INVISIBLE_RE.search(text) is not None)


def _texts(data: Mapping[str, Any]) -> list[str]:
    """The texts `_strings` names (in strings, lists and dicts; not `hash`), in no order."""
    texts: list[str] = []
    todo: list[Any] = [v for k, v in data.items() if k != "hash"]
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
    return texts
