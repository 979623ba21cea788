"""Keep the harvest cache's term weights (`comind.weights`) up to date with the default branch.

The documents are the changes of the default branch's first-parent chain (a merge: its
first-parent diff) and the files each touched, read from one `git log -p -U0` over the changes not
read yet (the index remembers the tip it read to). A first harvest reads the newest `FIRST_CHANGES`
changes only: a document frequency is a frequency, and a sample that large tells a line in every
test file from a rare identifier; every later change is read as it lands. `Pending` does it in a
process of its own, started before the harvest walks the history: on another core, while the walk
runs.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from comind.harvest import HARVESTER_VERSION
from comind.weights import Counts, WeightIndex

if TYPE_CHECKING:
    import pygit2

__all__ = ["FIRST_CHANGES", "Pending", "changes", "current", "log_command", "update"]

FIRST_CHANGES = 500


def log_command(
    git_dir: str, tip: str, hide: list[str], limit: int | None = None, paths: Sequence[str] = ()
) -> list[str]:
    """`git log -p -U0` over the first-parent chain from `tip` (a merge: its first-parent diff), down
    to `hide`; with `paths`, only the changes to those files (their diffs alone)."""
    cmd = ["git", "--git-dir", git_dir, *(["--literal-pathspecs"] if paths else [])]
    cmd += ["log", "--first-parent", "-m", "--format=%x00%H", "-p", "-U0"]
    cmd += ["--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"]
    cmd += [f"-n{limit}"] if limit else []
    return [*cmd, tip, *(f"^{h}" for h in hide), "--", *paths]


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


def changes(
    git_dir: str, tip: str, hide: list[str], limit: int | None = None, paths: Sequence[str] = ()
) -> Iterator[tuple[str, list[set[str]]]]:
    """(commit, the normalised changed lines of each file it touched) for each change of the
    first-parent chain from `tip`, newest first, down to (not into) `hide` (of `paths` only, if given)."""
    done = subprocess.run(log_command(git_dir, tip, hide, limit, paths), capture_output=True, check=False)
    if done.returncode != 0:
        raise OSError(f"git log exited with {done.returncode}")
    yield from parse(done.stdout)


class Pending:
    """An update of the index, started: a process of its own (git, then the counting) runs while the
    harvest walks, on another core; `finish` waits for it."""

    def __init__(self, git_dir: str, cache_dir: Path, tip: str, extends: Callable[[str, str], bool], full: bool):
        index = WeightIndex.of(cache_dir)
        index.close()
        self._proc: subprocess.Popen[bytes] | None = None
        if index.tip == tip and not full:
            return
        fresh = full or not index.tip or not extends(tip, index.tip)
        cmd = [sys.executable, "-m", "comind.harvest.weights", git_dir, str(cache_dir), tip]
        cmd += ["--fresh"] if fresh else ["--hide", index.tip]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self) -> int:
        """How many changes were read (OSError: git or the counting failed; the index is as it was)."""
        if self._proc is None:
            return 0
        out, err = self._proc.communicate()
        if self._proc.returncode != 0:
            last = (err.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
            raise OSError(f"the term weights were not updated: {last}")
        return int(out.strip() or 0)


def _run(git_dir: str, cache_dir: Path, tip: str, hide: list[str], fresh: bool) -> int:
    done = subprocess.run(
        log_command(git_dir, tip, hide, FIRST_CHANGES if fresh else None), capture_output=True, check=False
    )
    if done.returncode != 0:
        raise OSError(f"git log exited with {done.returncode}")
    counts = Counts()
    for _sha, files in parse(done.stdout):
        counts.add_change(files)
    index = WeightIndex.of(cache_dir)
    try:
        index.add(counts, tip, fresh=fresh)
    finally:
        index.close()
    return counts.changes


def update(git_dir: str, cache_dir: Path, tip: str, extends: Callable[[str, str], bool], *, full: bool = False) -> int:
    """Add the changes from the index's tip to `tip`; start again from the newest `FIRST_CHANGES` when
    `full`, when the index is empty, or when `extends(tip, its tip)` says the branch was rewritten.
    Returns how many changes were read. (In this process: `Pending` is the same in another.)"""
    index = WeightIndex.of(cache_dir)
    index.close()
    if index.tip == tip and not full:
        return 0
    fresh = full or not index.tip or not extends(tip, index.tip)
    return _run(git_dir, cache_dir, tip, [] if fresh else [index.tip], fresh)


FAILED = "weights.failed"  # in the cache: the tip git could not read the changes to, and why


def current(repo: pygit2.Repository, cache_dir: Path, tip: str | None) -> tuple[WeightIndex, str | None]:
    """(the index, brought up to `tip` (the default branch's) first when a harvest left it behind;
    why it could not be, if so). A partial clone is not read (its old blobs would be fetched one by
    one): its index stays empty, and every term weighs alike; so with a history git cannot read
    (a blob the clone lacks), which is not tried again at the same tip."""
    import pygit2

    from comind.promisor import promisor_remote

    index = WeightIndex.of(cache_dir)
    if tip is None or index.tip == tip or promisor_remote(repo) is not None:
        return index, None
    failed, at = cache_dir / FAILED, f"{tip} {HARVESTER_VERSION}"  # another comind tries again
    with contextlib.suppress(OSError):
        said, _, why = failed.read_text().partition("\n")
        if said == at:
            return index, why
    index.close()

    def extends(new: str, old: str) -> bool:
        try:
            return new == old or bool(repo.descendant_of(new, old))
        except (KeyError, ValueError, pygit2.GitError):
            return False

    try:
        update(repo.path, cache_dir, tip, extends)
    except OSError as exc:  # the matcher weighs with what the index holds
        with contextlib.suppress(OSError):
            failed.write_text(f"{at}\n{exc}")
        return WeightIndex.of(cache_dir), str(exc)
    failed.unlink(missing_ok=True)
    return WeightIndex.of(cache_dir), None


if __name__ == "__main__":  # `Pending`'s process: GIT_DIR CACHE_DIR TIP (--fresh | --hide OLD_TIP)
    _args = sys.argv[1:]
    _fresh = "--fresh" in _args
    _hide = [_args[_args.index("--hide") + 1]] if "--hide" in _args else []
    print(_run(_args[0], Path(_args[1]), _args[2], _hide, _fresh))
