"""A first harvest against the git work it stands on: the messages and the diffs it reads.

    python benchmarks/bench_harvest.py [REPO ...] [--repeat 2] [--work DIR] [--before OTHER_COMIND]

For each repository (a work tree or a bare git dir; default: the large public histories under
/work/.mirror when present), in one run:

* the diffs: an untimed in-process harvest lists the commits whose diff the harvest reads
  (`HarvestContext.approach`: the reverted changes, and the reverts whose target is unknown or
  partly reverted);
* git: `git log --format=%H%x00%B` of the default branch, plus one `git show -p
  --diff-merges=first-parent` of exactly those commits, output read whole (less those git cannot
  show at all: a blob the clone lacks makes it stop; comind reads such a change without that file);
* comind: `comind harvest` (the CLI, interpreter start included) in a shared clone whose
  `.git/comind` is removed first: a first harvest into an empty cache.

They take turns (best of `--repeat`), so load from other processes hits both alike. Prints wall
and CPU times (a child's user + system, load-independent) and the ratio; the target is <= 3x.
`--before` times another build's `comind` (e.g. main's) the same way, in the same turns.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import cli_env  # noqa: E402

COMIND = str(Path(sys.executable).with_name("comind"))
MIRRORS = ["pytest-dev+pytest", "denoland+deno", "babel+babel", "rust-lang+cargo", "pypa+pip", "astral-sh+ruff"]
TARGET = 3.0
Timing = tuple[float, float]  # (wall, CPU) seconds


def diff_commits(clone: Path) -> tuple[list[str], int]:
    """(the commits whose diff a first harvest reads, in the order it reads them; commits walked)."""
    code = """
import json, sys
from pathlib import Path
from comind.harvest.context import HarvestContext
from comind.harvest.run import harvest
from comind.workspace import Workspace
read = []
approach = HarvestContext.approach
def listed(self, sha, parent=None):
    read.append(sha)
    return approach(self, sha, parent)
HarvestContext.approach = listed
result = harvest(Workspace(Path(sys.argv[1])))
print(json.dumps({"read": list(dict.fromkeys(read)), "commits": result.commits}))
"""
    import json

    out = subprocess.run([sys.executable, "-c", code, str(clone)], capture_output=True, check=True, env=cli_env())
    data = json.loads(out.stdout.decode().strip().splitlines()[-1])
    return list(data["read"]), int(data["commits"])


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(run: list[list[str]], cwd: Path, before: object = None) -> tuple[float, float]:
    """(wall, CPU of the children) of running the commands one after the other."""
    if callable(before):
        before()
    wall, cpu = time.perf_counter(), children_cpu()
    for cmd in run:
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, env=cli_env())
    return time.perf_counter() - wall, children_cpu() - cpu


def name_of(repo: str) -> str:
    p = Path(repo)
    return p.parent.name if p.name in ("repo", ".git") else p.name


def bench(repo: str, work: Path, repeat: int, before: str | None) -> dict[str, object]:
    name = name_of(repo)
    clone = work / name
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", repo, str(clone)], check=True)
    cache = clone / ".git" / "comind"
    shutil.rmtree(cache, ignore_errors=True)
    shas, commits = diff_commits(clone)
    unreadable = readable(clone, shas)
    shas = [s for s in shas if s not in unreadable]
    branch = subprocess.run(
        ["git", "symbolic-ref", "--short", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    git = [
        ["git", "log", "--format=%H%x00%B", branch],
        ["git", "show", "-p", "--diff-merges=first-parent", "--format=%H", *shas],
    ]

    def empty() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    runs = {"git": (git, None), "comind": ([[COMIND, "harvest"]], empty)}
    if before:
        runs["before"] = ([[before, "harvest"]], empty)
    best = {key: (float("inf"), float("inf")) for key in runs}
    for _ in range(repeat):
        for key, (cmds, setup) in runs.items():
            wall, cpu = timed(cmds, clone, setup)
            best[key] = (min(best[key][0], wall), min(best[key][1], cpu))
    return {"name": name, "commits": commits, "diffs": len(shas), "unreadable": len(unreadable), **best}


def readable(clone: Path, shas: list[str]) -> set[str]:
    """The commits `git show -p` cannot show (a blob the clone lacks stops it): left out of its turn."""
    show = ["git", "show", "-p", "--diff-merges=first-parent", "--format=%H"]
    if not shas or subprocess.run([*show, *shas], cwd=clone, capture_output=True).returncode == 0:
        return set()
    return {s for s in shas if subprocess.run([*show, s], cwd=clone, capture_output=True).returncode != 0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("repos", nargs="*")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work", default=None, help="where the shared clones go (default: a temporary folder)")
    ap.add_argument("--before", default=None, help="another build's comind executable, timed alike")
    args = ap.parse_args(argv)
    repos = args.repos or [str(p) for m in MIRRORS if (p := Path("/work/.mirror") / m / "repo").exists()]
    if not repos:
        ap.error("no repository given and no mirror found")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-harvest-"))
    work.mkdir(parents=True, exist_ok=True)
    load = " · load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"first harvest vs git log + git show -p of the same diffs; {os.cpu_count()} cores{load}")
    columns = "history | commits | diffs read | git log + git show | comind harvest | ratio | CPU git / comind | ratio"
    columns += " | before: wall, CPU" if args.before else ""
    print(f"\n| {columns} |")
    print("|---" * (columns.count("|") + 1) + "|")
    worst = 0.0
    for repo in repos:
        r = bench(repo, work, args.repeat, args.before)
        (gw, gc), (cw, cc) = cast(Timing, r["git"]), cast(Timing, r["comind"])
        unread = f" ({r['unreadable']} more git cannot show: a blob the clone lacks)" if r["unreadable"] else ""
        worst = max(worst, cw / gw)
        line = (
            f"| {r['name']} | {r['commits']:,} | {r['diffs']}{unread} | {gw:.2f} s | {cw:.2f} s | {cw / gw:.2f}× "
            f"| {gc:.2f} / {cc:.2f} s | {cc / gc:.2f}× |"
        )
        if "before" in r:
            bw, bc = cast(Timing, r["before"])
            line += f" {bw:.2f} s ({bw / gw:.1f}×), {bc:.2f} s ({bc / gc:.1f}×) |"
        print(line, flush=True)
    print(f"\nworst wall ratio {worst:.2f}× (target ≤ {TARGET:.0f}×)")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
