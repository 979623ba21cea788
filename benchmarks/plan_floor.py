"""Tune `preflight --plan`'s relevance floor offline, on the rankings `comind eval preflight` asks for.

    python benchmarks/plan_floor.py capture DIR MIRROR...        # one eval per history, rankings kept
    python benchmarks/plan_floor.py figures DIR [--floor F ...]  # recall@3 and unrelated, per floor

`capture` runs `comind eval preflight` on each mirror (a bare `git clone --mirror --shared` copy)
with the floor off, and writes `DIR/<owner+name>.plan.json`: per reland, the attempts it relands
and the whole ranking (id, relevance scaled to the best match, proximity, score). `figures` then
applies each floor as `agents/ranking.py` does (a record ranks on its words only with a relevance
of at least the floor; removing records never reorders the others) and prints, per history and per
set (benchmarks/histories.yml: tune on the tuning set, then report the validation set without
changing anything), recall@3, relands whose top 3 holds an unrelated record, and how many per reland.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

TOP = 3


def set_of(name: str) -> str:
    return "validation" if int.from_bytes(hashlib.sha256(name.encode()).digest(), "big") % 5 < 2 else "tuning"


def capture(out_dir: Path, mirrors: list[Path]) -> None:
    import comind.agents.ranking as ranking
    from comind.eval.preflight import MomentWorkspace, evaluate

    original = ranking.rank
    out_dir.mkdir(parents=True, exist_ok=True)
    calls: list[list[list[Any]]] = []

    def rank(records: Any, statuses: Any, relevance: Any, now: Any, on: Any = (), limit: int = 10, **_: Any) -> Any:
        ranked = original(records, statuses, relevance, now, on, limit=1000, floor=0.0)
        calls.append([[r.record.id, r.parts["relevance"], r.parts["proximity"], r.score] for r in ranked])
        return ranked[:limit]

    for mirror in mirrors:
        calls.clear()
        ranking.rank = rank  # type: ignore[assignment]
        try:
            result = evaluate(MomentWorkspace(mirror))
        finally:
            ranking.rank = original
        asked = [c for c in result.cases if c.note != "a root commit: nothing to compare with"]
        if len(asked) != len(calls):
            raise SystemExit(f"{mirror}: {len(asked)} relands asked, {len(calls)} rankings captured")
        name = mirror.name.removesuffix(".git")
        cases = [{"commit": c.commit, "expected": c.expected, "ranked": r} for c, r in zip(asked, calls, strict=True)]
        (out_dir / f"{name}.plan.json").write_text(json.dumps({"repo": name, "cases": cases}, indent=1))
        print(f"{name}: {len(cases)} relands", file=sys.stderr)


def top(ranked: list[list[Any]], floor: float) -> list[str]:
    return [row[0] for row in ranked if row[1] >= floor or row[2] > 0][:TOP]


def figures(out_dir: Path, floors: list[float]) -> None:
    rows = []
    for path in sorted(out_dir.glob("*.plan.json")):
        data = json.loads(path.read_text())
        for floor in floors:
            cases = data["cases"]
            tops = [(set(c["expected"]), top(c["ranked"], floor)) for c in cases]
            found = sum(1 for expected, t in tops if expected & set(t))
            unrelated = [sum(1 for i in t if i not in expected) for expected, t in tops]
            rows.append((set_of(data["repo"]), data["repo"], floor, len(cases), found, unrelated))
    head = ("set", "history", "floor", "relands", "top 3", "with unrelated", "per reland")
    print(f"{head[0]:<11} {head[1]:<26} {head[2]:>5} {head[3]:>7} {head[4]:>6} {head[5]:>15} {head[6]:>10}")
    for name in ("tuning", "validation"):
        for floor in floors:
            mine = [r for r in rows if r[0] == name and r[2] == floor]
            for _, repo, _, n, found, unrelated in mine:
                print(
                    f"{name:<11} {repo:<26} {floor:>5.2f} {n:>7} {found:>6} {sum(1 for u in unrelated if u):>15} "
                    f"{sum(unrelated) / n if n else 0:>10.2f}"
                )
            n = sum(r[3] for r in mine)
            if len(mine) > 1 and n:
                unrelated = [u for r in mine for u in r[5]]
                print(
                    f"{name:<11} {'(all)':<26} {floor:>5.2f} {n:>7} {sum(r[4] for r in mine):>6} "
                    f"{sum(1 for u in unrelated if u):>15} {sum(unrelated) / n:>10.2f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("dir", type=Path)
    cap.add_argument("mirrors", type=Path, nargs="+")
    fig = sub.add_parser("figures")
    fig.add_argument("dir", type=Path)
    fig.add_argument("--floor", type=float, action="append")
    args = parser.parse_args()
    if args.action == "capture":
        capture(args.dir, args.mirrors)
    else:
        figures(args.dir, args.floor or [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


if __name__ == "__main__":
    main()
