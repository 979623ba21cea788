"""The code index of a revision: definitions, fingerprints, imports and calls of every file.

Files are read from git objects (pygit2), never from the working tree, so any revision can be
indexed. Two caches in one SQLite file make re-indexing cheap:

* ``blobs``: the parse result of each (blob id, language); a blob parsed once is never parsed
  again, whichever revision or path it appears under;
* ``trees``: for each root tree id, the list of indexed files (path, blob, language) and the skip
  counts, one compressed row; a warm :meth:`CodeIndex.snapshot` reads that row and nothing else.
  Definitions are decoded lazily, per file, when asked for.

Two more make a warm read free of pygit2 (whose import alone costs ~0.2 s):

* ``commits``: commit id → (root tree id, commit time), filled when a commit is first resolved;
  ``HEAD``, branch names and full ids of known commits are then resolved from the ref files;
* ``memo``: derived facts that are a function of the revisions named in their key (where an
  anchor is at a commit, renames between two commits, who imports a module in a tree).

All are keyed by :data:`CACHE_VERSION` and the versions of py-tree-sitter and the grammar
packages: a change to any (tokenisation, grammars) empties the cache.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from .errors import ComindError
from .git import discover_git, has_no_commit, head_commit, read_ref

if TYPE_CHECKING:  # both imported where used: a warm `comind why` reads neither (~60 ms together)
    import pygit2

    from .symbols import Call, Definition, FileSymbols, Import

CACHE_VERSION = "11"  # 4: C, C++, Ruby and PHP read (trees indexed before left their files out); 5: C#;
# 6: Kotlin; 7: Rust's `self::` and `super::` paths in an inline `mod` read from the file's module;
# 8: a comment in a Rust `use` is no name; 9: C++'s `MACRO void ns::f()` is `ns.f`, not `void.f`;
# 10: a tree's blobs the clone lacked are kept, and once one is fetched its tree is indexed again (a
# tree indexed before left those files out for good); 11: a C++ class with an export macro
# (`class LIB_API Box {…}`) is a class with its members, no longer a function `Box`
MAX_FILE_SIZE = 1 << 20
# Processes that parse: this one and WORKERS - 1 workers (ast-grep scans with every core too).
WORKERS = min(8, max(2, os.cpu_count() or 2))
PARALLEL_THRESHOLD = 48  # new blobs to parse before worker processes pay for their start-up
CHUNK = 24  # files per task at most (see _chunks): tasks are pulled, so the workers end together

_SYMLINK, _GITLINK = 0o120000, 0o160000
_MISSING = "missing-blobs"  # memo kind: a tree's blob ids this clone lacked when it was indexed
_SKIPS = ("unsupported", "large", "binary", "symlink", "submodule", "missing")

Progress = Callable[[int, int], None]


class FileEntry(NamedTuple):  # a tuple: thousands are made per snapshot
    blob: str  # hex object id
    language: str


class IndexStats:
    """What one :meth:`CodeIndex.snapshot` did. ``files`` counts indexed files (with or
    without a parse error); ``parsed + cached`` = distinct blobs behind them.

    A plain class, not a dataclass: importing dataclasses costs a warm `comind why` ~10 ms."""

    __slots__ = ("cached", "errors", "files", "parsed", "skipped")

    def __init__(
        self, files: int = 0, parsed: int = 0, cached: int = 0, errors: int = 0, skipped: dict[str, int] | None = None
    ) -> None:
        self.files = files
        self.parsed = parsed
        self.cached = cached
        self.errors = errors
        self.skipped: dict[str, int] = dict.fromkeys(_SKIPS, 0) if skipped is None else skipped

    def __repr__(self) -> str:
        return (
            f"IndexStats(files={self.files}, parsed={self.parsed}, cached={self.cached}, "
            f"errors={self.errors}, skipped={self.skipped})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexStats) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces


# --- payload encoding: compact JSON lists, one row per blob ------------------------------------


def _encode(fs: FileSymbols) -> str:
    return json.dumps(
        [
            [
                [d.qualname, d.name, d.kind, d.start_line, d.end_line, d.sig_hash, d.body_hash, d.shape_hash]
                for d in fs.definitions
            ],
            [[i.module, list(i.names), i.alias, i.line, i.level] for i in fs.imports],
            [[c.caller, c.callee, c.line] for c in fs.calls],
            fs.error,
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )


def _decode(language: str, payload: str) -> FileSymbols:
    from .symbols import Call, Definition, FileSymbols, Import

    defs, imports, calls, error = json.loads(payload)
    return FileSymbols(
        language,
        tuple(Definition(*d) for d in defs),
        tuple(Import(m, tuple(n), a, line, lvl) for m, n, a, line, lvl in imports),
        tuple(Call(*c) for c in calls),
        error,
    )


# --- parsing, in this process or in workers ---------------------------------------------------


def _parse_one(odb: pygit2.Odb, oid: str, lang: str, path: str) -> tuple[str, str, str, str]:
    """(oid, language, status, payload); status is ok, error, large, binary or missing (a blob
    this copy of the repository lacks: a partial clone, an incomplete mirror)."""
    from .languages import is_binary, parse_file

    try:  # the object database, not repo[oid]: half the time (no object wrapper, one copy less)
        data = odb.read(oid)[1]
    except KeyError:
        return oid, lang, "missing", ""
    if len(data) > MAX_FILE_SIZE:
        return oid, lang, "large", ""
    if is_binary(data):
        return oid, lang, "binary", ""
    fs = parse_file(path, data)
    return oid, lang, "error" if fs.error else "ok", _encode(fs)


def _blob_size(repo: pygit2.Repository, oid: str) -> int:
    try:
        return int(repo.odb.read_header(oid)[1])
    except (KeyError, ValueError):  # missing here (pygit2.NotFoundError is a KeyError): `_parse_one` says so
        return 0


def _take(counter: Any) -> int:
    """The index of the next task nobody has taken (``counter`` is a shared, locked int)."""
    with counter.get_lock():
        i: int = counter.value
        counter.value = i + 1
    return i


def _share(repo_path: str, tasks: list[list[tuple[str, str, str]]], counter: Any, results: Any, worker: int) -> None:
    """A worker process: parse the next task nobody has taken until none is left; send each
    task's rows, then ("done", worker), or ("error", exception) and stop."""
    import pickle

    import pygit2

    try:
        odb = pygit2.Repository(repo_path).odb
        while (i := _take(counter)) < len(tasks):
            results.put(("rows", [_parse_one(odb, oid, lang, path) for oid, lang, path in tasks[i]]))
    except BaseException as exc:  # handed to the parent, which raises it
        try:
            pickle.dumps(exc)
        except Exception:
            exc = RuntimeError(f"parse worker failed: {type(exc).__name__}: {exc}")
        results.put(("error", exc))
        return
    results.put(("done", worker))


