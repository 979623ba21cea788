"""The first `comind check` after a first harvest: README's first command, less the harvest.

    python benchmarks/bench_first_check.py REPO [REPO ...] --before OTHER_COMIND [--repeat 2] [--work DIR]
                                           [--behind N]

For each repository (a bare mirror or a work tree), in a `git clone --shared` of it: each turn
removes `.git/comind`, harvests (untimed), and times `comind check` (the CLI, interpreter start
included): the code index at HEAD, then every record's code followed to HEAD (renames, moves,
drift, the landing that removed a symbol). `--before` does the same with another build's `comind`
in the same turns, so load from other processes hits both alike; the figure is the ratio. Both
builds must find the same statuses: each record's status, reason and notes in `comind log --json
--history` are compared after each turn (a build that harvests other records differs elsewhere).
`--behind N` checks out a branch N first-parent landings behind the default branch's tip, as a
branch forked a while ago: the records anchored after its fork are followed back to it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_harvest import COMIND, children_cpu, name_of
from common import cli_env


def statuses(log: bytes) -> dict[str, tuple[object, ...]]:
    """Each record's status, its reason and notes, by id: what following the code decided (a build
    that harvests other fields, anchors or records differs elsewhere)."""
    import json

    rows = (json.loads(line) for line in log.splitlines() if line.strip())
    return {r["id"]: (r.get("status"), r.get("status_reason"), tuple(r.get("notes") or ())) for r in rows}


def turn(comind: str, clone: Path) -> tuple[float, float, bytes]:
    """(wall, CPU, the statuses) of a first check by `comind`, after its own first harvest."""
    import time

    shutil.rmtree(clone / ".git" / "comind", ignore_errors=True)
    subprocess.run([comind, "harvest"], cwd=clone, capture_output=True, check=True, env=cli_env())
    wall, cpu = time.perf_counter(), children_cpu()
    subprocess.run([comind, "check"], cwd=clone, capture_output=True, env=cli_env())
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    log = [comind, "log", "--json", "--history"]
    return wall, cpu, subprocess.run(log, cwd=clone, capture_output=True, check=True, env=cli_env()).stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--before", required=True, help="another build's comind executable, timed alike")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--work", default=None, help="where the shared clones go (default: a temporary folder)")
    ap.add_argument("--behind", type=int, default=0, help="check a branch this many landings behind the tip")
    args = ap.parse_args(argv)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-first-check-"))
    load = " · load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(f"the first comind check after a first harvest; {os.cpu_count()} cores{load}\n")
    print("| history | before: wall, CPU | after: wall, CPU | ratio (wall) | ratio (CPU) | same statuses |")
    print("|---|---|---|---|---|---|")
    for repo in args.repos:
        clone = work / name_of(repo)
        if not clone.exists():
            subprocess.run(["git", "clone", "-q", "--shared", repo, str(clone)], capture_output=True)
        if args.behind:
            fork = f"origin/HEAD~{args.behind}"
            # HEAD moved without a checkout: comind reads git objects, and a mirror may lack large blobs
            subprocess.run(["git", "update-ref", "refs/heads/forked", fork], cwd=clone, capture_output=True, check=True)
            subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/forked"], cwd=clone, check=True)
        best = {"before": (float("inf"), float("inf")), "after": (float("inf"), float("inf"))}
        same = True
        for _ in range(args.repeat):
            logs = {}
            for key, comind in (("before", args.before), ("after", COMIND)):
                wall, cpu, logs[key] = turn(comind, clone)
                best[key] = (min(best[key][0], wall), min(best[key][1], cpu))
            before, after = statuses(logs["before"]), statuses(logs["after"])
            differ = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
            same = same and not differ
        (bw, bc), (aw, ac) = best["before"], best["after"]
        print(
            f"| {name_of(repo)} | {bw:.2f} s, {bc:.2f} s | {aw:.2f} s, {ac:.2f} s | {aw / bw:.2f}× | {ac / bc:.2f}× "
            f"| {'yes' if same else f'NO: {len(differ)} of {len(before)}'} |",
            flush=True,
        )
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
