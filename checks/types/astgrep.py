"""``ast-grep`` checks: an ast-grep rule over the matching files of a revision.

The spec has the shape of an ast-grep YAML rule (https://ast-grep.github.io/reference/yaml.html)::

    type: ast-grep
    language: python
    files: ["src/**/*.py"]          # optional; ignores: [...] too
    rule: {pattern: "eval($X)", inside: {kind: function_definition, stopBy: end}}
    constraints: {X: {regex: "^user"}}
    utils: {...}
    message: "eval() of $X"          # $VARS are filled in from the match

A spec is compiled once, at parse time, against an empty file, so every error ast-grep can report
(unknown kind, unknown rule key, bad regex, undefined util) is a CheckError naming the field.
Two mistakes ast-grep does not report are caught first: an unknown language (ast-grep-py panics
with a BaseException) is checked against the built-in list, and a pattern that does not parse
(``def (``; ast-grep would silently match nothing) is rejected by parsing it and looking for ERROR
nodes. Files are read from git objects; each file is parsed once for all rules of its language,
in worker processes when there are many.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pygit2

from comind.checks.context import CheckContext
from comind.checks.globs import any_path_matches, path_matches, unmatched_files
from comind.checks.interface import Check, CheckError, CheckField, Outcome, Violation, check_strings

# ast-grep-py's built-in languages (0.51); any other name panics.
AST_GREP_LANGUAGES = frozenset(
    {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "kotlin",
        "swift",
        "ruby",
        "php",
        "scala",
        "lua",
        "bash",
        "html",
        "css",
        "json",
        "yaml",
        "haskell",
        "elixir",
        "nix",
        "solidity",
        "hcl",
        "dart",
        "markdown",
        "zig",
    }
)
MAX_FILE_SIZE = 1 << 20
PARALLEL_THRESHOLD = 64  # files before worker processes pay for their start-up
CHUNK = 8
CACHE_VERSION = "1"

ALIASES = {
    "py": "python",
    "js": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cs": "csharp",
    "kt": "kotlin",
    "rb": "ruby",
    "yml": "yaml",
    "hs": "haskell",
    "ex": "elixir",
    "sol": "solidity",
    "terraform": "hcl",
}
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "typescript": (".ts", ".mts", ".cts"),
    "tsx": (".tsx",),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h"),
    "csharp": (".cs",),
    "kotlin": (".kt", ".kts"),
    "swift": (".swift",),
    "ruby": (".rb",),
    "php": (".php",),
    "scala": (".scala", ".sc"),
    "lua": (".lua",),
    "bash": (".sh", ".bash"),
    "html": (".html", ".htm"),
    "css": (".css",),
    "json": (".json",),
    "yaml": (".yml", ".yaml"),
    "haskell": (".hs",),
    "elixir": (".ex", ".exs"),
    "nix": (".nix",),
    "solidity": (".sol",),
    "hcl": (".hcl", ".tf"),
    "dart": (".dart",),
    "markdown": (".md",),
    "zig": (".zig",),
}
_RULE_KEYS = ("rule", "constraints", "utils", "transform")
_VAR = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)|\$([A-Z_][A-Z0-9_]*)")


def _fatal(exc: BaseException) -> bool:
    return isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit)


def canonical_language(value: str) -> str | None:
    name = ALIASES.get(value.strip().lower(), value.strip().lower())
    return name if name in AST_GREP_LANGUAGES else None


def _has_error(text: str, language: str) -> bool:
    from ast_grep_py import SgRoot

    return SgRoot(text, language).root().find(kind="ERROR") is not None


def pattern_parses(text: str, language: str) -> bool:
    """Whether a pattern parses without ERROR nodes (metavariables as ast-grep writes them)."""
    variants = [text, re.sub(r"\$", "µ", text), re.sub(r"\$", "_", text)]
    return any(not _has_error(v, language) for v in variants)


def _patterns(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(field path, pattern text) for every ``pattern`` in a rule tree."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            here = f"{where}.{key}"
            if key == "pattern":
                if isinstance(inner, str):
                    yield here, inner
                elif isinstance(inner, Mapping) and isinstance(inner.get("context"), str):
                    yield here + ".context", inner["context"]
            else:
                yield from _patterns(inner, here)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _patterns(inner, f"{where}[{i}]")


def _first_lines(text: str, n: int = 4) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[:n])[:400]


class AstGrepCheck(Check):
    type: ClassVar[str] = "ast-grep"
    file_local: ClassVar[bool] = True
    fields: ClassVar[tuple[CheckField, ...]] = (
        CheckField("language", "str", True, f"one of ast-grep's languages ({', '.join(sorted(AST_GREP_LANGUAGES))})"),
        CheckField("rule", "mapping", True, "the ast-grep rule: pattern, kind, regex, inside, has, all, any, not…"),
        CheckField("constraints", "mapping", False, "metavariable constraints"),
        CheckField("utils", "mapping", False, "utility rules referenced with matches:"),
        CheckField("transform", "mapping", False, "ast-grep transforms (checked, not used)"),
        CheckField("files", "globs", False, "only files matching these path globs"),
        CheckField("ignores", "globs", False, "never files matching these path globs"),
        CheckField("severity", "str", False, "informational (the constraint's severity decides)"),
        CheckField("note", "str", False, "informational"),
        CheckField("fix", "any", False, "informational (not applied)"),
        CheckField("metadata", "mapping", False, "informational"),
        CheckField("url", "str", False, "informational"),
    )

    def compile(self) -> None:
        spec = self.spec
        language = canonical_language(spec["language"])
        if language is None:
            raise CheckError(
                f"unknown ast-grep language {spec['language']!r}; known: {', '.join(sorted(AST_GREP_LANGUAGES))}"[:600],
                "check.language",
            )
        self.language = language
        self.files: list[str] = check_strings(spec["files"], "check.files") if "files" in spec else []
        self.ignores: list[str] = check_strings(spec["ignores"], "check.ignores") if "ignores" in spec else []
        self.config: dict[str, Any] = {k: spec[k] for k in _RULE_KEYS if k in spec}
        for where, text in _patterns({k: spec[k] for k in ("rule", "constraints", "utils") if k in spec}, "check"):
            if not isinstance(text, str) or not text.strip():
                raise CheckError("expected a non-empty pattern", where)
            try:
                ok = pattern_parses(text, language)
            except BaseException as exc:
                if _fatal(exc):
                    raise
                ok = False
            if not ok:
                raise CheckError(
                    f"the pattern {text[:120]!r} is not valid {language} (it parses with errors, so "
                    "ast-grep would match nothing); write a complete statement or expression, or use "
                    "pattern: {context: ..., selector: KIND}",
                    where,
                )
        try:
            from ast_grep_py import SgRoot

            SgRoot("", language).root().find_all(self.config)  # type: ignore[call-overload]
        except BaseException as exc:
            if _fatal(exc):
                raise
            raise CheckError(
                f"the ast-grep rule does not compile: {_first_lines(str(exc)) or type(exc).__name__}", _blame(str(exc))
            ) from None

    def typed(self, path: str) -> bool:
        """Whether ``path`` is a file of the rule's language."""
        return path.lower().endswith(EXTENSIONS.get(self.language, ()))

    def wants(self, path: str) -> bool:
        if not self.typed(path):
            return False
        if self.files and not any_path_matches(self.files, path):
            return False
        return not (self.ignores and any_path_matches(self.ignores, path))

    def evaluate(self, ctx: CheckContext, revision: str) -> Iterator[Violation]:
        outcome = type(self).evaluate_many([self], ctx, revision)[self]
        yield from outcome.violations

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        # the revision's file list is the one evaluating the rule walked
        return unmatched_files(
            [p for p in ctx.tree_files(revision) if self.typed(p)],
            language=("language", self.language),
            extensions=EXTENSIONS.get(self.language, ()),
            selectors=[("files", self.files, path_matches)],
            wants=self.wants,
            set_fields=[name for name, globs in (("files", self.files), ("ignores", self.ignores)) if globs],
        )

    @property
    def cache_key(self) -> str:
        """What the results of this rule on a blob depend on (not the path, not the record)."""
        from importlib.metadata import version

        from blake3 import blake3

        body = json.dumps(
            [CACHE_VERSION, version("ast-grep-py"), self.language, self.config, self.template],
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return str(blake3(body.encode()).hexdigest(length=16))

    @property
    def template(self) -> str:
        return self.message or f"matches ast-grep rule {self.rule}"

    @classmethod
    def evaluate_many(cls, checks: Sequence[Check], ctx: CheckContext, revision: str) -> dict[Check, Outcome]:
        mine = [c for c in checks if isinstance(c, AstGrepCheck)]
        scope = ctx.scope(revision)
        files = ctx.tree_files(revision)
        keys = [c.cache_key for c in mine]
        wanted: list[tuple[str, str, int]] = []  # (blob, path, check index)
        for path, oid in sorted(files.items()):
            if scope is None or path in scope:
                wanted.extend((oid, path, i) for i, check in enumerate(mine) if check.wants(path))
        cache = _ResultCache(ctx)
        known = cache.get({(keys[i], oid) for oid, _, i in wanted})
        # one job per (blob, language) still to match: (blob, path, language, check indices)
        todo: dict[tuple[str, str], list[int]] = {}
        paths: dict[str, str] = {}
        for oid, path, i in wanted:
            if (keys[i], oid) not in known:
                todo.setdefault((oid, mine[i].language), []).append(i)
                paths.setdefault(oid, path)
        jobs = [(oid, paths[oid], lang, tuple(idx)) for (oid, lang), idx in todo.items()]
        configs = [(c.config, c.template) for c in mine]
        fresh: dict[tuple[str, str], list[tuple[int, int, str, str]]] = {
            (keys[i], oid): [] for oid, _, lang, idx in jobs for i in idx
        }
        failures: list[str] = []
        for found, failed in _run(ctx, configs, jobs):
            for i, oid, line, end, text, message in found:
                fresh[(keys[i], oid)].append((line, end, text, message))
            failures.extend(failed)
        failed_oids = {f.split(" ", 1)[0] for f in failures}
        cache.put({k: v for k, v in fresh.items() if k[1] not in failed_oids})
        known.update(fresh)
        out: dict[Check, Outcome] = {c: Outcome([], complete=scope is None) for c in mine}
        for oid, path, i in wanted:
            for line, end, text, message in known.get((keys[i], oid), ()):
                out[mine[i]].violations.append(mine[i].violation(path, line, end, text, message))
        if failures:
            for check in mine:
                out[check].complete = False
                out[check].warnings.append(
                    f"ast-grep could not read {len(failures)} file(s), e.g. {failures[0].split(' ', 1)[1]}"
                )
        return out


class _ResultCache:
    """ast-grep matches per (rule, blob) in SQLite next to the code index: a blob matched once
    against a rule is never matched again (``--all`` on a warm cache reads, never parses)."""

    def __init__(self, ctx: CheckContext) -> None:
        self.path = Path(ctx.index.cache_path).with_name("checks.sqlite")

    def _connect(self) -> sqlite3.Connection | None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS astgrep (rule TEXT NOT NULL, oid TEXT NOT NULL, "
                "data TEXT NOT NULL, PRIMARY KEY (rule, oid)) WITHOUT ROWID"
            )
            return db
        except (OSError, sqlite3.Error):
            return None  # a cache: without it everything is matched again, correctly

    def get(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[int, int, str, str]]]:
        out: dict[tuple[str, str], list[tuple[int, int, str, str]]] = {}
        if not keys:
            return out
        db = self._connect()
        if db is None:
            return out
        try:
            by_rule: dict[str, list[str]] = {}
            for rule, oid in keys:
                by_rule.setdefault(rule, []).append(oid)
            for rule, oids in by_rule.items():
                for i in range(0, len(oids), 500):
                    batch = oids[i : i + 500]
                    sql = f"SELECT oid, data FROM astgrep WHERE rule = ? AND oid IN ({','.join('?' * len(batch))})"
                    for oid, data in db.execute(sql, [rule, *batch]):
                        out[(rule, oid)] = [(int(a), int(b), str(c), str(d)) for a, b, c, d in json.loads(data)]
        except (sqlite3.Error, ValueError):
            return {}
        finally:
            db.close()
        return out

    def put(self, rows: Mapping[tuple[str, str], list[tuple[int, int, str, str]]]) -> None:
        if not rows:
            return
        db = self._connect()
        if db is None:
            return
        try:
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR REPLACE INTO astgrep VALUES (?, ?, ?)",
                    [(rule, oid, json.dumps(found, ensure_ascii=False)) for (rule, oid), found in rows.items()],
                )
        except sqlite3.Error:
            pass
        finally:
            db.close()