def _chunks(
    todo: list[tuple[str, str, str]], sizes: Mapping[str, int], workers: int
) -> list[list[tuple[str, str, str]]]:
    """``todo`` (largest first) in tasks of about the same size in bytes, at most CHUNK files
    each: a task of the largest files alone would keep one process busy after the others end."""
    target = max(1, sum(sizes.get(oid, 0) for oid, _, _ in todo) // (workers * 12))
    chunks: list[list[tuple[str, str, str]]] = []
    chunk: list[tuple[str, str, str]] = []
    size = 0
    for item in todo:
        chunk.append(item)
        size += sizes.get(item[0], 0)
        if size >= target or len(chunk) >= CHUNK:
            chunks.append(chunk)
            chunk, size = [], 0
    if chunk:
        chunks.append(chunk)
    return chunks


# --- the index ---------------------------------------------------------------------------------


class CodeIndex:
    """Indexes revisions of one repository, caching parse results in a SQLite file."""

    def __init__(
        self,
        repo_path: str | os.PathLike[str],
        cache_path: str | os.PathLike[str] | None = None,
        *,
        workers: int = WORKERS,
    ) -> None:
        self._repo: pygit2.Repository | None = None
        found = discover_git(Path(os.fspath(repo_path)))
        if found is None:  # let libgit2 have the last word on what a repository is
            self._open(os.fspath(repo_path))
            assert self._repo is not None
            found = (Path(self._repo.path), Path(self._repo.path))
        self.head_dir, self.git_dir = found
        self.repo_path = str(self.head_dir) + "/"
        self.cache_path = Path(cache_path) if cache_path else self.head_dir / "comind" / "index.sqlite"
        self.workers = workers
        self._db: sqlite3.Connection | None = None
        # blobs reads found missing (a partial clone's promisor away): what was computed since is not final
        self.unread = 0

    @property
    def repo(self) -> pygit2.Repository:
        """The pygit2 repository, opened on first use: warm reads never need it."""
        if self._repo is None:
            self._open(self.repo_path)
        assert self._repo is not None
        return self._repo

    def _open(self, path: str) -> None:
        import pygit2

        try:
            self._repo = pygit2.Repository(path)
        except pygit2.GitError as exc:
            raise ComindError(f"not a git repository: {path}") from exc

    # SQLite ------------------------------------------------------------------------------------
    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.cache_path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript("""
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS blobs (oid TEXT NOT NULL, lang TEXT NOT NULL,
                    status TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (oid, lang)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS trees (oid TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS commits (oid TEXT PRIMARY KEY, tree TEXT NOT NULL,
                    time INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS memo (kind TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                    PRIMARY KEY (kind, key)) WITHOUT ROWID;
            """)
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('version', 'source')"))
            source = meta.get("source", "")
            prefix, _, dist_infos = source.partition("\0")
            # Where the stamp's parser packages were found: while those folders exist (an upgrade
            # removes them) in the same environment, the stamp holds and need not be computed again.
            if not (
                prefix == sys.prefix
                and dist_infos
                and meta.get("version", "").startswith(f"{CACHE_VERSION}/")
                and all(os.path.isdir(d) for d in dist_infos.split("\0"))
            ):
                versions, dist_infos = _parser_versions()
                stamp = f"{CACHE_VERSION}/{versions}"
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    if meta.get("version") != stamp:
                        for table in ("blobs", "trees", "commits", "memo"):
                            db.execute(f"DELETE FROM {table}")
                    db.executemany(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                        [("version", stamp), ("source", f"{sys.prefix}\0{dist_infos}")],
                    )
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> CodeIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # revisions ---------------------------------------------------------------------------------
    def resolve(self, rev: str) -> pygit2.Commit:
        """The commit a revision names, through pygit2 (recorded in the commits table)."""
        import pygit2

        try:
            commit = self.repo.revparse_single(rev).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            if has_no_commit(self.repo):  # `git init` and nothing more: HEAD names no commit yet
                raise ComindError(f"unknown revision '{rev}': the repository has no commit yet") from exc
            raise ComindError(f"unknown revision '{rev}'") from exc
        self._remember_commit(str(commit.id), str(commit.tree_id), int(commit.commit_time))
        return commit

    def commit_id(self, rev: str) -> str:
        """The commit id of a revision. ``HEAD``, branch and tag names and full ids of commits seen
        before are read from the ref files and the cache, without pygit2."""
        found = self._known_commit(rev)
        return found if found is not None else str(self.resolve(rev).id)

    def commit_info(self, rev: str) -> tuple[str, str, int]:
        """(commit id, root tree id, commit time) of a revision."""
        commit = self.commit_id(rev)
        row = self._commit_row(commit)
        if row is None:
            self.resolve(commit)
            row = self._commit_row(commit)
            assert row is not None
        return commit, row[0], row[1]

    def has_commit(self, commit: str) -> bool:
        """Whether the object exists in this clone and is a commit (or peels to one)."""
        if self._commit_row(commit) is not None:
            return True
        try:
            self.resolve(commit)
        except ComindError:
            return False
        return True

    def _commit_row(self, commit: str) -> tuple[str, int] | None:
        row = self.db.execute("SELECT tree, time FROM commits WHERE oid = ?", (commit,)).fetchone()
        return (str(row[0]), int(row[1])) if row is not None else None

    def _remember_commit(self, commit: str, tree: str, when: int) -> None:
        if self._commit_row(commit) is None:
            self.db.execute("INSERT OR IGNORE INTO commits VALUES (?, ?, ?)", (commit, tree, when))

    def _known_commit(self, rev: str) -> str | None:
        """A commit id for ``rev`` from the ref files, if it is one the cache knows (else None)."""
        candidate: str | None = None
        if _HEX.fullmatch(rev):
            candidate = rev.lower()
        elif rev == "HEAD":
            candidate = head_commit(self.head_dir, self.git_dir)
        elif (
            _REF_NAME.fullmatch(rev)
            and ".." not in rev
            and not (self.git_dir / rev).exists()
            and not (self.head_dir / rev).exists()
        ):
            for ref in (
                f"refs/{rev}",
                f"refs/tags/{rev}",
                f"refs/heads/{rev}",
                f"refs/remotes/{rev}",
                f"refs/remotes/{rev}/HEAD",
            ):
                candidate = read_ref(self.git_dir, ref)
                if candidate is not None:
                    break
        if candidate is not None and self._commit_row(candidate) is not None:
            return candidate
        return None  # an abbreviation, an expression (HEAD~2), a tag object or a commit not seen yet

    def snapshot(self, rev: str, progress: Progress | None = None) -> Snapshot:
        commit_id, tree_id, _ = self.commit_info(rev)
        row = self.db.execute("SELECT data FROM trees WHERE oid = ?", (tree_id,)).fetchone()
        if row is not None and not self._fetched_since(tree_id):
            snapshot = Snapshot(self, commit_id, tree_id, None, None, row=row[0])  # decoded on first use
            if progress:
                progress(len(snapshot.files), len(snapshot.files))
            return snapshot
        return self._index(commit_id, tree_id, progress)

    def _fetched_since(self, tree_id: str) -> bool:
        """Whether a blob the tree's files lacked when it was indexed is here now (a partial clone's
        fetch brought it): its cached file list, which left that file out, is then out of date."""
        missing = self.memo_get(_MISSING, [tree_id]).get(tree_id)
        if not missing:
            return False
        import pygit2

        odb = self.repo.odb
        return any(pygit2.Oid(hex=oid) in odb for oid in missing.split())

    # memo: derived facts keyed by the revisions they depend on --------------------------------------
    def memo_get(self, kind: str, keys: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            batch = keys[i : i + 500]
            sql = f"SELECT key, value FROM memo WHERE kind = ? AND key IN ({','.join('?' * len(batch))})"
            out.update(self.db.execute(sql, [kind, *batch]).fetchall())
        return out

    def memo_put(self, kind: str, items: Mapping[str, str]) -> None:
        if not items:
            return
        db = self.db
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO memo VALUES (?, ?, ?)", [(kind, k, v) for k, v in items.items()])

    def _index(self, commit_id: str, tree_id: str, progress: Progress | None) -> Snapshot:
        from .languages import language_for_path

        stats = IndexStats()
        candidates: dict[str, FileEntry] = {}
        tree = cast("pygit2.Tree", self.repo[tree_id])
        for path, oid, mode in _walk_tree(self.repo, tree):
            if mode == _SYMLINK:
                stats.skipped["symlink"] += 1
            elif mode == _GITLINK:
                stats.skipped["submodule"] += 1
            elif (lang := language_for_path(path)) is None:
                stats.skipped["unsupported"] += 1
            else:
                candidates[path] = FileEntry(oid, lang.name)

        wanted = {(e.blob, e.language): p for p, e in candidates.items()}
        status = self._cached_status(wanted)
        stats.cached = len(status)
        todo = [(oid, lang, path) for (oid, lang), path in wanted.items() if (oid, lang) not in status]
        sizes: dict[str, int] = {}
        if len(todo) >= PARALLEL_THRESHOLD:  # largest first: the workers then end together
            sizes = {oid: _blob_size(self.repo, oid) for oid, _, _ in todo}
            todo.sort(key=lambda t: (-sizes[t[0]], t[2]))
        else:
            todo.sort(key=lambda t: t[2])
        total, done = len(candidates), len(candidates) - len(todo)
        if progress:
            progress(done, total)

        rows: list[tuple[str, str, str, str]] = []
        for chunk in self._parse(todo, sizes):
            rows.extend(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
        status.update({(oid, lang): st for oid, lang, st, _ in rows})
        stats.parsed = len(rows)
        rows = [row for row in rows if row[2] != "missing"]  # not remembered: a fetch may bring it

        files: dict[str, FileEntry] = {}
        for path, entry in candidates.items():
            st = status[(entry.blob, entry.language)]
            if st in ("large", "binary", "missing"):
                stats.skipped[st] += 1
                continue
            files[path] = entry
            stats.errors += st == "error"
        stats.files = len(files)
        tree_row = _dump_tree_row(files, stats, status)
        missing = sorted({e.blob for e in candidates.values() if status[(e.blob, e.language)] == "missing"})
        db = self.db
        with db:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", rows)
            db.execute("INSERT OR REPLACE INTO trees VALUES (?, ?)", (tree_id, tree_row))
            if missing:  # what to look for before this row is used again (`_fetched_since`)
                db.execute("INSERT OR REPLACE INTO memo VALUES (?, ?, ?)", (_MISSING, tree_id, " ".join(missing)))
            else:
                db.execute("DELETE FROM memo WHERE kind = ? AND key = ?", (_MISSING, tree_id))
        return Snapshot(self, commit_id, tree_id, files, stats)

    def _cached_status(self, wanted: Mapping[tuple[str, str], str]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        oids = sorted({oid for oid, _ in wanted})
        for i in range(0, len(oids), 500):
            batch = oids[i : i + 500]
            sql = f"SELECT oid, lang, status FROM blobs WHERE oid IN ({','.join('?' * len(batch))})"
            for oid, lang, st in self.db.execute(sql, batch):
                if (oid, lang) in wanted:
                    found[(oid, lang)] = st
        return found

    def _parse(
        self, todo: list[tuple[str, str, str]], sizes: Mapping[str, int]
    ) -> Iterator[list[tuple[str, str, str, str]]]:
        odb = self.repo.odb
        if self.workers < 2 or len(todo) < PARALLEL_THRESHOLD:
            for i in range(0, len(todo), CHUNK):
                yield [_parse_one(odb, oid, lang, path) for oid, lang, path in todo[i : i + CHUNK]]
            return
        # ast-grep holds the GIL: use processes. Fork where it is safe (no other threads that
        # could hold a lock in the child): workers then need no re-import.
        import gc
        import multiprocessing
        import queue
        import threading

        tasks = _chunks(todo, sizes, self.workers)
        methods = multiprocessing.get_all_start_methods()
        safe_fork = "fork" in methods and threading.active_count() == 1
        ctx: Any = multiprocessing.get_context(
            "fork" if safe_fork else "forkserver" if "forkserver" in methods else "spawn"
        )
        # This process parses too (it is running anyway and pays no start-up), with WORKERS - 1
        # workers; each takes the next task, largest first, from a shared counter: they end
        # within a task of each other.
        counter, results = ctx.Value("l", 0), ctx.Queue()
        procs = [
            ctx.Process(target=_share, args=(self.repo_path, tasks, counter, results, k), daemon=True)
            for k in range(self.workers - 1)
        ]
        self.close()  # an open SQLite connection must not cross a fork
        if safe_fork:
            from .languages import LANGUAGES

            for lang in {LANGUAGES[lang] for _, lang, _ in todo}:  # loaded once here, not in every worker
                lang.load_grammar()

            gc.freeze()  # the collector in a child then leaves the parent's objects (their pages) alone
        try:
            for proc in procs:
                proc.start()
            running = set(range(len(procs)))
            while running:
                mine = _take(counter)
                if mine < len(tasks):
                    yield [_parse_one(odb, oid, lang, path) for oid, lang, path in tasks[mine]]
                while running:  # what the workers sent meanwhile; once this process is done, wait
                    try:
                        what, value = results.get(block=mine >= len(tasks), timeout=1)
                    except queue.Empty:
                        if mine < len(tasks):
                            break
                        if any(procs[k].exitcode is not None for k in running) and results.empty():
                            raise ComindError("a code index worker process died") from None
                        continue
                    if what == "rows":
                        yield value
                    elif what == "done":
                        running.discard(value)
                    else:
                        raise value
        finally:
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
                proc.join()
            if safe_fork:
                gc.unfreeze()

    # lazy reads for Snapshot ---------------------------------------------------------------------
    def _imports(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[Import, ...]]:
        from .symbols import Import

        keys = set(keys)
        out: dict[tuple[str, str], tuple[Import, ...]] = {}
        oids = sorted({oid for oid, _ in keys})
        for i in range(0, len(oids), 500):
            batch = oids[i : i + 500]
            sql = f"SELECT oid, lang, data FROM blobs WHERE oid IN ({','.join('?' * len(batch))})"
            for oid, lang, data in self.db.execute(sql, batch):
                if (oid, lang) in keys and data:
                    out[(oid, lang)] = tuple(
                        Import(m, tuple(n), a, line, lvl) for m, n, a, line, lvl in json.loads(data)[1]
                    )
        return out

    def _symbols(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], FileSymbols]:
        from .symbols import FileSymbols

        keys = set(keys)
        out: dict[tuple[str, str], FileSymbols] = {}
        oids = sorted({oid for oid, _ in keys})
        for i in range(0, len(oids), 500):
            batch = oids[i : i + 500]
            sql = f"SELECT oid, lang, data FROM blobs WHERE oid IN ({','.join('?' * len(batch))})"
            for oid, lang, data in self.db.execute(sql, batch):
                if (oid, lang) in keys:
                    out[(oid, lang)] = _decode(lang, data) if data else FileSymbols(lang)
        return out


_HEX = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_REF_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]*")


def _parser_versions() -> tuple[str, str]:
    """("tree-sitter 0.26.1 tree-sitter-go 0.25.0 …", their dist-info folders joined by NUL, or ""
    if one has none), from the folder names when there are (importlib.metadata costs ~30 ms)."""
    import importlib.util

    from .languages import LANGUAGES

    modules = sorted({"tree_sitter", *(lang.grammar[0] for lang in LANGUAGES.values())})
    versions, folders = [], []
    for module in modules:
        spec = importlib.util.find_spec(module)
        found = sorted(Path(spec.origin).parent.parent.glob(f"{module}-*.dist-info")) if spec and spec.origin else []
        if len(found) == 1:
            versions.append(f"{module} {found[0].name[len(module) + 1 : -len('.dist-info')]}")
            folders.append(str(found[0]))
        else:
            from importlib.metadata import version

            versions.append(f"{module} {version(module.replace('_', '-'))}")
    return " ".join(versions), "\0".join(folders) if len(folders) == len(modules) else ""


def _walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, str, int]]:
    for entry in tree:
        path = prefix + (entry.name or "")
        mode = entry.filemode
        if mode == 0o040000:
            yield from _walk_tree(repo, cast("pygit2.Tree", repo[entry.id]), path + "/")
        else:
            yield path, str(entry.id), mode


