"""What the term weights cost: a first harvest, a re-harvest of new commits, and `comind check`,
each with two builds of comind (before and after the weights), taking turns.

    python benchmarks/bench_weights.py REPO BEFORE_LIB AFTER_LIB [--repeat 3] [--new 20]

REPO: a git repository (a bare mirror is fine: it is cloned, never written). BEFORE_LIB and
AFTER_LIB: folders holding a `comind` package each (put first on PYTHONPATH). Prints one row per
measure: the best wall time of each build and their ratio. Not part of the test run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def comind(lib: str, cwd: Path, *args: str) -> float:
    env = {**os.environ, "PYTHONPATH": lib}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from comind.cli import main; raise SystemExit(main())", "-C", str(cwd), *args],
        env=env,
        check=False,
        capture_output=True,
    )
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--new", type=int, default=20, help="commits added before the re-harvest")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-weights-"))
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for round_ in range(args.repeat):
            for label, lib in (("before", args.before), ("after", args.after)):
                dest = work / f"{label}-{round_}"
                subprocess.run(["git", "clone", "-q", "--shared", args.repo, str(dest)], check=True)
                times.setdefault(("first harvest", label), []).append(comind(lib, dest, "harvest"))
                for i in range(args.new):
                    (dest / "BENCH.txt").write_text(f"bench line {i}\n" * (i + 1))
                    git(dest, "add", "BENCH.txt")
                    git(dest, "commit", "-q", "-m", f"bench commit {i}")
                times.setdefault((f"re-harvest ({args.new} new commits)", label), []).append(
                    comind(lib, dest, "harvest")
                )
                times.setdefault(("re-harvest (nothing new)", label), []).append(comind(lib, dest, "harvest"))
                git(dest, "checkout", "-q", "-b", "change")
                files = [p for p in git(dest, "ls-files", "*.py", "*.ts", "*.rs", "*.js").split() if p][:10]
                for path in files:
                    with open(dest / path, "a", encoding="utf-8") as f:
                        f.write("\n# a benchmark edit\nvalue = compute_the_benchmark_value(1, 2)\n")
                git(dest, "commit", "-q", "-am", "a ten-file change")
                comind(lib, dest, "check", "--base", "main", "--format", "json")  # harvests the branch
                times.setdefault(("check --base main (harvested)", label), []).append(
                    comind(lib, dest, "check", "--base", "main", "--format", "json", "--no-harvest")
                )
                shutil.rmtree(dest, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| measure | before | after | after / before |\n|---|---|---|---|")
    for measure in dict.fromkeys(m for m, _ in times):
        before, after = min(times[(measure, "before")]), min(times[(measure, "after")])
        print(f"| {measure} | {before:.2f} s | {after:.2f} s | {after / before:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
