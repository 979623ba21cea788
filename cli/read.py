"""comind log, show and search: reading the ledger."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from comind.cli import at_least_1
from comind.records import KNOWLEDGE_KINDS
from comind.status import STATES


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    log = sub.add_parser(
        "log",
        parents=[common],
        help="list records with their derived status",
        description="List records, oldest first, with their derived status: one line each (its reason is in "
        "--json and `comind show ID`).",
    )
    log.add_argument("--kind", action="append", choices=KNOWLEDGE_KINDS, default=[], help="only this kind (repeatable)")
    log.add_argument("--status", action="append", choices=STATES, default=[], help="only this status (repeatable)")
    log.add_argument("--history", action="store_true", help="include superseded and retracted records, labelled")
    log.add_argument("--json", action="store_true", help="one JSON object per line")
    log.set_defaults(handler=run_log)

    show = sub.add_parser("show", parents=[common], help="one record in full")
    show.add_argument("id", help="record id or unique prefix")
    show.add_argument("--json", action="store_true", help="print the record and its status as JSON")
    show.set_defaults(handler=run_show)

    search = sub.add_parser("search", parents=[common], help="full-text search over title, trigger and body")
    search.add_argument("text", nargs="+")
    search.add_argument(
        "--kind", action="append", choices=KNOWLEDGE_KINDS, default=[], help="only this kind (repeatable)"
    )
    search.add_argument("--history", action="store_true", help="include superseded and retracted records, labelled")
    search.add_argument("--limit", type=at_least_1, default=20, help="at most this many results (default 20)")
    search.add_argument("--json", action="store_true", help="one JSON object per line")
    search.set_defaults(handler=run_search)


def _print(results: Iterable[Any], as_json: bool) -> int:
    """Each result as it comes: a line of text, or one JSON object per line; how many."""
    import sys

    from comind.cli.output import line, print_json_lines, record_json, use_colour

    count = 0
    if as_json:
        for result in results:
            print_json_lines([record_json(result.record, result.status)])
            count += 1
        return count
    colour = use_colour()
    write = sys.stdout.write
    for result in results:
        write(line(result.record, result.status, colour) + "\n")
        count += 1
    return count


def run_log(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.cli.output import hint_if_unharvested
    from comind.query import open_ledger, select_all

    ws = workspace(args)
    ledger = open_ledger(ws)
    results = select_all(ws, ledger, kinds=args.kind, states=args.status, history=args.history)
    try:
        _print(results, args.json)  # streamed: each line written as its record is read
    finally:
        results.close()  # ends the read snapshot even when the reader went away (a closed pipe)
    hint_if_unharvested(ws, ledger)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.cli.output import detail, print_json_lines, record_json, use_colour
    from comind.query import open_ledger, statuses

    ws = workspace(args)
    ledger = open_ledger(ws)
    record = ledger.get(args.id)
    status = statuses(ws, ledger, [record]).get(record.id)
    if args.json:
        print_json_lines([record_json(record, status)])
    else:
        print(detail(record, status, use_colour(), moved_from(ws, record)))
    return 0


def moved_from(ws: Any, record: Any) -> dict[tuple[str, str], str]:
    """The versions an attempt's change moved its dependencies from (its `dep:` anchors name where
    to), read from the change's two commits (its fingerprint's base and head, the files it lists);
    {} when it moved none, or the clone lacks them (a partial clone would fetch them for a line)."""
    fingerprint = record.fields.get("fingerprint") if record.kind == "attempt" else None
    if not isinstance(fingerprint, dict) or not any(a.get("scope") == "dependency" for a in record.anchors):
        return {}
    import pygit2

    from comind.deps import moved
    from comind.promisor import promisor_remote

    repo = ws.index.repo
    if promisor_remote(repo) is not None:
        return {}
    files = [f for f in fingerprint.get("files", []) if isinstance(f, dict)]
    paths = (
        None if fingerprint.get("truncated") else [p for f in files for p in (f.get("path"), f.get("old_path")) if p]
    )
    try:
        before, after = (repo[str(fingerprint[side])].peel(pygit2.Tree) for side in ("base", "head"))
        old, _new, _direct = moved(before, after, paths)
    except (KeyError, ValueError, TypeError, pygit2.GitError):
        return {}
    return {key: version for key, (version, _path) in old.items()}


def run_search(args: argparse.Namespace) -> int:
    from comind.cli import note, workspace
    from comind.cli.output import hint_if_unharvested
    from comind.query import open_ledger, select

    ws = workspace(args)
    ledger = open_ledger(ws)
    query = " ".join(args.text)
    ranked = ledger.search(query)
    results = select(ws, ledger, ranked, kinds=args.kind, history=args.history, limit=args.limit)
    if not _print(results, args.json) and not hint_if_unharvested(ws, ledger):
        # as `why` says "no records": on stderr, so that standard output stays the results (none)
        among = f" (kind {', '.join(args.kind)})" if args.kind else ""
        note(f"comind: no records match {query!r}{among}")
    return 0
