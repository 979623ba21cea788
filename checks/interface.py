"""The interface every check type implements: :class:`Check`, its declared :class:`CheckField`
rows, the :class:`Violation` rows it yields, and the validation of a spec's fields.

A constraint record may carry ``fields.check``, a mapping whose ``type`` names a check type.
Each type is one module with one :class:`Check` subclass (in the style of import-linter contract
types and gitlint rules): a ``type`` name, declared :class:`CheckField` rows, :meth:`Check.parse`
validating a spec into an instance (raising :class:`CheckError` with one message naming the
field), and :meth:`Check.evaluate` yielding :class:`Violation` rows at a revision.

A violation is matched between revisions on (record, rule, path, normalised text), never on line
numbers, so a violation that only moved is not new (docs/design.md §7).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from blake3 import blake3

from comind.errors import ComindError
from comind.records import short_id

if TYPE_CHECKING:
    from comind.checks.context import CheckContext

    pass


class CheckError(ComindError):
    """A check that cannot be compiled or run as written (exit 2).

    ``where`` is the field path (``check.forbid[0]``), ``record_id`` the constraint it belongs to.
    """

    def __init__(
        self, problem: str, where: str = "check", record_id: str | None = None, source: str | None = None
    ) -> None:
        self.problem = problem
        self.where = where
        self.record_id = record_id
        self.source = source
        owner = f"constraint {short_id(record_id)}: " if record_id else (f"{source}: " if source else "")
        super().__init__(f"{owner}{where}: {problem}")

    def for_record(self, record_id: str) -> CheckError:
        return CheckError(self.problem, self.where, record_id=record_id)

    def for_source(self, source: str) -> CheckError:
        return CheckError(self.problem, self.where, source=source)


class NotRun(Exception):
    """Raised by :meth:`Check.evaluate` when the check could not run (reported as a warning)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One place where a check fails at a revision.

    ``text`` is the normalised matched content (whitespace collapsed, no line numbers): with
    ``rule`` and ``path`` it identifies the violation across revisions and line moves.
    ``head_only`` marks results that exist only at head (a test run): never matched to the base.
    """

    rule: str
    path: str | None
    line: int | None
    end_line: int | None
    text: str
    message: str
    record_id: str = ""
    head_only: bool = False

    @property
    def fingerprint(self) -> str:
        """Stable across runs, line moves and re-spacing: blake3 of rule, path and the text's tokens."""
        data = "\0".join((self.rule, self.path or "", tokens(self.text))).encode("utf-8", "surrogatepass")
        return str(blake3(data).hexdigest(length=16))

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What matches a violation at head to one at base: never line numbers, nor spacing
        (``eval( x )`` and ``eval(x)`` are the same match)."""
        return (self.record_id, self.rule, self.path or "", tokens(self.text))

    def sort_key(self) -> tuple[str, str, int, str, str]:
        return (self.record_id, self.path or "", self.line or 0, self.rule, self.text)


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, ends stripped."""
    return " ".join(text.split())


_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> str:
    """Word and punctuation tokens joined by single spaces: spacing never changes a match."""
    return " ".join(_TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class CheckField:
    """One field a check type declares: its name, shape, whether required, and help text.

    Shapes: ``str``, ``bool``, ``number``, ``mapping``, ``globs`` (a string or a list of
    strings), ``strings`` (a list of strings), ``choice`` (one of ``choices``), ``any``.
    """

    name: str
    shape: str
    required: bool = False
    help: str = ""
    choices: tuple[str, ...] = ()


# Fields every check type accepts.
COMMON_FIELDS = (
    CheckField("type", "str", True, "the check type"),
    CheckField("id", "str", False, "a rule id for reports (default comind/<short record id>)"),
    CheckField("message", "str", False, "what a violation says"),
)

MAX_TEXT = 10_000  # characters in one string field


class Check:
    """One compiled check of one constraint record."""

    type: ClassVar[str]
    fields: ClassVar[tuple[CheckField, ...]] = ()
    # True: results are per file, so in diff-aware mode only changed files are evaluated.
    file_local: ClassVar[bool] = False

    def __init__(self, record_id: str, spec: Mapping[str, Any]) -> None:
        self.record_id = record_id
        self.spec = dict(spec)
        self.rule: str = rule_id(record_id, spec)
        message = spec.get("message")
        self.message: str | None = message if isinstance(message, str) and message.strip() else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.rule} of {self.record_id}>"

    # --- compiling ----------------------------------------------------------------------------
    @classmethod
    def all_fields(cls) -> tuple[CheckField, ...]:
        return COMMON_FIELDS + cls.fields

    @classmethod
    def parse(cls, spec: Mapping[str, Any], record_id: str = "") -> Self:
        """Validate ``spec`` (the declared fields, then the type's own rules) and build the check."""
        validate_fields(spec, cls.all_fields())
        check = cls(record_id, spec)
        check.compile()
        return check

    def compile(self) -> None:
        """Type-specific validation and preparation; raise :class:`CheckError` naming the field."""

    # --- evaluating ---------------------------------------------------------------------------
    def evaluate(self, ctx: CheckContext, revision: str) -> Iterable[Violation]:
        raise NotImplementedError

    @classmethod
    def evaluate_many(cls, checks: Sequence[Check], ctx: CheckContext, revision: str) -> dict[Check, Outcome]:
        """Evaluate several checks of this type at one revision; override where batching pays."""
        out: dict[Check, Outcome] = {}
        for check in checks:
            try:
                found = list(check.evaluate(ctx, revision))
            except NotRun as exc:
                out[check] = Outcome([], complete=False, not_run=str(exc))
                continue
            out[check] = Outcome(found, complete=not (check.local(ctx) and ctx.scope(revision) is not None))
        return out

    def local(self, ctx: CheckContext) -> bool:
        """Whether, for this change, the check's results are per file (then, in diff-aware mode,
        only the files the change touched are evaluated, at head and at the base)."""
        return self.file_local

    def affected_by(self, ctx: CheckContext, paths: Iterable[str]) -> bool:
        """Whether changes to ``paths`` can change this check's result (False: skip the base)."""
        return True

    def cannot_run(self, ctx: CheckContext) -> str | None:
        """Why the check cannot run on this machine at all (a tool it needs is missing), else None.
        Its selectors are then not worth a word: whether they match says nothing of a check that
        never runs."""
        return None

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        """The check's selectors that match nothing in the revision, one line each, saying what was
        looked for and what follows (``forbid glob 'app.legacy.*' matches no module …, so the check
        cannot fail``). Read from what evaluating the check built; a warning, never a violation."""
        return []

    # --- helpers for subclasses ---------------------------------------------------------------
    def violation(
        self,
        path: str | None,
        line: int | None,
        end_line: int | None,
        text: str,
        message: str,
        *,
        head_only: bool = False,
    ) -> Violation:
        return Violation(self.rule, path, line, end_line, normalise(text), message, self.record_id, head_only)


