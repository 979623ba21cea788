"""The change under review: what a merge request adds, removes and touches, from git objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.codeindex import CodeIndex, Snapshot

MAX_PATCH_BYTES = 1 << 20  # a blob this large is treated as binary: listed, not read line by line


@dataclass
class ChangedFile:
    path: str  # path at head ("" when deleted)
    old_path: str  # path at base ("" when added)
    status: str  # A, M, D, R, C, T
    added: set[int] = field(default_factory=set)  # line numbers at head
    removed: set[int] = field(default_factory=set)  # line numbers at base
    binary: bool = False


@dataclass
class Change:
    base: str
    head: str
    files: list[ChangedFile]

    @property
    def paths(self) -> set[str]:
        """Every path the change touches, at base and at head."""
        return {p for f in self.files for p in (f.path, f.old_path) if p}

    def added_lines(self, path: str) -> set[int]:
        return next((f.added for f in self.files if f.path == path), set())

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


def compute_change(index: CodeIndex, base: str, head: str, progress: object = None) -> Change:
    """The diff base..head with rename detection and per-line numbers (no context lines)."""
    import pygit2

    repo = index.repo
    old = repo[base].peel(pygit2.Commit).tree
    new = repo[head].peel(pygit2.Commit).tree
    diff = old.diff_to_tree(new, context_lines=0)
    diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)
    files = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        status = delta.status_char()
        changed = ChangedFile(
            path="" if status == "D" else delta.new_file.path,
            old_path="" if status == "A" else delta.old_file.path,
            status=status,
            binary=delta.is_binary or max(delta.old_file.size, delta.new_file.size) > MAX_PATCH_BYTES,
        )
        if not changed.binary:
            for hunk in patch.hunks:
                for line in hunk.lines:
                    if line.origin == "+":
                        changed.added.add(line.new_lineno)
                    elif line.origin == "-":
                        changed.removed.add(line.old_lineno)
        files.append(changed)
    return Change(str(repo[base].id), str(repo[head].id), files)
