"""The git message pass against `git log --format=%H%x00%B` over the same history.

    python benchmarks/bench_walk.py [REPO ...] [--ref REF] [--repeat 3]

For each repository (a work tree or a bare git dir; default: the public histories under
/work/.mirror when present) and its default branch, in the same run:

* peer: ``git log --format=%H%x00%B REF`` through ``subprocess``, decoded and split per commit;
* walk: the pygit2 walk alone (``comind.harvest.walker.walk``);
* message pass: walk + ``revert_markers`` + ``lore_atom`` + the subject index, every commit.

Lore users among the defaults (CommitLore, lora, the Lore reference CLI) show what the Lore-aware
mode recovers over git's own trailer rules.

The three take turns (best of ``--repeat``), so load from other processes hits them alike. Prints
the best wall time of each, the ratio of the message pass to the peer (target <= 2x), the CPU
times (ours plus git's) as a load-independent check, and what the pass found (markers by kind,
commits with Lore trailers), so the same run shows speed and recall.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import Row, print_table  # noqa: E402

from comind.git import open_repo  # noqa: E402
from comind.harvest.lorekeys import canonical_lore_key  # noqa: E402
from comind.harvest.markers import revert_markers  # noqa: E402
from comind.harvest.trailers import lore_atom, parse_trailers  # noqa: E402
from comind.harvest.walker import SubjectIndex, default_branch, walk  # noqa: E402

MIRRORS = [
    "pallets+flask",
    "psf+requests",
    "vitejs+vite",
    "pydantic+pydantic",
    "Ian-stetsenko+lore-protocol",
    "MongLong0214+commitlore",
    "tmdgusya+lora",
]


def git_log(repo: str, ref: str) -> int:
    out = subprocess.run(
        ["git", "--git-dir", repo, "log", "--format=%H%x00%B", ref], capture_output=True, check=True
    ).stdout
    parts = out.decode("utf-8", "replace").split("\x00")
    return len(parts) - 1


def walk_only(repo: str, ref: str) -> int:
    return sum(1 for _ in walk(repo, [ref]))


def message_pass(repo: str, ref: str, recall: Counter[str] | None = None) -> tuple[int, Counter[str], int, int]:
    """The timed pass. With ``recall``, also counts the Lore lines git's own rules find (untimed runs only)."""
    kinds: Counter[str] = Counter()
    index = SubjectIndex()
    commits = with_lore = 0
    lore_trailers = 0
    for c in walk(repo, [ref]):
        commits += 1
        for m in revert_markers(c.subject, c.body):
            kinds[m.kind] += 1
        atom = lore_atom(c.message)
        if atom.has_lore:
            with_lore += 1
            lore_trailers += len(atom.trailers)
            if recall is not None:
                git_lines = sum(1 for t in parse_trailers(c.message) if canonical_lore_key(t.key))
                recall["git"] += git_lines
                recall["git_commits"] += bool(git_lines)
        index.add(c.sha, c.subject)
    return commits, kinds, with_lore, lore_trailers


def cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def interleaved(runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall and CPU time (ours plus child processes') of each run, taking turns so that load
    from other processes on a shared machine hits every measure alike."""
    best = {name: (float("inf"), float("inf")) for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), cpu_now()
            run()
            wall, cpu = time.perf_counter() - wall, cpu_now() - cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("repos", nargs="*")
    ap.add_argument("--ref", default=None, help="branch or commit to walk (default: the default branch)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    repos = args.repos or [str(p) for m in MIRRORS if (p := Path("/work/.mirror") / m / "repo").exists()]
    if not repos:
        ap.error("no repository given and no mirror found")
    rows: list[Row] = []
    for repo in repos:
        git_dir = open_repo(repo).path.rstrip("/")
        ref = args.ref or default_branch(git_dir)
        name = Path(repo).parent.name if Path(repo).name == "repo" else Path(repo).name
        recall: Counter[str] = Counter()
        commits, kinds, with_lore, lore_trailers = message_pass(git_dir, ref, recall)
        t = interleaved(
            {
                "peer": lambda d=git_dir, r=ref: git_log(d, r),
                "walk": lambda d=git_dir, r=ref: walk_only(d, r),
                "pass": lambda d=git_dir, r=ref: message_pass(d, r),
            },
            args.repeat,
        )
        peer_cpu = t["peer"][1]
        found = ", ".join(f"{k} {v}" for k, v in kinds.most_common())
        rows.append(
            Row(
                f"{name}: walk only ({commits:,} commits)",
                t["walk"][0],
                "git log %H%x00%B",
                t["peer"][0],
                note=f"CPU {t['walk'][1] * 1000:.0f} vs {peer_cpu * 1000:.0f} ms",
            )
        )
        rows.append(
            Row(
                f"{name}: message pass",
                t["pass"][0],
                "git log %H%x00%B",
                t["peer"][0],
                note=f"CPU {t['pass'][1] * 1000:.0f} vs {peer_cpu * 1000:.0f} ms "
                f"({t['pass'][1] / peer_cpu:.2f}×); markers: {found or 'none'}; "
                f"Lore lines: {lore_trailers} in {with_lore} commits (git's rules alone: "
                f"{recall['git']} in {recall['git_commits']})",
            )
        )
    print_table("Git message pass (walk + revert markers + Lore)", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
