"""Keep the harvest cache's term weights (`comind.weights`) up to date with the default branch.

The documents are the changes of the default branch's first-parent chain (a merge: its
first-parent diff) and the files each touched, read from one streamed `git log -p -U0` over the
changes not read yet (the index remembers the tip it read to). A first harvest reads the newest
`FIRST_CHANGES` changes only: a document frequency is a frequency, and a sample that large tells a
line in every test file from a rare identifier; every later change is read as it lands.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from comind.weights import Counts, WeightIndex

__all__ = ["FIRST_CHANGES", "changes", "update"]

FIRST_CHANGES = 1000


def changes(git_dir: str, tip: str, hide: list[str], limit: int | None = None) -> Iterator[tuple[str, list[set[str]]]]:
    """(commit, the normalised changed lines of each file it touched) for each change of the
    first-parent chain from `tip`, newest first, down to (not into) `hide`."""
    cmd = ["git", "--git-dir", git_dir, "log", "--first-parent", "-m", "--format=%x00%H", "-p", "-U0"]
    cmd += ["--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"]
    cmd += [f"-n{limit}"] if limit else []
    cmd += [tip, *(f"^{h}" for h in hide), "--"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    seen: dict[bytes, str] = {}  # raw line -> normalised: most lines recur, normalise each once
    sha: str | None = None
    files: list[set[str]] = []
    current: set[str] | None = None
    in_hunk = False
    try:
        for raw in proc.stdout:
            first = raw[:1]
            if first == b"\x00":
                if sha is not None:
                    yield sha, files
                sha, files, current, in_hunk = raw[1:].strip().decode("ascii", "replace"), [], None, False
            elif first == b"d" and raw.startswith(b"diff --git "):
                current, in_hunk = set(), False
                files.append(current)
            elif first == b"@" and raw.startswith(b"@@"):
                in_hunk = True
            elif in_hunk and current is not None and (first == b"+" or first == b"-"):
                text = seen.get(raw)
                if text is None:
                    text = seen[raw] = " ".join(raw[1:].decode("utf-8", "replace").split())
                if text:
                    current.add(text)
        if sha is not None:
            yield sha, files
    finally:
        proc.stdout.close()
        if proc.wait() not in (0, -13):
            raise OSError(f"git log exited with {proc.returncode}")


def update(git_dir: str, cache_dir: Path, tip: str, extends: Callable[[str, str], bool], *, full: bool = False) -> int:
    """Add the changes from the index's tip to `tip`; start again from the newest `FIRST_CHANGES` when
    `full`, when the index is empty, or when `extends(tip, its tip)` says the branch was rewritten.
    Returns how many changes were read."""
    index = WeightIndex.of(cache_dir)
    try:
        if index.tip == tip and not full:
            return 0
        fresh = full or not index.tip or not extends(tip, index.tip)
        counts = Counts()
        hide = [] if fresh else [index.tip]
        for _sha, files in changes(git_dir, tip, hide, FIRST_CHANGES if fresh else None):
            counts.add_change(files)
        index.add(counts, tip, fresh=fresh)
        return counts.changes
    finally:
        index.close()
