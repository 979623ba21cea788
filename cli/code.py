"""comind why, status and index: records against the code."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    why = sub.add_parser(
        "why",
        parents=[common],
        help="the records behind a symbol, file or line",
        description="Records anchored to ANCHOR (path::Qual.name, path, path:line, module:x, "
        "dep:eco/pkg), then those one import or call away, labelled. Namesakes in one file: the last "
        "is path::name, those before it path::name#1, path::name#2, …; path::name asks about them all.",
    )
    why.add_argument("anchor")
    why.add_argument("--at", metavar="REV", help="answer as of a revision: records known then, code then")
    why.add_argument("--all", action="store_true", help="include superseded and retracted records, labelled")
    why.add_argument("--json", action="store_true", help="one JSON object per line")
    why.set_defaults(handler=run_why)

    status = sub.add_parser(
        "status", parents=[common], help="counts by status, the records that need a person, then history"
    )
    status.add_argument("--json", action="store_true", help="counts and records as JSON, one object per line")
    status.set_defaults(handler=run_status)

    index = sub.add_parser("index", parents=[common], help="build the code index cache of a revision")
    index.add_argument("--rev", default="HEAD", help="the revision to index (default HEAD), e.g. --rev origin/main")
    index.set_defaults(handler=run_index)


def progress_printer(label: str) -> Any:
    """A progress bar on a terminal; nothing in CI logs (the caller prints one summary line)."""
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
        sys.stderr.flush()

    return show


def run_index(args: argparse.Namespace) -> int:
    import time

    from comind.cli import revision, workspace

    ws = workspace(args)
    start = time.perf_counter()
    snapshot = ws.index.snapshot(revision(ws, args.rev, "--rev"), progress=progress_printer("indexing"))
    s = snapshot.stats
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(s.skipped.items()) if n) or "none"
    print(
        f"indexed {snapshot.commit[:10]}: {len(snapshot.files)} files ({s.parsed} parsed, {s.cached} from cache), "
        f"skipped {skipped}, {s.errors} with parse errors, {time.perf_counter() - start:.2f} s"
    )
    return 0


def run_status(args: argparse.Namespace) -> int:
    from collections import Counter

    from comind.checks.formats._base import plural
    from comind.cli import workspace
    from comind.cli.output import brief, hint_if_unharvested, print_json_lines, record_json
    from comind.query import open_ledger, statuses
    from comind.sanitize import printed
    from comind.status import ATTENTION_STATES, STATES, attention, is_history

    ws = workspace(args)
    ledger = open_ledger(ws)
    records = [r for r in ledger.all() if r.kind != "relation"]
    derived = statuses(ws, ledger, records)
    counts = Counter(derived[r.id].state for r in records)
    # What needs a person (authored records the code moved away from, what an agent wrote or
    # reviewed) apart from history (harvested evidence: it stays true, whatever the code does now).
    why = {r.id: reason for r in records if (reason := attention(r, derived[r.id])) is not None}
    waiting = [r for r in records if r.id in why]
    history = [r for r in records if is_history(r)]
    history_counts = Counter(derived[r.id].state for r in history)
    if args.json:
        print_json_lines(
            [
                {
                    "counts": {s: counts.get(s, 0) for s in STATES},
                    "history": {s: history_counts.get(s, 0) for s in STATES},
                    "needs_person": len(waiting),
                    "head": ws.head(),
                }
            ]
        )
        print_json_lines(record_json(r, derived[r.id]) | {"needs_person": True, "why": why[r.id]} for r in waiting)
        return 0
    if len(history) < len(records) or not records:  # (all history: its own line below says the counts)
        print("  ".join(f"{s} {counts[s]}" for s in STATES if counts.get(s)) or "no records")
    if not history:  # (written records alone are not the history: say so, however many)
        hint_if_unharvested(ws)
    if waiting:
        print(f"needs a person ({len(waiting)}):")
    for r in waiting:
        reason = printed(brief(why[r.id], r.id))
        print(f"{derived[r.id].state:<12} {r.id[-8:]}  {printed(r.title)}\n             {reason}")
    if waiting:
        print("confirm or retract them: comind review confirm ID | comind review retract ID --reason …")
    if history:
        # the code moved on from these, and they are still matched; not so of a retracted or dormant one
        moved = [f"{history_counts[s]} {s}" for s in ATTENTION_STATES if history_counts.get(s)]
        other = [
            f"{history_counts[s]} {s}"
            for s in STATES
            if history_counts.get(s) and s not in (*ATTENTION_STATES, "active")
        ]
        kinds = Counter(r.kind for r in history)
        print(
            f"history: {plural(len(history), 'harvested record')} "
            f"({', '.join(plural(n, k) for k, n in sorted(kinds.items()))}), "
            f"{history_counts.get('active', 0)} active"
            + "".join(f", {counted}" for counted in other)
            + (f", {', '.join(moved)} (the code moved on since; still matched)" if moved else "")
            + ("" if any(r.id in why for r in history) else "; nothing to confirm")  # an agent's review waits
        )
        if moved:
            flags = " ".join(f"--status {s}" for s in ATTENTION_STATES if history_counts.get(s))
            print(f"  list them: comind log {flags}")
    return 0


def run_why(args: argparse.Namespace) -> int:
    from comind.anchoring import file_moves
    from comind.anchors import typed_in
    from comind.cli import revision, workspace
    from comind.cli.output import (
        AGENT_MARK,
        asked_first,
        brief_lines,
        hint_if_unharvested,
        paint,
        print_json_lines,
        record_json,
        use_colour,
    )
    from comind.query import open_ledger
    from comind.sanitize import printed
    from comind.status import TRUST_NAMES, by_agent, is_history
    from comind.why import explain

    ws = workspace(args)
    anchor = typed_in(args.anchor, ws.root, ws.cwd)  # as typed here: relative to -C or the current folder
    ledger = open_ledger(ws)
    answer = explain(ws, ledger, anchor, at=revision(ws, args.at, "--at"), include_all=args.all)
    if args.json:
        print_json_lines(record_json(item.record, item.status) | {"relevance": item.relevance} for item in answer.items)
        return 0
    colour = use_colour()
    print(printed(answer.heading))
    if not answer.items:
        print("  no records")
    hint_if_unharvested(ws, ledger)
    last = None
    for item in answer.items:
        group = "direct" if item.relevance == "direct" else "one hop away"
        if group != last:
            if group != "direct":
                print("one hop away:")
            last = group
        s = item.status
        label = paint(f"{s.state:<12}", s.state, colour)
        how = item.relevance.removeprefix("one hop: ")  # (its heading says "one hop away")
        hop = f"  ({how})" if item.relevance != "direct" else ""
        hop += "  [history]" if is_history(item.record) else ""
        hop += f"  {AGENT_MARK}" if by_agent(item.record) else ""
        print(
            f"  {item.record.kind:<10} {label} {TRUST_NAMES[s.trust][:2]}  {item.record.id[-8:]}  "
            f"{printed(item.record.title + hop)}"
        )
        asked = {p for p in (answer.path, (item.anchor or {}).get("path")) if p}
        reason, notes, elsewhere = asked_first(s.reason, list(s.notes), asked)
        for part in brief_lines(reason, item.record.id):
            print(f"             {printed(part)}")
        moves, notes = file_moves(notes)
        for note in moves + notes:
            print(f"             note: {printed(note)}")
        if elsewhere:
            notes_word = "note" if elsewhere == 1 else "notes"
            print(f"             and {elsewhere} {notes_word} on its other code (comind show {item.record.id[-8:]})")
        for mark in s.marks:
            print(f"             mark: {printed(mark)}")
    return 0
