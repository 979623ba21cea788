"""comind ledger compact|audit|erase|export|import: looking after the store."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from comind.errors import ComindError

if TYPE_CHECKING:
    from comind.records import Record


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ledger", parents=[common], help="compact, audit, erase, export or import records")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    a = actions.add_parser("compact", parents=[common], help="write a snapshot of every record (one GET for readers)")
    a.set_defaults(handler=run_compact)
    a = actions.add_parser(
        "audit",
        parents=[common],
        help="list corrupt objects, conflicting versions, dangling relations, records a failed write left "
        "unjournaled and segments an interrupted compaction left (exit 1 if any)",
    )
    a.add_argument("--json", action="store_true", help="one JSON object per problem")
    a.add_argument(
        "--repair",
        action="store_true",
        help="journal the records a failed write left unjournaled; delete the segments a compaction left",
    )
    a.set_defaults(handler=run_audit)
    a = actions.add_parser("erase", parents=[common], help="delete records for good, leaving id-only tombstones")
    a.add_argument("ids", nargs="+", metavar="ID")
    a.set_defaults(handler=run_erase)
    a = actions.add_parser("export", parents=[common], help="every record as NDJSON")
    a.add_argument("--output", "-o", metavar="FILE", help="write here instead of standard output")
    a.add_argument("--source", choices=("all", "store", "harvest"), default="all", help="which records (default all)")
    a.set_defaults(handler=run_export)
    a = actions.add_parser("import", parents=[common], help="write records from NDJSON into the store")
    a.add_argument("file", metavar="FILE", help="an NDJSON file, or - for standard input")
    a.set_defaults(handler=run_import)


def run_compact(args: argparse.Namespace) -> int:
    from comind.cli import workspace

    ws = workspace(args)
    for name, store in (("store", ws.store), ("harvest cache", ws.harvest_store)):
        snapshot = store.compact()
        print(f"{name}: " + (f"wrote snapshot {snapshot}" if snapshot else "already compact"))
    return 0


def run_audit(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.cli.output import print_json_lines

    ws = workspace(args)
    ledger = ws.ledger()
    findings: list[dict[str, Any]] = []
    for source, store in ledger.sources.items():
        orphans = store.unjournaled()
        if orphans and args.repair:
            store.journal_keys(orphans)
            print(f"journaled {len(orphans)} record(s) a failed write left in {source}'s inbox", file=sys.stderr)
        elif orphans:
            reason = (
                "written, never journaled (its writer failed): readers that start from a snapshot miss it; --repair"
            )
            findings += [{"type": "unjournaled", "source": source, "key": key, "reason": reason} for key in orphans]
        leftovers = store.leftover_segments()
        if leftovers and args.repair:
            store.delete_leftovers(leftovers)
            print(f"deleted {len(leftovers)} object(s) an interrupted compaction left in {source}", file=sys.stderr)
        elif leftovers:
            reason = "a segment no snapshot names (its compaction stopped before naming it): nothing reads it; --repair"
            findings += [{"type": "leftover", "source": source, "key": key, "reason": reason} for key in leftovers]
    ledger.rebuild()
    for source, store in ledger.sources.items():
        for problem in store.verify():
            findings.append({"type": "corrupt", "source": source, "key": problem.key, "reason": problem.reason})
    for record_id, keys in ledger.conflicts():
        findings.append(
            {
                "type": "conflict",
                "record_id": record_id,
                "keys": keys,
                "reason": "one id with different contents; the earliest version is shown",
            }
        )
    known = {r.id for r in ledger.all()}
    for relation in ledger.relations():
        for end in ("target", "source"):
            ref = relation.fields.get(end)
            if ref and ref not in known:
                findings.append({"type": "dangling", "record_id": relation.id, "reason": f"its {end} {ref} is unknown"})
    if args.json:
        print_json_lines(findings)
    else:
        for f in findings:
            where = f.get("key") or f.get("record_id")
            print(f"{f['type']:<9} {f.get('source', '')} {where}: {f['reason']}".replace("  ", " "))
        print(f"{ledger.count()} records, {len(findings)} problem(s)", file=sys.stderr)
    return 1 if findings else 0


def _naming(relations: Iterable[Record], ids: set[str]) -> set[str]:
    """The relations whose source or target is one of `ids`, or one of those relations, and so on."""
    ends = {r.id: {r.fields.get("source"), r.fields.get("target")} for r in relations}
    found: set[str] = set()
    gone = set(ids)
    while more := {rid for rid, named in ends.items() if rid not in found and named & gone}:
        found |= more
        gone |= more
    return found


def run_erase(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.query import open_ledger

    ws = workspace(args)
    ledger = open_ledger(ws)
    asked = {ledger.get(ref).id for ref in args.ids}
    # the relations naming them go with them (a confirmation of nothing is a dangling edge, and names
    # it), and those naming those relations, until none is left
    ties = _naming(ledger.relations(), asked)
    ids = sorted(asked | ties)
    for store in (ws.store, ws.harvest_store, ws.branch_store):
        store.erase(ids)
    ledger.sync()
    with_ties = f" and {len(ties)} relation(s) naming them" if ties else ""
    print(f"erased {len(asked)} record(s){with_ties}; tombstones keep them from coming back")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from comind.cli import workspace

    ws = workspace(args)
    harvested = [ws.harvest_store, ws.branch_store]
    stores = {"store": [ws.store], "harvest": harvested, "all": [ws.store, *harvested]}
    seen: set[str] = set()
    lines: list[bytes] = []
    for store in stores[args.source]:
        for key, record in sorted(store.read().records.items()):
            if key not in seen:
                seen.add(key)
                lines.append(record.to_json())
    data = b"".join(line + b"\n" for line in lines)
    if args.output:
        from pathlib import Path

        from comind.errors import ComindError

        out = Path(args.output)
        if out.is_dir():
            raise ComindError(f"export: -o {args.output}: is a folder; name a file")
        from comind.checks.formats import atomic_write

        try:
            atomic_write(out, data, parents=False)
        except OSError as exc:
            raise ComindError(f"export: cannot write {args.output}: {exc.strerror}") from None
    else:
        sys.stdout.buffer.write(data)
    print(f"exported {len(lines)} record(s)", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.errors import ValidationError
    from comind.records import CorruptRecord, cleaned, load_record

    ws = workspace(args)
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else open(args.file, "rb").read()  # noqa: SIM115
    except OSError as exc:
        raise ComindError(f"import: cannot read {args.file}: {exc.strerror}") from None
    records = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(cleaned(load_record(line)))  # an older export may hold raw controls
        except (CorruptRecord, ValidationError) as exc:  # validate everything before writing anything
            raise ComindError(f"import: line {number}: {exc}; nothing was written") from None
    erased = ws.store.erased_ids()
    erased |= _naming([r for r in records if r.kind == "relation"], erased)  # (an export made before the erase)
    kept = [r for r in records if r.id not in erased]
    written = ws.store.put_many(kept)
    skipped = len(records) - len(kept)
    print(
        f"imported {written} new record(s), {len(kept) - written} already present"
        + (f", {skipped} erased and skipped" if skipped else "")
    )
    return 0
