"""The change under review: what a merge request adds, removes and touches, from git objects.

It is the change's approach fingerprint (`comind.harvest.approach`: one diff, normalised lines with
their line numbers), seen per file: the dead-end matcher compares it with attempts, and the other
producers ask which lines and symbols it touches.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from comind.checks.context import change_of, remember_change
from comind.harvest.approach import Approach, approach_of_range

if TYPE_CHECKING:
    import pygit2

    from comind.codeindex import CodeIndex, Snapshot


@dataclass(frozen=True)
class ChangedFile:
    path: str  # path at head ("" when deleted)
    old_path: str  # path at base ("" when added)
    status: str  # A, M, D, R, C, T
    added: frozenset[int]  # line numbers at head
    removed: frozenset[int]  # line numbers at base
    binary: bool


@dataclass(frozen=True)
class Change:
    base: str
    head: str
    approach: Approach

    @cached_property
    def files(self) -> list[ChangedFile]:
        out = []
        for f in self.approach.files:
            out.append(
                ChangedFile(
                    path="" if f.status == "D" else f.path,
                    old_path="" if f.status == "A" else (f.old_path or f.path),
                    status=f.status,
                    added=frozenset(ln.lineno for ln in f.added),
                    removed=frozenset(ln.lineno for ln in f.removed),
                    binary=f.binary or f.skipped,
                )
            )
        return out

    @cached_property
    def paths(self) -> set[str]:
        """Every path the change touches, at base and at head."""
        return {p for f in self.files for p in (f.path, f.old_path) if p}

    @cached_property
    def _added(self) -> dict[str, frozenset[int]]:
        return {f.path: f.added for f in self.files if f.path}

    def added_lines(self, path: str) -> frozenset[int]:
        return self._added.get(path, frozenset())

    def unread(self, repo: pygit2.Repository) -> list[str]:
        """The paths of changed files whose contents, at base or at head, this clone lacks (a
        partial clone whose promisor could not be reached, a clone missing objects): their lines,
        and the symbols they touch, are not known."""
        import pygit2

        trees = {}
        for side, commit in (("base", self.approach.base), ("head", self.approach.head)):
            trees[side] = repo[commit].peel(pygit2.Tree) if commit else None
        odb, out = repo.odb, []
        for f in self.files:
            if not f.binary:  # its lines were read: both sides are here
                continue
            for side, path in (("base", f.old_path), ("head", f.path)):
                tree = trees[side]
                entry = tree[path] if tree is not None and path and path in tree else None
                if entry is not None and entry.filemode != pygit2.enums.FileMode.COMMIT and entry.id not in odb:
                    out.append(f.path or f.old_path)
                    break
        return sorted(out)

    def touched_symbols(self, head: Snapshot, base: Snapshot) -> set[tuple[str, str]]:
        """(path, qualname) of the definitions at head holding added lines and at base holding
        removed lines: what the change touches, by name."""
        touched: set[tuple[str, str]] = set()
        for f in self.files:
            for snapshot, path, lines in ((head, f.path, f.added), (base, f.old_path, f.removed)):
                if not path or not lines:
                    continue
                for d in snapshot.definitions(path):
                    if any(d.start_line <= n <= d.end_line for n in lines):
                        touched.add((path, d.qualname))
        return touched


def compute_change(index: CodeIndex, base: str, head: str) -> Change:
    """The diff base..head (base is already the merge base), with renames and line numbers.

    What it touched is kept in the index cache, so the constraint checks' context
    (:meth:`comind.checks.context.CheckContext.set_change`) reads it instead of diffing again."""

    change = Change(base, head, approach_of_range(index.repo, base, head))
    if change.approach.base == base:  # base..head had a merge base: the diff the checks would make
        remember_change(index, change_of(base, head, ((f.path, f.old_path, f.status) for f in change.approach.files)))
    return change
