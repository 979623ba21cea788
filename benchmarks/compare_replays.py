"""Are two runs of `comind eval replay --json` the same, flag for flag?

    python benchmarks/compare_replays.py BEFORE_DIR AFTER_DIR

Compares each `<name>.json` (and `<name>.near.jsonl`) of BEFORE_DIR with AFTER_DIR's: timings,
the rule ids a later version
names (`rule`, a note's `(rule D1 share)`) and the path are left out. Exit 1 when any differs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

_RULE_NOTE = re.compile(r" \(rule [A-Z]\d+ [a-z-]+\)$")
_IGNORED = {"seconds", "path", "rule", "patches_read_with"}


def normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in _IGNORED}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str):
        return _RULE_NOTE.sub("", value)
    return value


def differences(before: Any, after: Any, where: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(before.keys() | after.keys()):
            out += differences(before.get(key), after.get(key), f"{where}.{key}")
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d for i, (b, a) in enumerate(zip(before, after, strict=True)) for d in differences(b, a, f"{where}[{i}]")
        ]
    return [] if before == after else [f"{where}: {json.dumps(before)[:200]} -> {json.dumps(after)[:200]}"]


def main(argv: list[str]) -> int:
    before_dir, after_dir = Path(argv[0]), Path(argv[1])
    failed = 0
    for before in sorted(before_dir.glob("*.json")):
        after = after_dir / before.name
        if before.name == "summary.json" or not after.exists() or not before.stat().st_size:  # replay_sets' tables
            continue
        found = differences(normalised(json.loads(before.read_text())), normalised(json.loads(after.read_text())))
        print(f"{before.stem}: {'identical' if not found else f'{len(found)} differences'}")
        for line in found[:20]:
            print(f"  {line}")
        failed += bool(found)
    for before in sorted(before_dir.glob("*.near.jsonl")):  # `--near-misses` files, when both runs wrote them
        after = after_dir / before.name
        if after.exists():
            rows = [[normalised(json.loads(ln)) for ln in f.read_text().splitlines() if ln] for f in (before, after)]
            same = rows[0] == rows[1]
            print(f"{before.name}: {'identical' if same else 'differ'} ({len(rows[0])} and {len(rows[1])} pairs)")
            failed += not same
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