@dataclass(slots=True)
class Outcome:
    """The result of one check at one revision."""

    violations: list[Violation]
    complete: bool = True  # evaluated over the whole revision, not only the change's files
    not_run: str | None = None  # why the check did not run (a warning); violations is then empty
    warnings: list[str] = field(default_factory=list)  # ran, with something worth saying


def rule_id(record_id: str, spec: Mapping[str, Any]) -> str:
    """A check's rule id in reports: its spec's `id`, else comind/<short record id>."""
    rule = spec.get("id")
    return rule if isinstance(rule, str) and rule else f"comind/{short_id(record_id) or 'check'}"


def names_check(ref: str, record_id: str, rule: str) -> bool:
    """Whether a suppression's `constraint` names the check of constraint `record_id`: that id, its
    end of 8 characters or more (the short id), or the check's rule id."""
    return ref in (record_id, rule) or (len(ref) >= 8 and bool(record_id) and record_id.endswith(ref))


def unmatched_globs(
    field: str, globs: Sequence[str], hits: Callable[[str], bool], what: str, consequence: str, *, each: bool = False
) -> list[str]:
    """One line per glob of ``field`` that ``hits`` nothing: ``field glob 'x' {what}, {consequence}``
    when it is every glob of the field (or ``each`` glob must hit, as a required target), else
    noting that the others do."""
    dead = [g for g in globs if not hits(g)]
    tail = f", {consequence}" if each or len(dead) == len(globs) else f" (other {field} globs do)"
    return [f"{field} glob {g!r} {what}{tail}" for g in dead]


# --- field validation -----------------------------------------------------------------------------


def describe(value: Any) -> str:
    """A short description of a bad value for an error message."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "nothing (null)"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_string(value: Any, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise CheckError(f"expected {'text' if allow_empty else 'non-empty text'}, got {describe(value)}", where)
    if len(value) > MAX_TEXT:
        raise CheckError(f"{len(value)} characters, at most {MAX_TEXT}", where)
    if "\0" in value:
        raise CheckError("contains a NUL character", where)
    return value


def check_strings(value: Any, where: str, *, single_ok: bool = True) -> list[str]:
    """A list of non-empty strings (or, when ``single_ok``, one string)."""
    if isinstance(value, str) and single_ok:
        return [check_string(value, where)]
    if not isinstance(value, list):
        expected = "text or a list of texts" if single_ok else "a list of texts"
        raise CheckError(f"expected {expected}, got {describe(value)}", where)
    if not value:
        raise CheckError("expected at least one entry, got an empty list", where)
    return [check_string(item, f"{where}[{i}]") for i, item in enumerate(value)]


def validate_fields(spec: Mapping[str, Any], fields: Sequence[CheckField]) -> None:
    """Unknown fields, missing required ones and wrong shapes; one CheckError, naming the field."""
    known = {f.name: f for f in fields}
    for key in spec:
        if not isinstance(key, str):
            raise CheckError(f"field names must be text, got {describe(key)}", "check")
        if key not in known:
            raise CheckError(f"unknown field (known: {', '.join(sorted(known))})", f"check.{key}")
    for f in fields:
        where = f"check.{f.name}"
        if f.name not in spec:
            if f.required:
                raise CheckError(f"required ({f.help})" if f.help else "required", where)
            continue
        value = spec[f.name]
        if f.shape == "str":
            check_string(value, where)
        elif f.shape == "bool":
            if not isinstance(value, bool):
                raise CheckError(f"expected true or false, got {describe(value)}", where)
        elif f.shape == "number":
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
                or value > 86_400
            ):
                raise CheckError(f"expected a positive number of seconds (at most 86400), got {describe(value)}", where)
        elif f.shape == "mapping":
            if not isinstance(value, Mapping):
                raise CheckError(f"expected a mapping, got {describe(value)}", where)
        elif f.shape == "globs":
            check_strings(value, where)
        elif f.shape == "strings":
            check_strings(value, where, single_ok=False)
        elif f.shape == "choice" and (not isinstance(value, str) or value not in f.choices):
            raise CheckError(f"expected one of {', '.join(f.choices)}, got {describe(value)}", where)