def _run(
    ctx: CheckContext, configs: list[tuple[dict[str, Any], str]], jobs: list[tuple[str, str, str, tuple[int, ...]]]
) -> Iterator[tuple[list[tuple[int, str, int, int, str, str]], list[str]]]:
    """Match the jobs, in worker processes when there are many (ast-grep holds the GIL)."""
    if ctx.workers < 2 or len(jobs) < PARALLEL_THRESHOLD:
        yield _run_jobs(ctx.repo, configs, jobs)
        return
    # large blobs first, in small chunks, so the workers finish together
    jobs = sorted(jobs, key=lambda j: -_size(ctx.repo, j[0]))
    chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
    methods = multiprocessing.get_all_start_methods()
    safe_fork = "fork" in methods and threading.active_count() == 1
    mp = multiprocessing.get_context("fork" if safe_fork else "forkserver" if "forkserver" in methods else "spawn")
    with ProcessPoolExecutor(
        ctx.workers, mp_context=mp, initializer=_init_worker, initargs=(ctx.repo.path, configs)
    ) as pool:
        yield from pool.map(_run_chunk, chunks)


def _size(repo: pygit2.Repository, oid: str) -> int:
    try:
        return int(repo.odb.read_header(oid)[1])
    except (KeyError, ValueError, pygit2.GitError):
        return 0


