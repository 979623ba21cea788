"""Do two builds of comind harvest the same records? A proof for harvest speed-ups, run by hand.

    python benchmarks/compare_harvests.py --old /path/to/main/.venv/bin/comind [--new comind] REPO ...

For each repository, a shared clone (no checkout) is harvested from an empty cache by each build;
the records both wrote (their file names are `<id>-<hash>.json`, the hash over every field) in the
harvest cache and the branch cache, and the harvest state, must be the same. Harvested records hold
no clock time and no random id, so nothing is ignored but the order they were written in.
Exit 0 when every history matches, 1 otherwise, naming what differs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def harvest(comind: str, clone: Path) -> tuple[dict[str, set[str]], dict[str, object], float, str]:
    cache = clone / ".git" / "comind"
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run([comind, "harvest"], cwd=clone, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    stores = {store: {p.name for p in (cache / store).rglob("*.json")} for store in ("harvest", "harvest-branch")}
    state = json.loads((cache / "harvest-state.json").read_text())
    return stores, state, seconds, done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--old", required=True, help="the comind executable of the build compared against")
    ap.add_argument("--new", default=str(Path(sys.executable).with_name("comind")))
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="compare-harvests-"))
    same = True
    try:
        for repo in args.repos:
            name = Path(repo).parent.name if Path(repo).name in ("repo", ".git") else Path(repo).name
            clone = work / name
            subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", repo, str(clone)], check=True)
            old, old_state, old_s, old_line = harvest(args.old, clone)
            new, new_state, new_s, new_line = harvest(args.new, clone)
            problems = []
            for store in old:
                if old[store] != new[store]:
                    problems.append(
                        f"{store}: {len(old[store] - new[store])} records only old, "
                        f"{len(new[store] - old[store])} only new, e.g. {sorted(old[store] ^ new[store])[:3]}"
                    )
            if old_state != new_state:
                keys = sorted(k for k in old_state.keys() | new_state.keys() if old_state.get(k) != new_state.get(k))
                problems.append(f"harvest state differs in {keys}")
            if old_line != new_line:
                problems.append(f"summary differs: {old_line!r} / {new_line!r}")
            records = sum(len(v) for v in new.values())
            verdict = "identical" if not problems else "DIFFERENT: " + "; ".join(problems)
            print(f"{name}: {records} records, {verdict} (old {old_s:.1f} s, new {new_s:.1f} s)", flush=True)
            same = same and not problems
            shutil.rmtree(clone, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
