"""Uncommitted changes as a commit, so that everything that reads git objects reads them too.

The working tree (tracked, modified and untracked files, .gitignore honoured) or the index is
written as a tree and a commit whose parent is HEAD, with a fixed identity and HEAD's own dates:
the same files always make the same commit, so a second preflight finds every cache warm. The
commit is on no branch and no ref (as `git stash create` makes one); git's gc drops it in time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from comind.errors import ComindError

IDENTITY = ("comind preflight", "preflight@comind.invalid")


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, env=env)
    except subprocess.CalledProcessError as exc:
        raise ComindError(f"git {' '.join(args)}: {exc.stderr.strip() or 'failed'}") from None
    return done.stdout.strip()


def uncommitted_commit(root: Path, head_dir: Path, base: str, *, staged: bool) -> str:
    """The commit (parent `base`) holding the working tree, or with `staged` the index."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE")}
    when = _git(root, "show", "-s", "--format=%ct", base, env=env)
    env |= {
        "GIT_AUTHOR_NAME": IDENTITY[0],
        "GIT_AUTHOR_EMAIL": IDENTITY[1],
        "GIT_COMMITTER_NAME": IDENTITY[0],
        "GIT_COMMITTER_EMAIL": IDENTITY[1],
        "GIT_AUTHOR_DATE": f"@{when} +0000",
        "GIT_COMMITTER_DATE": f"@{when} +0000",
    }
    if staged:
        tree = _git(root, "write-tree", env=env)
    else:
        with tempfile.TemporaryDirectory(prefix="comind-preflight-") as scratch:
            index = Path(scratch) / "index"
            if (head_dir / "index").is_file():  # its stat data makes `add -A` read only what changed
                shutil.copyfile(head_dir / "index", index)
            env["GIT_INDEX_FILE"] = str(index)
            _git(root, "add", "-A", "--", ".", env=env)
            tree = _git(root, "write-tree", env=env)
            del env["GIT_INDEX_FILE"]
    what = "the staged change" if staged else "the working tree"
    return _git(root, "commit-tree", tree, "-p", base, "-m", f"comind preflight: {what}", env=env)