def _blame(message: str) -> str:
    for key in ("constraints", "utils", "transform"):
        if f"`{key}`" in message:
            return f"check.{key}"
    return "check.rule"


# --- running, in this process or in workers -----------------------------------------------------------

_worker: tuple[pygit2.Repository, list[tuple[dict[str, Any], str]]] | None = None


def _init_worker(repo_path: str, configs: list[tuple[dict[str, Any], str]]) -> None:
    global _worker
    _worker = (pygit2.Repository(repo_path), configs)


def _run_chunk(
    jobs: list[tuple[str, str, str, tuple[int, ...]]],
) -> tuple[list[tuple[int, str, int, int, str, str]], list[str]]:
    assert _worker is not None
    return _run_jobs(_worker[0], _worker[1], jobs)


def _run_jobs(
    repo: pygit2.Repository,
    configs: list[tuple[dict[str, Any], str]],
    jobs: list[tuple[str, str, str, tuple[int, ...]]],
) -> tuple[list[tuple[int, str, int, int, str, str]], list[str]]:
    from ast_grep_py import SgRoot

    found: list[tuple[int, str, int, int, str, str]] = []
    failed: list[str] = []
    for oid, path, lang, indices in jobs:
        blob = repo[oid]
        if not isinstance(blob, pygit2.Blob) or blob.size > MAX_FILE_SIZE:
            continue
        data = blob.data
        if b"\0" in data:
            continue
        source = data.decode("utf-8", errors="replace")
        try:
            root = SgRoot(source, lang).root()
            for i in indices:
                config, template = configs[i]
                for node in root.find_all(config):  # type: ignore[call-overload]
                    r = node.range()
                    found.append(
                        (i, oid, r.start.line + 1, r.end.line + 1, node.text(), _interpolate(template, node, source))
                    )
        except BaseException as exc:
            if _fatal(exc):
                raise
            failed.append(f"{oid} {path} ({type(exc).__name__})")
    return found, failed


def _interpolate(template: str, node: Any, source: str) -> str:
    if "$" not in template:
        return template

    def fill(m: re.Match[str]) -> str:
        if m.group(1):
            nodes = node.get_multiple_matches(m.group(1))
            if not nodes:
                return m.group(0)
            return source[nodes[0].range().start.index : nodes[-1].range().end.index]
        single = node.get_match(m.group(2))
        return single.text() if single is not None else m.group(0)

    return _VAR.sub(fill, template)