def _dump_tree_row(files: Mapping[str, FileEntry], stats: IndexStats, status: Mapping[tuple[str, str], str]) -> bytes:
    langs = sorted({e.language for e in files.values()})
    code = {lang: i for i, lang in enumerate(langs)}
    body: dict[str, Any] = {
        "langs": langs,
        "files": [
            [p, e.blob, code[e.language], int(status[(e.blob, e.language)] == "error")] for p, e in files.items()
        ],
        "skipped": stats.skipped,
    }
    return zlib.compress(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(), 1)


def _load_tree_row(data: bytes) -> tuple[dict[str, FileEntry], IndexStats]:
    body = json.loads(zlib.decompress(data))
    langs = body["langs"]
    files = {p: FileEntry(blob, langs[li]) for p, blob, li, _ in body["files"]}
    stats = IndexStats(files=len(files), errors=sum(err for *_, err in body["files"]), skipped=dict(body["skipped"]))
    stats.cached = len(set(files.values()))  # entries are (blob, language) tuples
    return files, stats


class Snapshot:
    """The code index of one commit. The file list (from the cached tree ``row``) is decoded and
    per-file symbols are read from the cache on first use: a question answered from the memo
    table needs neither."""

    def __init__(
        self,
        index: CodeIndex,
        commit: str,
        tree: str,
        files: dict[str, FileEntry] | None,
        stats: IndexStats | None,
        *,
        row: bytes | None = None,
    ) -> None:
        self.index = index
        self.commit = commit
        self.tree = tree
        self._files: Mapping[str, FileEntry] | None = files
        self._stats = stats
        self._row = row
        self._symbols: dict[str, FileSymbols] = {}
        self._by_body: dict[str, list[tuple[str, Definition]]] | None = None
        self._by_shape: dict[str, list[tuple[str, Definition]]] | None = None
        self._only: frozenset[str] | None = None

    @property
    def files(self) -> Mapping[str, FileEntry]:
        """Indexed path → (blob, language)."""
        if self._files is None:
            self._decode_row()
        assert self._files is not None
        return self._files

    @property
    def stats(self) -> IndexStats:
        if self._stats is None:
            self._decode_row()
        assert self._stats is not None
        return self._stats

    @property
    def incomplete(self) -> bool:
        """Whether files were left out for want of their blobs (a partial clone's promisor away): what
        is computed from this snapshot then holds until a fetch brings them, and is not cached."""
        return self.stats.skipped.get("missing", 0) > 0

    def _decode_row(self) -> None:
        assert self._row is not None
        files, self._stats = _load_tree_row(self._row)
        if self._files is None:
            self._files = files
        self._row = None

    def restricted(self, paths: Iterable[str]) -> Snapshot:
        """This snapshot with the symbols of ``paths`` only: every other file keeps its name and
        language (enough to name modules and resolve the imports of ``paths``) and has none."""
        view = Snapshot(self.index, self.commit, self.tree, dict(self.files), self.stats)
        view._only = frozenset(paths)
        view._symbols = self._symbols  # shared: loading a file for one loads it for both
        return view

    def whole(self) -> Snapshot:
        """This snapshot with every file's symbols (of a :meth:`restricted` view: the same cache)."""
        if self._only is None:
            return self
        view = Snapshot(self.index, self.commit, self.tree, dict(self.files), self.stats)
        view._symbols = self._symbols
        return view

    def symbols(self, path: str) -> FileSymbols | None:
        """Everything indexed for one file, or None if the file is not indexed."""
        from .symbols import FileSymbols

        if self._only is not None and path not in self._only:
            entry = self.files.get(path)
            return FileSymbols(entry.language) if entry is not None else None
        fs = self._symbols.get(path)
        if fs is None:
            entry = self.files.get(path)
            if entry is None:
                return None
            key = (entry.blob, entry.language)
            fs = self.index._symbols([key]).get(key, FileSymbols(entry.language))
            self._symbols[path] = fs
        return fs

    def _load_all(self) -> None:
        if self._only is not None:
            for path in self._only:
                self.symbols(path)
            return
        from .symbols import FileSymbols

        missing = {p: (e.blob, e.language) for p, e in self.files.items() if p not in self._symbols}
        if missing:
            loaded = self.index._symbols(missing.values())
            for path, key in missing.items():
                self._symbols[path] = loaded.get(key, FileSymbols(key[1]))

    def all_imports(self) -> dict[str, tuple[Import, ...]]:
        """Every indexed file's imports (of its paths, for a :meth:`restricted` view), without
        building the definitions and calls of files not loaded yet: what an import graph needs."""
        if type(self).all_symbols is not Snapshot.all_symbols:  # a subclass deciding what files hold
            return {p: fs.imports for p, fs in self.all_symbols().items()}
        if self._only is not None:
            return {p: fs.imports for p, fs in self.all_symbols().items()}
        missing = {p: (e.blob, e.language) for p, e in self.files.items() if p not in self._symbols}
        loaded = self.index._imports(missing.values()) if missing else {}
        return {p: (self._symbols[p].imports if p in self._symbols else loaded.get(missing[p], ())) for p in self.files}

    def definitions(self, path: str) -> tuple[Definition, ...]:
        fs = self.symbols(path)
        return fs.definitions if fs else ()

    def imports(self, path: str) -> tuple[Import, ...]:
        fs = self.symbols(path)
        return fs.imports if fs else ()

    def calls(self, path: str) -> tuple[Call, ...]:
        fs = self.symbols(path)
        return fs.calls if fs else ()

    def error(self, path: str) -> str | None:
        fs = self.symbols(path)
        return fs.error if fs else None

    def qualnames(self, path: str) -> list[str]:
        return [d.qualname for d in self.definitions(path)]

    def find(self, path: str, qualname: str) -> Definition | None:
        return next((d for d in self.definitions(path) if d.qualname == qualname), None)

    def innermost(self, path: str, line: int) -> Definition | None:
        """The most deeply nested definition whose span holds ``line``."""
        best: Definition | None = None
        for d in self.definitions(path):
            if d.start_line <= line <= d.end_line and (
                best is None or (d.start_line, -d.end_line) > (best.start_line, -best.end_line)
            ):
                best = d
        return best

    def all_symbols(self) -> dict[str, FileSymbols]:
        """Every indexed file's symbols (loads them all); for a :meth:`restricted` view, those of
        its paths."""
        self._load_all()
        if self._only is not None:
            return {p: self._symbols[p] for p in sorted(self._only) if p in self.files}
        return {p: self._symbols[p] for p in self.files}

    def _hash_maps(self) -> tuple[dict[str, list[tuple[str, Definition]]], dict[str, list[tuple[str, Definition]]]]:
        if self._by_body is None or self._by_shape is None:
            by_body: dict[str, list[tuple[str, Definition]]] = {}
            by_shape: dict[str, list[tuple[str, Definition]]] = {}
            for path, fs in sorted(self.all_symbols().items()):
                for d in fs.definitions:
                    by_body.setdefault(d.body_hash, []).append((path, d))
                    by_shape.setdefault(d.shape_hash, []).append((path, d))
            self._by_body, self._by_shape = by_body, by_shape
        return self._by_body, self._by_shape

    def by_body_hash(self, body_hash: str) -> list[tuple[str, Definition]]:
        return list(self._hash_maps()[0].get(body_hash, ()))

    def by_shape_hash(self, shape_hash: str) -> list[tuple[str, Definition]]:
        return list(self._hash_maps()[1].get(shape_hash, ()))

    def blob_data(self, path: str) -> bytes:
        """The bytes of any file at this commit (indexed or not); KeyError if absent."""
        import pygit2

        entry = self.files.get(path)
        try:
            obj = (
                self.index.repo[entry.blob]
                if entry is not None
                else self.index.repo.revparse_single(f"{self.commit}:{path}")
            )
        except KeyError:
            self.index.unread += entry is not None  # indexed, so its blob was here; else the path is not
            raise KeyError(path) from None
        except (ValueError, pygit2.GitError):
            raise KeyError(path) from None
        if not isinstance(obj, pygit2.Blob):
            raise KeyError(path)
        return bytes(obj.data)

    def blob_text(self, path: str) -> str:
        return self.blob_data(path).decode("utf-8", errors="replace")

    def body_tokens(self, path: str, qualname: str) -> list[str] | None:
        """The normalised body tokens of one definition (re-parses the file)."""
        if path not in self.files:
            return None
        from .languages import body_tokens

        return body_tokens(path, self.blob_data(path), qualname)
