"""Uncommitted changes as a commit, so that everything that reads git objects reads them too.

The working tree (tracked, modified and untracked files, .gitignore honoured) or the index is
written as a tree and a commit whose parent is HEAD, with a fixed identity and HEAD's own dates:
the same files always make the same commit, so a second preflight finds every cache warm. The
commit is on no branch and no ref (as `git stash create` makes one); git's gc drops it in time.

The tree is git's work (`git add -A` into a copy of the index, then `git write-tree`), which
needs none of comind: `PendingTree` starts it in a thread before the check machinery is imported,
so the two run side by side. This module imports nothing heavy for that reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from comind.errors import ComindError
from comind.git import error_line

if TYPE_CHECKING:
    import pygit2

IDENTITY = ("comind preflight", "preflight@comind.invalid")


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, env=env)
    except subprocess.CalledProcessError as exc:  # git's lines (a failed fetch's advice too): one of ours
        raise ComindError(f"git {' '.join(args)}: {error_line(exc.stderr) or 'failed'}") from None
    return done.stdout.strip()


def _env(*, index: bool = False) -> dict[str, str]:
    """The environment git runs in here; with `index`, the GIT_INDEX_FILE git names (a pre-commit
    hook of `git commit -a` or `git commit PATH`: what is staged is in `index.lock`)."""
    drop = ("GIT_DIR", "GIT_WORK_TREE") if index else ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def write_tree(root: Path, head_dir: Path, *, staged: bool) -> str:
    """The id of the tree holding the working tree, or with `staged` the index (git writes it)."""
    if staged:
        return _git(root, "write-tree", env=_env(index=True))
    env = _env()
    with tempfile.TemporaryDirectory(prefix="comind-preflight-") as scratch:
        index = Path(scratch) / "index"
        if (head_dir / "index").is_file():  # its stat data makes `add -A` read only what changed
            shutil.copy2(head_dir / "index", index)  # with its mtime, which git's racy check reads
        env["GIT_INDEX_FILE"] = str(index)
        _git(root, "add", "-A", "--", ".", env=env)
        return _git(root, "write-tree", env=env)


class PendingTree:
    """`write_tree` in a thread, started now; `result()` waits for it and raises what it raised."""

    def __init__(self, root: Path, head_dir: Path, *, staged: bool) -> None:
        self.staged = staged
        self._tree = ""
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(root, head_dir), name="comind-write-tree")
        self._thread.start()

    def _run(self, root: Path, head_dir: Path) -> None:
        try:
            self._tree = write_tree(root, head_dir, staged=self.staged)
        except BaseException as exc:  # raised again in the caller's thread, by result()
            self._error = exc

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._tree


def uncommitted_commit(
    repo: pygit2.Repository, root: Path, head_dir: Path, base: str, *, staged: bool, tree: PendingTree | None = None
) -> str:
    """The commit (parent `base`) holding the working tree, or with `staged` the index; `tree`,
    when given, is that tree already being written."""
    import pygit2

    if tree is None or tree.staged != staged:
        tree = PendingTree(root, head_dir, staged=staged)
    parent = repo[base].peel(pygit2.Commit)
    when = parent.commit_time
    author = pygit2.Signature(IDENTITY[0], IDENTITY[1], when, 0)
    what = "the staged change" if staged else "the working tree"
    # the bytes `git commit-tree -m` writes: the message ends in a newline, no encoding header
    made = repo.create_commit(None, author, author, f"comind preflight: {what}\n", tree.result(), [parent.id])
    return str(made)
