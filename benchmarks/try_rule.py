"""Try rulebook options offline on replays' near misses, before a replay confirms them.

    python benchmarks/try_rule.py DIR [RULE.OPTION=VALUE ...] [--set tuning|validation]

DIR holds, per history, `<owner+name>.json` (`comind eval replay --json --audit …`) and
`<owner+name>.nm.jsonl` (`--near-misses`). Every (landing, attempt) pair the replay judged is judged
again with the options given (`comind.rulebook.judge_match` on the pair's figures, its weighted score
included); a landing is flagged when one of its pairs matches, or when the replay flagged it for a
dependency move (not in the near misses). Prints, per set (the rule of benchmarks/histories.yml:
validation when sha256(name) mod 5 < 2), relands caught and flags on ordinary commits before and after,
the audited false ones (a flag the audit has not judged counts as false), and each landing that changes.
D15 reads the trees, which the near misses do not hold: its options are refused, and a pair it turned
down stays down.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from comind.rule import Match
from comind.rulebook import book, judge_match, parse_overrides

AUDITS = Path(__file__).resolve().parent / "replay-audit"


def set_of(name: str) -> str:
    return "validation" if int.from_bytes(hashlib.sha256(name.encode()).digest(), "big") % 5 < 2 else "tuning"


def _match(row: dict[str, object]) -> Match:
    def num(key: str) -> int:
        value = row.get(key, 0)
        return int(value) if isinstance(value, int | float) else 0

    recreated = row.get("recreated") or []
    unmeasured = "no history measured" in str(row.get("evidence", ""))  # (a replay before D13 kept silent)
    return Match(
        num("matched"),
        num("total"),
        None,
        num("local"),
        own=num("own"),
        recreated=tuple(str(p) for p in recreated) if isinstance(recreated, list) else (),
        added=num("added"),
        added_total=num("added_total"),
        score=0.0 if unmeasured else float(row.get("score", 0.0) or 0.0),  # type: ignore[arg-type]
        weight=0.0 if unmeasured else float(row.get("weight", 0.0) or 0.0),  # type: ignore[arg-type]
        names=tuple(float(w) for w in row.get("names") or ()),  # type: ignore[attr-defined]
        kept=tuple(float(w) for w in row.get("kept") or ()),  # type: ignore[attr-defined]
    )


def history(path: Path, overrides: dict[str, float]) -> dict[str, object]:
    replay = json.loads(path.read_text())
    name = path.name.removesuffix(".json")
    verdicts = yaml.safe_load((AUDITS / f"{name}.yml").read_text()) if (AUDITS / f"{name}.yml").exists() else {}
    verdicts = verdicts or {}
    rules = book(overrides)
    before = {f["commit"]: f for f in replay["flags"]}
    kind = {f["commit"]: f["kind"] for f in replay["flags"]}
    kind |= {m["commit"]: "reland" for m in replay["missed"]}
    after: set[str] = {c for c, f in before.items() if any(m.get("how") == "dependency" for m in f.get("matches", []))}
    pairs: dict[str, list[dict[str, object]]] = defaultdict(list)
    nm = path.with_name(f"{name}.nm.jsonl")
    for line in nm.read_text().splitlines() if nm.exists() else []:
        row = json.loads(line)
        pairs[str(row["commit"])].append(row)
        # (files and edits are judged by rules no line option moves; D15 reads the tree, so a pair it
        # turned down stays down)
        if row.get("rule") != "D15" and (row.get("kind") in ("files", "edit") or judge_match(_match(row), rules).kind):
            after.add(str(row["commit"]))
        kind.setdefault(str(row["commit"]), "reland" if row.get("reland") else "ordinary")

    def false(commit: str) -> bool:
        verdict = verdicts.get(commit) or next((v for k, v in verdicts.items() if commit.startswith(str(k))), None)
        return not (isinstance(verdict, dict) and verdict.get("verdict") == "re-proposal")

    relands = int(replay["relands"])
    out = {
        "name": name,
        "relands": relands,
        "caught_before": int(replay["relands_flagged"]),
        "caught_after": int(replay["relands_flagged"])
        + sum(1 for c in after - before.keys() if kind.get(c) == "reland")
        - sum(1 for c in before.keys() - after if kind.get(c) == "reland"),
        "flags_before": sum(1 for c in before if kind.get(c) == "ordinary"),
        "flags_after": sum(1 for c in after if kind.get(c) == "ordinary"),
        "false_before": sum(1 for c in before if kind.get(c) == "ordinary" and false(c)),
        "false_after": sum(1 for c in after if kind.get(c) == "ordinary" and false(c)),
        "ordinary": int(replay["ordinary_commits"]),
        "changed": sorted(
            f"{'+' if c in after else '-'} {kind.get(c)} {c[:10]} "
            + next((str(p.get("evidence", ""))[:140] for p in pairs.get(c, []) if p.get("evidence")), "")
            for c in after ^ before.keys()
        ),
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("options", nargs="*", help="RULE.OPTION=VALUE")
    parser.add_argument("--set", choices=("tuning", "validation"))
    args = parser.parse_args(argv)
    try:
        overrides = parse_overrides(",".join(args.options))
    except ValueError as exc:
        print(f"try_rule: {exc}", file=sys.stderr)
        return 2
    if any(key.startswith("D15.") for key in overrides):
        print("try_rule: D15 reads the trees: replay to try its options", file=sys.stderr)
        return 2
    rows = [history(p, overrides) for p in sorted(args.dir.glob("*.json")) if not p.name.startswith("summary")]
    for which in ("validation", "tuning"):
        if args.set and which != args.set:
            continue
        mine = [r for r in rows if set_of(str(r["name"])) == which]
        if not mine:
            continue
        total = {k: sum(int(r[k]) for r in mine) for k in mine[0] if k not in ("name", "changed")}  # type: ignore[call-overload]
        print(
            f"{which} ({len(mine)} histories, {total['ordinary']:,} ordinary commits): "
            f"caught {total['caught_before']} -> {total['caught_after']} of {total['relands']}; "
            f"flags {total['flags_before']} -> {total['flags_after']}; "
            f"audited false {total['false_before']} -> {total['false_after']}"
        )
        for r in mine:
            for line in r["changed"]:  # type: ignore[attr-defined]
                print(f"    {r['name']}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
