"""What a check sees at a revision (:class:`CheckContext`) and which paths a change touched
(:class:`TouchedPaths`), each computed once and cached."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from comind.codeindex import Snapshot
from comind.git import changed_paths, regular_files

if TYPE_CHECKING:
    from comind.codeindex import CodeIndex, Snapshot
    from comind.deps import Dependency, DependencyScan
    from comind.graph import ImportGraph
    from comind.symbols import FileSymbols


@dataclass(slots=True)
class TouchedPaths:
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
        self.change: TouchedPaths | None = None
        self.base: str | None = None
        self.head: str | None = None
        self.cache: dict[Any, Any] = {}  # for batching check types (semgrep runs base and head at once)
        self._commits: dict[str, str] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._graphs: dict[Any, ImportGraph] = {}
        self._deps: dict[str, DependencyScan] = {}
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

    # graphs, dependencies and symbols are imported where first needed: most checks need none
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

    def named_graph(self, revision: str) -> ImportGraph:
        """A graph of the revision naming every module: one already built, whole or partial (both
        name modules from the whole file list), else one with no edges, which reads no symbols."""
        commit = self.commit(revision)
        for key, graph in self._graphs.items():
            if key == commit or (isinstance(key, tuple) and key[0] == commit):
                return graph
        return self.partial_graph(commit, frozenset())

    def dependencies(self, revision: str) -> list[Dependency]:
        return self.dependency_scan(revision).dependencies

    def dependency_scan(self, revision: str) -> DependencyScan:
        """The revision's dependencies and the manifests and lockfiles that could not be read."""
        from comind.deps import scan

        commit = self.commit(revision)
        found = self._deps.get(commit)
        if found is None:
            obj = self.repo[commit]
            assert isinstance(obj, pygit2.Commit)
            found = self._deps[commit] = scan(obj)
        return found

    def tree_files(self, revision: str) -> dict[str, str]:
        """Every regular file of the revision: path → blob id (no symlinks or submodules)."""
        commit = self.commit(revision)
        files = self._trees.get(commit)
        if files is None:
            obj = self.repo[commit]
            assert isinstance(obj, pygit2.Commit)
            files = self._trees[commit] = dict(regular_files(self.repo, obj.tree))
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
    from comind.symbols import FileSymbols

    class Partial(Snapshot):
        def whole(self) -> Snapshot:
            return snapshot

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


def change_of(base: str, head: str, files: Iterable[tuple[str, str | None, str]]) -> TouchedPaths:
    """The TouchedPaths of a diff given as (path, old path or None, status) per file, status one of
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
    return TouchedPaths(base, head, frozenset(head_paths), frozenset(base_paths), renames)


def remember_change(index: CodeIndex, change: TouchedPaths) -> None:
    """Keep what a change touched in the index cache, for every later context of that change."""
    value = json.dumps([sorted(change.head_paths), sorted(change.base_paths), change.renames])
    index.memo_put("change", {f"{change.base}:{change.head}": value})


def recall_change(index: CodeIndex, base: str, head: str) -> TouchedPaths | None:
    key = f"{base}:{head}"
    found = index.memo_get("change", [key]).get(key)
    if found is None:
        return None
    head_paths, base_paths, renames = json.loads(found)
    return TouchedPaths(base, head, frozenset(head_paths), frozenset(base_paths), dict(renames))


def diff_change(repo: pygit2.Repository, base: str, head: str) -> TouchedPaths:
    """The paths a change touched, with renames (git's default 50 % similarity)."""
    return change_of(base, head, changed_paths(repo, base, head))
