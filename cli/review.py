"""comind review confirm|retract|dispute|supersede: relation records about other records."""

from __future__ import annotations

import argparse
from typing import Any

from comind.errors import ComindError


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "review",
        parents=[common],
        help="confirm, retract, dispute or supersede a record",
        description="Write a relation record about another record. An agent's review (COMIND_AUTHOR_KIND=agent) "
        "of a record no agent wrote waits until a person confirms it: comind review confirm RELATION_ID.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    for name, help_text in (
        ("confirm", "the record still holds (resets its staleness baseline); or an agent's review takes effect"),
        ("retract", "the record was wrong"),
        ("dispute", "the record is contested (kept, marked)"),
    ):
        a = actions.add_parser(name, parents=[common], help=help_text)
        a.add_argument("id", help="record id or unique prefix, e.g. 5e0c4f1a")
        a.add_argument("--reason", default="", help='why, e.g. --reason "checked against the new schema"')
        a.add_argument("--json", action="store_true", help="print the relation record instead of its id")
        a.set_defaults(
            handler=run, relation={"confirm": "confirms", "retract": "retracts", "dispute": "disputes"}[name]
        )
    s = actions.add_parser("supersede", parents=[common], help="a newer record replaces this one")
    s.add_argument("id", help="the record being replaced, e.g. 5e0c4f1a")
    s.add_argument("--by", required=True, metavar="NEW_ID", help="the record replacing it, e.g. --by 7d21b9e0")
    s.add_argument("--reason", default="", help='why, e.g. --reason "the API moved to v2"')
    s.add_argument("--json", action="store_true", help="print the relation record instead of its id")
    s.set_defaults(handler=run, relation="supersedes")


def run(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.cli.output import print_written, stored_where
    from comind.cli.remember import provenance
    from comind.query import open_ledger
    from comind.records import new_record, quoted, short_id
    from comind.status import review_check

    ws = workspace(args)
    ledger = open_ledger(ws)
    target = ledger.get(args.id)
    fields: dict[str, Any] = {"relation": args.relation, "target": target.id, "reason": args.reason}
    title = f"{args.relation} {target.title}"
    source = ledger.get(args.by) if args.relation == "supersedes" else None
    if source is not None:
        if source.id == target.id:
            raise ComindError("a record cannot supersede itself")
        fields["source"] = source.id
        title = f"{source.title} supersedes {target.title}"
    prov = provenance(ws, args)
    agent = prov["author_kind"] == "agent"
    review = target.kind == "relation" and target.provenance.get("author_kind") == "agent"
    if target.kind == "relation" and args.relation != "retracts" and not (args.relation == "confirms" and review):
        raise ComindError(
            f"{target.id[:8]} is a relation record: only retract applies to it (or confirm, to an agent's review)"
        )
    check = review_check(ledger.relations(), target, args.relation, source, agent=agent)
    if check.refused:
        raise ComindError(f"--by {check.refused}")
    if prior := check.holds:
        # the state asked for holds already: said, and the retraction that made it printed, as a
        # second run of a script expects; a second retraction would be a record with no effect
        already = f"{short_id(target.id)} {quoted(target.title)} is already retracted (relation {short_id(prior.id)})"
        print_written(prior, args.json, f"comind: {already}; nothing written")
        return 0
    if asked := check.asked:
        # an agent's retraction asked already and waiting: a second would wait beside it, changing nothing
        already = (
            f"{short_id(target.id)} {quoted(target.title)} already has an agent's retraction waiting for a person "
            f"(relation {short_id(asked.id)}, comind review confirm {short_id(asked.id)})"
        )
        print_written(asked, args.json, f"comind: {already}; nothing written")
        return 0
    if args.relation == "confirms" and target.kind != "relation" and not agent and (head := ws.head()):
        fields["commit"] = head  # the code as it is now becomes the record's new baseline (a person's confirmation)
    record = new_record("relation", title=title[:120], anchors=[], fields=fields, provenance=prov)
    ws.store.put(record)
    done = {"confirms": "confirmed", "retracts": "retracted", "disputes": "disputed", "supersedes": "superseded"}
    what = f"{done[args.relation]} {short_id(target.id)} {quoted(target.title)}"
    if args.relation == "supersedes":
        what += f" by {short_id(fields['source'])}"
    what += f" (relation {short_id(record.id)}) {stored_where(ws)}"
    if agent and args.relation == "confirms":
        what += "; an agent's confirmation is its review: it raises no trust and moves no staleness baseline"
    elif agent and target.provenance.get("author_kind") != "agent":
        what += (
            f"; an agent's review: it waits until a person confirms it "
            f"(comind review confirm {short_id(record.id)}), and {short_id(target.id)} keeps its status meanwhile"
        )
    elif review and args.relation == "confirms" and not agent:
        what += "; the agent's review now takes effect"
    print_written(record, args.json, what)
    return 0
