"""comind eval: prove the dead-end matcher on a real history, and measure the harvesters' coverage."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from comind.cli import existing_folder
from comind.config import SETTINGS
from comind.records import quoted
from comind.rule import again


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "eval",
        parents=[common],
        help="replay the dead-end matcher over a history; harvest coverage",
        description="Evaluate comind on any git repository (a bare one too) without writing into it.",
    )
    actions = p.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    replay = actions.add_parser(
        "replay",
        parents=[common],
        help="relands flagged (recall) and false flags per 1,000 commits",
        description="Harvest the default branch's history in memory, walk its landings oldest first and match "
        "each one's change against the attempts harvested before it, as comind check would. Relands "
        "(recognised by their subjects) are the positives; every flag is listed with its evidence.",
    )
    replay.add_argument(
        "--since",
        metavar="REV",
        help="scan only the landings after REV, a commit, branch or tag (attempts from all history)",
    )
    replay.add_argument(
        "--audit",
        metavar="FILE",
        type=Path,
        help="a person's verdicts on flags (YAML: commit -> verdict re-proposal|false, why); "
        "adds the audited false-flag rate, the subject-based one unchanged",
    )
    replay.add_argument(
        "--near-misses",
        metavar="FILE",
        type=Path,
        help="also write, one JSON object per line, every (commit, attempt) pair sharing 3 lines "
        "or more, flagged or not, with the figures the matcher judged: to try a rule on",
    )
    harvest = actions.add_parser(
        "harvest",
        parents=[common],
        help="what the harvesters read: markers, Lore keys, misses, skips",
        description="Counts by revert marker and Lore key, unresolved and ambiguous references, trailer-looking "
        "lines the parser did not take, skips by reason; each with up to 5 examples.",
    )
    preflight = actions.add_parser(
        "preflight",
        parents=[common],
        help="at each reland: does preflight --diff surface the attempt, --plan rank it in the top 3",
        description="Replay the history as eval replay does; at each reland, with the records harvested before "
        "it, run preflight --diff on its change and preflight --plan with its own message as the plan: the "
        "attempt surfaced (recall), in the plan's top 3 (recall@3), and what else is shown (unrelated).",
    )
    for p_ in (replay, harvest, preflight):
        p_.add_argument(
            "--repo",
            metavar="PATH",
            help="the repository to evaluate: a work tree or a bare git directory (default: the current one)",
        )
        p_.add_argument("--json", action="store_true", help="print the result as JSON")
    replay.set_defaults(handler=run_replay)
    harvest.set_defaults(handler=run_harvest)
    preflight.set_defaults(handler=run_preflight)


def _workspace(args: argparse.Namespace, kind: Any = None) -> Any:
    from comind.eval.replay import EvalWorkspace

    flags = {s.key: getattr(args, f"setting_{s.key}", None) for s in SETTINGS}
    path = Path(existing_folder(args.repo, "--repo") if args.repo else getattr(args, "directory", None) or Path.cwd())
    return (kind or EvalWorkspace)(path, flags)


def _progress() -> Any:
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return None

    def show(phase: str, done: int, total: int) -> None:
        of = f"/{total}" if total else ""
        sys.stderr.write(f"\r\033[Kcomind: {phase} {done}{of} commits")
        if total and done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def run_replay(args: argparse.Namespace) -> int:
    from comind.eval import verdicts
    from comind.eval.replay import replay

    judged = verdicts.load(args.audit) if args.audit else None  # a bad file fails before the long walk
    if args.near_misses and not args.near_misses.resolve().parent.is_dir():
        from comind.errors import ComindError

        raise ComindError(f"cannot write {args.near_misses}: no such folder")
    ws = _workspace(args)
    result = replay(ws, since=args.since, progress=_progress())
    if args.near_misses:
        _write_lines(args.near_misses, result.near_misses)
    data = result.to_json()
    if judged is not None:
        data = verdicts.audited(data, judged, str(args.audit))
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    recall = "n/a" if data["recall"] is None else f"{data['recall']:.2f}"
    print(
        f"{data['repo']} ({data['path']}) at {data['tip'][:12]}: {data['commits_walked']} commits, "
        f"{data['commits_scanned']} landings scanned ({data['merges_scanned']} merges), "
        f"{data['attempts_with_lines']} attempts with lines "
        f"(threshold {data['dead_end_threshold']}, min lines {data['dead_end_min_lines']})"
    )
    print(f"relands: {data['relands']} found, {data['relands_flagged']} flagged, recall {recall}")
    print(
        f"ordinary commits: {data['ordinary_commits']}, false flags: {data['false_flags']} "
        f"({data['false_flags_per_1000']:.2f} per 1,000)"
    )
    subject = data["by_subject"]
    if subject["relands"] != data["relands"]:
        sub_recall = "-" if subject["recall"] is None else f"{subject['recall']:.2f}"
        print(
            f"  by subject alone (relands said in the body only count as ordinary): {subject['relands']} relands, "
            f"recall {sub_recall}, {subject['false_flags']} false flags "
            f"({subject['false_flags_per_1000']:.2f} per 1,000)"
        )
    if "audit" in data:
        a = data["audit"]
        print(
            f"audited ({a['file']}): of {a['flags']} flags on ordinary commits, {a['re_proposals']} bring a "
            f"reverted change back, {a['judged_false']} judged false, {a['unaudited']} not judged: "
            f"{a['false_flags']} false flags ({a['false_flags_per_1000']:.2f} per 1,000)"
        )
        for what in ("stale", "ambiguous"):
            if a[what]:
                print(f"  {what} verdicts: {', '.join(a[what])}")
    print(f"time: {data['seconds'].get('total', 0):.1f} s ({data['diffs_computed']} changes diffed)")
    for title, items in (("flags", data["flags"]), ("missed relands", data["missed"])):
        if items:
            print(f"\n{title}:")
        for item in items:
            print(
                f"  {item['commit'][:12]} [{item['kind']}{'/' + item['form'] if 'form' in item else ''}] "
                f"{item['subject'][:100]}"
            )
            if item.get("landed_with"):
                print(
                    f"      landed with {len(item['landed_with'])} earlier commit(s) of one run, "
                    f"from {item['landed_with'][0][:12]}"
                )
            for m in item.get("matches", []):
                other = " (not the attempt it relands)" if item["kind"] == "reland" and not m["expected"] else ""
                how = (
                    f"creates again {', '.join(m['recreated'])}, the files"
                    if m["how"] == "files"
                    else f"moves {m['moved']}, the dependency move"
                    if m["how"] == "dependency"
                    else f"{again(m['matched'], m.get('added', m['matched']))} of {m['total']} lines"
                )
                what = (
                    f"{quoted(m['title'][:80])}, reverted in {m['revert'][:12]}"
                    if m.get("reverted")
                    else f"what {m['revert'][:12]} {quoted(m['revert_subject'][:80])} took out"
                    if m.get("revert_subject")  # the revert named none, nor quoted one
                    else f"the change {m['revert'][:12]} {quoted(m['title'][:80])} reverted"
                )  # the revert named none
                print(f"      {how} of {what}{other}")
            if item.get("note"):
                print(f"      {item['note']}")
            if item.get("verdict"):
                print(f"      audited: {item['verdict']['verdict']}: {item['verdict']['why'][:120]}")
    return 0


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """JSON lines, written whole or not at all."""
    from comind.checks.formats import atomic_write
    from comind.errors import ComindError

    try:
        atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    except OSError as exc:
        raise ComindError(f"cannot write {path}: {exc.strerror or exc}") from None


def run_harvest(args: argparse.Namespace) -> int:
    from comind.eval.coverage import harvest_coverage

    ws = _workspace(args)
    data = harvest_coverage(ws, progress=_progress())
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(
        f"{data['repo']} ({data['path']}) at {data['tip'][:12]}: {data['commits']} commits; records: "
        + (", ".join(f"{n} {k}" for k, n in data["records"].items()) or "none")
    )
    sections = [
        ("revert markers", data["markers"]),
        ("Lore keys", data["lore_keys"]),
        ("other counts", data["counts"]),
        ("unresolved", data["unresolved"]),
        ("ambiguous", {"reverts": data["ambiguous"]} if data["ambiguous"]["count"] else {}),
        ("trailer-like lines not taken", data["trailer_like_not_taken"]),
        ("skipped", data["skipped"]),
    ]
    for title, section in sections:
        if not section:
            continue
        print(f"\n{title}:")
        for key, entry in section.items():
            print(f"  {key}: {entry['count']}")
            for ex in entry["examples"]:
                print(f"      {ex}")
    return 0


def run_preflight(args: argparse.Namespace) -> int:
    from comind.eval.preflight import MomentWorkspace, evaluate

    result = evaluate(_workspace(args, MomentWorkspace), progress=_progress())
    data = result.to_json()
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0

    def rate(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    n = data["relands"]
    print(
        f"{data['repo']} ({data['path']}) at {data['tip'][:12]}: {data['commits']} commits, "
        f"{data['attempts']} attempts, {n} relands ({data['with_attempt']} with a harvested attempt)"
    )
    print(f"{'':<22} {'attempt shown':>14} {'recall':>7} {'with unrelated':>15} {'unrelated/reland':>17}")
    print(
        f"{'preflight --diff':<22} {data['diff_surfaced']:>14} {rate(data['diff_recall']):>7} "
        f"{data['diff_with_unrelated']:>15} {rate(data['diff_unrelated_per_reland']):>17}"
    )
    print(
        f"{'preflight --plan (@3)':<22} {data['plan_top3']:>14} {rate(data['plan_recall_at_3']):>7} "
        f"{data['plan_with_unrelated_in_top3']:>15} {rate(data['plan_unrelated_in_top3_per_reland']):>17}"
    )
    print(
        f"--diff flagged it as re-proposed: {data['diff_flagged']}, unrelated re-proposal flags: "
        f"{data['diff_unrelated_flags']}; --plan ranked it first: {data['plan_top1']} "
        f"(unrelated records ranked above it: {data['plan_unrelated_above']})"
    )
    print(f"time: {data['seconds'].get('total', 0):.1f} s")
    for case in data["cases"]:
        diff, plan = case["diff"], case["plan"]
        mark = ("D" if diff["surfaced"] else "-") + ("P" if plan["in_top3"] else "-")
        rank = plan["rank"] or "-"
        print(f"  {mark} {case['commit'][:12]} [{case['form']}] {case['subject'][:80]} (plan rank {rank})")
        if case.get("note") and not (diff["surfaced"] and plan["in_top3"]):
            print(f"      {case['note']}")
    return 0
