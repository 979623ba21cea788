"""Keep the harvest cache's term weights (`comind.weights`) up to date with the default branch.

The documents are the changes of the default branch's first-parent chain (a merge: its
first-parent diff) and the files each touched, read from one `git log -p -U0` over the changes not
read yet (the index remembers the tip it read to). A first harvest reads the newest `FIRST_CHANGES`
changes only: a document frequency is a frequency, and a sample that large tells a line in every
test file from a rare identifier; every later change is read as it lands. `Pending` starts git
before the harvest walks the history and reads its output in a thread, so git's diffs are made
while the walk runs.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from comind.weights import Counts, WeightIndex

__all__ = ["FIRST_CHANGES", "Pending", "changes", "update"]

FIRST_CHANGES = 500
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def _command(git_dir: str, tip: str, hide: list[str], limit: int | None) -> list[str]:
    cmd = ["git", "--git-dir", git_dir, "log", "--first-parent", "-m", "--format=%x00%H", "-p", "-U0"]
    cmd += ["--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"]
    cmd += [f"-n{limit}"] if limit else []
    return [*cmd, tip, *(f"^{h}" for h in hide), "--"]


def parse(output: bytes) -> Iterator[tuple[str, list[set[str]]]]:
    """(commit, the normalised changed lines of each file it touched), from `git log -p` output."""
    seen: dict[bytes, str] = {}  # raw line -> normalised: most lines recur, normalise each once
    for chunk in output.split(b"\x00")[1:]:
        sha, _, patch = chunk.partition(b"\n")
        files: list[set[str]] = []
        for part in patch.split(b"\ndiff --git ")[0 if patch.startswith(b"diff --git ") else 1 :]:
            lines: set[str] = set()
            hunks = part.split(b"\n@@", 1)
            if len(hunks) == 2:
                for raw in hunks[1].split(b"\n"):
                    first = raw[:1]
                    if first != b"+" and first != b"-":
                        continue
                    text = seen.get(raw)
                    if text is None:
                        text = seen[raw] = " ".join(raw[1:].decode("utf-8", "replace").split())
                    if text:
                        lines.add(text)
            files.append(lines)
        yield sha.strip().decode("ascii", "replace"), files


def changes(git_dir: str, tip: str, hide: list[str], limit: int | None = None) -> Iterator[tuple[str, list[set[str]]]]:
    """(commit, the normalised changed lines of each file it touched) for each change of the
    first-parent chain from `tip`, newest first, down to (not into) `hide`."""
    done = subprocess.run(_command(git_dir, tip, hide, limit), capture_output=True, check=False)
    if done.returncode != 0:
        raise OSError(f"git log exited with {done.returncode}")
    yield from parse(done.stdout)


class Pending:
    """An update of the index, started: git runs (and a thread reads it) while the harvest walks."""

    def __init__(self, git_dir: str, cache_dir: Path, tip: str, extends: Callable[[str, str], bool], full: bool):
        self.index = WeightIndex.of(cache_dir)
        self.tip = tip
        self.fresh = full or not self.index.tip or not extends(tip, self.index.tip)
        self._out: list[bytes] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        if self.index.tip == tip and not full:
            return
        hide = [] if self.fresh else [self.index.tip]
        cmd = _command(git_dir, tip, hide, FIRST_CHANGES if self.fresh else None)
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        self._out.append(self._proc.stdout.read())

    def finish(self) -> int:
        """Count what git wrote into the index; how many changes were read (OSError: git failed)."""
        try:
            if self._proc is None or self._reader is None:
                return 0
            self._reader.join()
            if self._proc.wait() != 0:
                raise OSError(f"git log exited with {self._proc.returncode}")
            counts = Counts()
            for _sha, files in parse(b"".join(self._out)):
                counts.add_change(files)
            self.index.add(counts, self.tip, fresh=self.fresh)
            return counts.changes
        finally:
            self.index.close()


def update(git_dir: str, cache_dir: Path, tip: str, extends: Callable[[str, str], bool], *, full: bool = False) -> int:
    """Add the changes from the index's tip to `tip`; start again from the newest `FIRST_CHANGES` when
    `full`, when the index is empty, or when `extends(tip, its tip)` says the branch was rewritten.
    Returns how many changes were read."""
    return Pending(git_dir, cache_dir, tip, extends, full).finish()
