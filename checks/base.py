"""Compiled constraint checks: the interface every check type implements, and the registry.

A constraint record may carry ``fields.check``, a mapping whose ``type`` names a check type.
Each type is one module with one :class:`Check` subclass (in the style of import-linter contract
types and gitlint rules): a ``type`` name, declared :class:`CheckField` rows, :meth:`Check.parse`
validating a spec into an instance (raising :class:`CheckError` with one message naming the
field), and :meth:`Check.evaluate` yielding :class:`Violation` rows at a revision. Adding a type
is one module and one line in :data:`CHECK_TYPES`.

A violation is matched between revisions on (record, rule, path, normalised text), never on line
numbers, so a violation that only moved is not new (DESIGN §7).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

import pygit2
from blake3 import blake3

from comind import config as configuration
from comind.errors import ComindError
from comind.records import short_id

if TYPE_CHECKING:
    from comind.codeindex import CodeIndex, Snapshot
    from comind.deps import Dependency
    from comind.graph import ImportGraph


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
        rule = spec.get("id")
        self.rule: str = rule if isinstance(rule, str) and rule else f"comind/{short_id(record_id) or 'check'}"
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


# --- globs ------------------------------------------------------------------------------------------

_EXTENSIONS = frozenset(
    {
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".cs",
        ".kt",
        ".kts",
        ".swift",
        ".rb",
        ".php",
        ".scala",
        ".lua",
        ".sh",
        ".bash",
        ".html",
        ".htm",
        ".css",
        ".json",
        ".yml",
        ".yaml",
        ".hs",
        ".ex",
        ".exs",
        ".nix",
        ".sol",
        ".hcl",
        ".tf",
        ".dart",
        ".md",
        ".zig",
        ".toml",
        ".txt",
        ".lock",
        ".cfg",
    }
)


def is_path_glob(pattern: str) -> bool:
    """A path glob (``myapp/handlers/**``, ``setup.py``) rather than a module glob (``myapp.db.*``)."""
    return "/" in pattern or os.path.splitext(pattern)[1].lower() in _EXTENSIONS


def _glob_chars(glob: str, star: str, one: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            out.append(star)
        elif c == "?":
            out.append(one)
        elif c == "[":
            j = glob.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def path_glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as a regex over repository-relative paths.

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments (``a/**/b`` also matches
    ``a/b``), a trailing ``/`` names everything below a directory, and a plain directory or file
    path matches itself and everything below it.
    """
    glob = glob.strip().lstrip("./") if glob.startswith("./") else glob.strip().lstrip("/")
    parts: list[str] = []
    segments = glob.split("/")
    for n, segment in enumerate(segments):
        last = n == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:.*/)?")
            continue
        if segment == "" and last:
            parts.append(".*")  # trailing slash: everything below
            continue
        parts.append(_glob_chars(segment, "[^/]*", "[^/]") + ("" if last else "/"))
    return re.compile("(?:" + "".join(parts) + ")(?:/.*)?", re.DOTALL)


def path_matches(glob: str, path: str) -> bool:
    return path_glob_regex(glob).fullmatch(path) is not None


def any_path_matches(globs: Iterable[str], path: str) -> bool:
    return any(path_matches(g, path) for g in globs)


@lru_cache(maxsize=4096)
def module_glob_regex(glob: str) -> re.Pattern[str]:
    """A module glob (import-linter style): ``*`` is one dotted segment, ``**`` one or more."""
    parts = []
    for segment in glob.strip().split("."):
        if segment == "**":
            parts.append(r"[^.]+(?:\.[^.]+)*")
        else:
            parts.append(_glob_chars(segment, "[^.]*", "[^.]"))
    return re.compile(r"\.".join(parts), re.DOTALL)


def module_matches(glob: str, module: str) -> bool:
    """Whether ``module`` or one of its parent packages matches the module glob."""
    rx = module_glob_regex(glob)
    name = module
    while name:
        if rx.fullmatch(name):
            return True
        name = name.rpartition(".")[0]
    return False


def check_glob(value: str, where: str) -> str:
    """Reject globs that can never match (empty segments, a lone dot)."""
    text = value.strip()
    if not text or text in (".", "/"):
        raise CheckError(
            f'expected a module glob like "myapp.db.*" or a path glob like "myapp/db/**", got {describe(value)}', where
        )
    if not is_path_glob(text) and any(not seg for seg in text.split(".")):
        raise CheckError(f'expected a module glob like "myapp.db.*" (dotted names, * or **), got {value!r}', where)
    return text


# --- the context ----------------------------------------------------------------------------------

_SYMLINK, _GITLINK, _TREE = 0o120000, 0o160000, 0o040000


@dataclass(slots=True)
class Change:
    """What a change touched, from base to head (renames detected)."""

    base: str
    head: str
    head_paths: frozenset[str]  # added, modified, renamed (new name) or copied at head
    base_paths: frozenset[str]  # modified, deleted or renamed (old name) at base
    renames: dict[str, str] = field(default_factory=dict)  # old path → new path

    @property
    def all_paths(self) -> frozenset[str]:
        return self.head_paths | self.base_paths


class CheckContext:
    """What a check needs at a revision, each piece computed once and cached.

    ``index`` is the repository's :class:`~comind.codeindex.CodeIndex`; ``work_tree`` the checkout
    at head (only test checks with ``run: true`` use it). ``semgrep`` names the executable (a path,
    or a name looked up on PATH; default: ``$COMIND_SEMGREP``, then ``semgrep`` on PATH, then next
    to the running Python). Timeouts are in seconds.
    """

    def __init__(
        self,
        index: CodeIndex,
        *,
        work_tree: str | os.PathLike[str] | None = None,
        semgrep: str | None = None,
        semgrep_timeout: float = 120.0,
        test_timeout: float = 300.0,
        python: str | None = None,
        workers: int = 2,
    ) -> None:
        self.index = index
        self.repo: pygit2.Repository = index.repo
        self.work_tree = Path(work_tree) if work_tree is not None else None
        self.semgrep = semgrep
        self.semgrep_timeout = semgrep_timeout
        self.test_timeout = test_timeout
        self.python = python
        self.workers = workers
        self.change: Change | None = None
        self.base: str | None = None
        self.head: str | None = None
        self.cache: dict[Any, Any] = {}  # for batching check types (semgrep runs base and head at once)
        self._commits: dict[str, str] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._graphs: dict[Any, ImportGraph] = {}
        self._deps: dict[str, list[Dependency]] = {}
        self._trees: dict[str, dict[str, str]] = {}

    # revisions --------------------------------------------------------------------------------
    def commit(self, rev: str) -> str:
        """The commit id of a revision (ComindError if unknown)."""
        found = self._commits.get(rev)
        if found is None:
            found = str(self.index.resolve(rev).id)
            self._commits[rev] = found
            self._commits[found] = found
        return found

    def set_change(self, base: str | None, head: str) -> None:
        """Fix the revisions of this evaluation and what changed between them."""
        self.head = self.commit(head)
        self.base = self.commit(base) if base is not None else None
        self.change = None
        if self.base is not None:  # the change's diff is made once (checks.change) and shared
            self.change = recall_change(self.index, self.base, self.head)
            if self.change is None:
                self.change = diff_change(self.repo, self.base, self.head)
                remember_change(self.index, self.change)
        self.cache = {}  # batched results depend on the change (which files each side looks at)

    def scope(self, revision: str) -> frozenset[str] | None:
        """The paths file-local checks look at in ``revision``: None for all of them (``--all``)."""
        if self.change is None:
            return None
        commit = self.commit(revision)
        if commit == self.change.head:
            return self.change.head_paths
        if commit == self.change.base:
            return self.change.base_paths
        return None

    # what a revision holds ---------------------------------------------------------------------
    def snapshot(self, revision: str) -> Snapshot:
        commit = self.commit(revision)
        snap = self._snapshots.get(commit)
        if snap is None:
            snap = self._snapshots[commit] = self.index.snapshot(commit)
        return snap

    def graph(self, revision: str) -> ImportGraph:
        from comind.graph import build_graph

        commit = self.commit(revision)
        graph = self._graphs.get(commit)
        if graph is None:
            graph = self._graphs[commit] = build_graph(self.snapshot(commit))
        return graph

    def partial_graph(self, revision: str, paths: frozenset[str]) -> ImportGraph:
        """The import and call edges of ``paths`` only, with every module named as in the full
        graph (names come from the file list; no other file's symbols are loaded)."""
        from comind.graph import build_graph

        commit = self.commit(revision)
        if commit in self._graphs:
            return self._graphs[commit]
        key = (commit, paths)
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._graphs[key] = build_graph(_partial_snapshot(self.snapshot(commit), paths))
        return graph

    def dependencies(self, revision: str) -> list[Dependency]:
        from comind.deps import dependencies

        commit = self.commit(revision)
        deps = self._deps.get(commit)
        if deps is None:
            found = self.repo[commit]
            assert isinstance(found, pygit2.Commit)
            deps = self._deps[commit] = dependencies(found)
        return deps

    def tree_files(self, revision: str) -> dict[str, str]:
        """Every regular file of the revision: path → blob id (no symlinks or submodules)."""
        commit = self.commit(revision)
        files = self._trees.get(commit)
        if files is None:
            obj = self.repo[commit]
            assert isinstance(obj, pygit2.Commit)
            files = self._trees[commit] = dict(_walk(self.repo, obj.tree, ""))
        return files

    def files(self, revision: str) -> list[str]:
        return sorted(self.tree_files(revision))

    def blob(self, revision: str, path: str) -> bytes:
        """The bytes of one file at the revision; KeyError if absent."""
        oid = self.tree_files(revision)[path]
        obj = self.repo[oid]
        assert isinstance(obj, pygit2.Blob)
        return bytes(obj.data)

    def text(self, revision: str, path: str) -> str:
        return self.blob(revision, path).decode("utf-8", errors="replace")


def _partial_snapshot(snapshot: Snapshot, paths: frozenset[str]) -> Snapshot:
    """A snapshot whose files outside ``paths`` have no symbols (their names and languages stay)."""
    from comind.codeindex import Snapshot
    from comind.languages import FileSymbols

    class Partial(Snapshot):
        def symbols(self, path: str) -> FileSymbols | None:
            if path in paths:
                return snapshot.symbols(path)
            entry = self.files.get(path)
            return FileSymbols(entry.language) if entry is not None else None

        def all_symbols(self) -> dict[str, FileSymbols]:
            empty = {lang: FileSymbols(lang) for lang in {e.language for e in self.files.values()}}
            return {
                p: (snapshot.symbols(p) or empty[e.language]) if p in paths else empty[e.language]
                for p, e in self.files.items()
            }

    return Partial(snapshot.index, snapshot.commit, snapshot.tree, dict(snapshot.files), snapshot.stats)


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
    for entry in tree:
        mode = entry.filemode
        path = prefix + (entry.name or "")
        if mode == _TREE:
            sub = repo[entry.id]
            assert isinstance(sub, pygit2.Tree)
            yield from _walk(repo, sub, path + "/")
        elif mode not in (_SYMLINK, _GITLINK):
            yield path, str(entry.id)


def change_of(base: str, head: str, files: Iterable[tuple[str, str | None, str]]) -> Change:
    """The Change of a diff given as (path, old path or None, status) per file, status one of
    A, C, D, M, R, T (``path`` is the old one for D)."""
    head_paths: set[str] = set()
    base_paths: set[str] = set()
    renames: dict[str, str] = {}
    for path, old_path, status in files:
        if status in ("A", "C"):
            head_paths.add(path)
        elif status == "D":
            base_paths.add(path)
        elif status == "R" and old_path:
            renames[old_path] = path
            head_paths.add(path)
            base_paths.add(old_path)
        else:  # M, T
            head_paths.add(path)
            base_paths.add(old_path or path)
    return Change(base, head, frozenset(head_paths), frozenset(base_paths), renames)


def remember_change(index: CodeIndex, change: Change) -> None:
    """Keep what a change touched in the index cache, for every later context of that change."""
    value = json.dumps([sorted(change.head_paths), sorted(change.base_paths), change.renames])
    index.memo_put("change", {f"{change.base}:{change.head}": value})


def recall_change(index: CodeIndex, base: str, head: str) -> Change | None:
    key = f"{base}:{head}"
    found = index.memo_get("change", [key]).get(key)
    if found is None:
        return None
    head_paths, base_paths, renames = json.loads(found)
    return Change(base, head, frozenset(head_paths), frozenset(base_paths), dict(renames))


def diff_change(repo: pygit2.Repository, base: str, head: str) -> Change:
    """The paths a change touched, with renames (git's default 50 % similarity)."""
    from pygit2.enums import DiffFind

    base_commit, head_commit = repo[base], repo[head]
    assert isinstance(base_commit, pygit2.Commit) and isinstance(head_commit, pygit2.Commit)
    diff = repo.diff(base_commit.tree, head_commit.tree)
    diff.find_similar(flags=DiffFind.FIND_RENAMES)
    head_paths: set[str] = set()
    base_paths: set[str] = set()
    renames: dict[str, str] = {}
    for delta in diff.deltas:
        status = delta.status_char()
        old, new = delta.old_file.path, delta.new_file.path
        if status in ("A", "C"):
            head_paths.add(new)
        elif status == "D":
            base_paths.add(old)
        elif status == "R":
            renames[old] = new
            head_paths.add(new)
            base_paths.add(old)
        else:  # M, T
            head_paths.add(new)
            base_paths.add(old)
    return Change(base, head, frozenset(head_paths), frozenset(base_paths), renames)


class _Registry(Mapping[str, type[Check]]):
    """Check type name → class, filled on first use (the type modules import this module)."""

    def __init__(self) -> None:
        self._types: dict[str, type[Check]] | None = None

    def _load(self) -> dict[str, type[Check]]:
        if self._types is None:
            from comind.checks import astgrep, dependency, graph, semgrep, testref

            self._types = {
                cls.type: cls
                for cls in (
                    graph.GraphCheck,
                    dependency.DependencyCheck,
                    astgrep.AstGrepCheck,
                    semgrep.SemgrepCheck,
                    testref.TestCheck,
                )
            }
        return self._types

    def __getitem__(self, name: str) -> type[Check]:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


# The registry: adding a check type is one module and one line in _Registry._load.
CHECK_TYPES: Mapping[str, type[Check]] = _Registry()


def compile_check(record_id: str, spec: Any) -> Check:
    """Compile a constraint's ``fields.check`` into a :class:`Check`; CheckError naming the record."""
    try:
        if not isinstance(spec, Mapping):
            raise CheckError(f"expected a mapping with a type, got {describe(spec)}", "check")
        types = CHECK_TYPES
        kind = spec.get("type")
        if not isinstance(kind, str) or kind not in types:
            got = "nothing" if kind is None else describe(kind)
            raise CheckError(f"unknown check type {got}; known types: {', '.join(types)}", "check.type")
        return types[kind].parse(spec, record_id)
    except CheckError as exc:
        if record_id:
            raise exc.for_record(record_id) from None
        raise


def load_check_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a check spec from a YAML file (for ``comind remember … --check FILE``).

    The file holds one check mapping (``type: graph`` …). Without ``type``, an ast-grep rule file
    (``language`` and ``rule``) and a semgrep config with exactly one rule (``rules: [...]``) are
    recognised. Raises CheckError naming the file.
    """
    name = os.fspath(path)
    try:  # bounded like .comind.yml: a regular file, no aliases, bounded depth and numbers
        data = configuration.parse_yaml(configuration.read_text(Path(name)))
    except FileNotFoundError as exc:
        raise CheckError(f"cannot read the file ({exc.strerror or exc})", "check", source=name) from None
    except configuration.ConfigError as exc:
        raise CheckError(str(exc), "check", source=name) from None
    try:
        if not isinstance(data, dict):
            raise CheckError(f"expected a mapping with a type, got {describe(data)}", "check")
        if "type" not in data:
            if isinstance(data.get("rules"), list):
                if len(data["rules"]) != 1:
                    raise CheckError(
                        f"a semgrep config for one constraint holds exactly one rule, found {len(data['rules'])}",
                        "check.rules",
                    )
                data = {"type": "semgrep", "rule": data["rules"][0]}
            elif "rule" in data and "language" in data:
                data = {"type": "ast-grep", **data}
        compile_check("", data)
    except CheckError as exc:
        raise exc.for_source(name) from None
    return data


def check_of(record: Any) -> Check | None:
    """The compiled check of a constraint record (None when it has none)."""
    fields = record.fields
    if "check" not in fields:
        return None
    return compile_check(record.id, fields["check"])


def compile_checks(records: Iterable[Any]) -> list[tuple[Any, Check]]:
    """(record, check) for every constraint record carrying a check; CheckError on a broken one."""
    out: list[tuple[Any, Check]] = []
    for record in records:
        if record.kind != "constraint":
            continue
        check = check_of(record)
        if check is not None:
            out.append((record, check))
    return out
