"""comind remember KIND: write a record by hand (a person or an agent at the command line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.checks.context import CheckContext
    from comind.checks.interface import Check
    from comind.records import Record
    from comind.workspace import Workspace

import argparse
import os
import sys
from typing import Any

# The flag table and field building are shared with the bot's /comind commands.
from comind.authoring import KIND_FLAGS, LIST_FLAGS, authored_record, kind_fields, parse_evidence, until_flag
from comind.errors import ComindError, ValidationError
from comind.records import KNOWLEDGE_KINDS, quoted, short_id

__all__ = ["KIND_FLAGS", "kind_fields", "parse_evidence", "provenance", "register", "run"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "remember",
        parents=[common],
        help="record an intent, decision, attempt, constraint, gotcha or question",
        description="Write a record. Anchors: PATH::Qual.name, PATH, PATH:LINE, module:dotted.name, "
        "dep:ECOSYSTEM/PACKAGE[@RANGE], repo:. Namesakes in one file: the last is PATH::name, those "
        "before it PATH::name#1, PATH::name#2, ….",
    )
    p.add_argument(
        "kind", choices=[k for k in KNOWLEDGE_KINDS], metavar="KIND", help=f"one of {', '.join(KNOWLEDGE_KINDS)}"
    )
    p.add_argument(
        "--on",
        action="append",
        default=[],
        metavar="ANCHOR",
        help="what the record is about (repeatable), e.g. --on app/cart.py::Cart.total",
    )
    p.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="ANCHOR",
        help="code the record depends on; a change there makes it stale (repeatable), e.g. --context app/db.py",
    )
    p.add_argument("--title", required=True, help='one line naming it, e.g. --title "No raw SQL in handlers"')
    p.add_argument("--body", default="", help='markdown, at most 2 KB, e.g. --body "See the incident of 3 May."')
    p.add_argument("--trigger", default="", help='when it is relevant, e.g. --trigger "adding a cache"')
    p.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="E",
        help="a commit, URL, record id, test:PATH::NAME, a file, or text (repeatable), e.g. --evidence 1a2b3c4",
    )
    p.add_argument(
        "--until",
        metavar="DATE",
        help="the record goes dormant after this date: YYYY-MM-DD, or YYYY-MM for the end of that month, e.g. 2027-06",
    )
    p.add_argument(
        "--author-kind",
        choices=("human", "agent"),
        default=os.environ.get("COMIND_AUTHOR_KIND", "human"),
        help="agents should pass agent (or set COMIND_AUTHOR_KIND=agent): their records start at T1",
    )
    p.add_argument("--json", action="store_true", help="print the record instead of its id")
    p.add_argument(
        "--check",
        metavar="FILE.yml",
        help="constraint: a compiled check (graph, dependency, ast-grep, semgrep or test), validated first, "
        "e.g. --check checks/no-raw-sql.yml",
    )
    p.add_argument(
        "--pattern",
        metavar="FILE.yml",
        help="attempt: an ast-grep rule recognising the approach when it is proposed again, "
        "e.g. --pattern checks/redis-grants.yml",
    )
    kind_group = p.add_argument_group("kind fields (each applies to the kinds it names)")
    for flag, (_, kinds) in KIND_FLAGS.items():
        name = "--" + flag.replace("_", "-")
        text = f"{'/'.join(kinds)}: {KIND_HELP.get(flag, flag.replace('_', ' '))}"
        if flag in LIST_FLAGS:
            kind_group.add_argument(name, action="append", default=[], metavar="TEXT", help=text + " (repeatable)")
        else:
            kind_group.add_argument(name, metavar="TEXT", help=text)
    p.set_defaults(handler=run)


# One line of help and an example for each kind field (KIND_FLAGS says which kinds take it).
KIND_HELP = {
    "need": 'what is needed and for whom, e.g. --need "revoke a session within a minute"',
    "chosen": 'the option taken, e.g. --chosen "server-side sessions in Redis"',
    "alternative": 'an option not taken, "option | why not", e.g. --alternative "JWT | cannot be revoked"',
    "approach": 'what was tried, e.g. --approach "cache grants in Redis"',
    "outcome": "how it ended: failed, reverted, abandoned or partial, e.g. --outcome reverted",
    "retry_when": 'when trying it again makes sense, e.g. --retry-when "grants carry a version"',
    "conditions": 'what held when it was tried, e.g. --conditions "Redis 6, one region"',
    "rule": 'the rule, stated so that a change can be judged by it, e.g. --rule "handlers use the ORM"',
    "severity": "must or should, e.g. --severity must (a broken must is an error, a should a warning)",
    "exception": 'where the rule does not hold, e.g. --exception "migrations/"',
    "symptom": 'what one sees, e.g. --symptom "tests hang on macOS"',
    "cause": 'why it happens, e.g. --cause "fork() after threads started"',
    "workaround": 'what to do about it, e.g. --workaround "set the spawn start method"',
    "question": 'the open question, e.g. --question "who owns the billing schema?"',
    "constraint": "the constraint it suppresses (its record id), e.g. --constraint 5e0c4f1a",
    "reason": 'why (an attempt: why it failed; a suppression: why it is fine here), e.g. --reason "flaky"',
    "owner": "who answers for the suppression, e.g. --owner @payments",
    "expires": "the suppression ends on this date (YYYY-MM-DD), e.g. --expires 2027-01-31",
}


def provenance(ws: Workspace, args: argparse.Namespace, *, create: bool = True) -> dict[str, Any]:
    """Who writes (pseudonymous); `create`: the store's actor key made now if it has none."""
    from comind.actors import actor_id

    return {
        "actor": actor_id(ws.user_email(), ws.actor_salt(create=create)),
        "author_kind": getattr(args, "author_kind", None) or os.environ.get("COMIND_AUTHOR_KIND", "human"),
        "source": "cli",
        "repo": ws.repo_name,
        "branch": ws.branch(),
        "head_commit": ws.head(),
    }


def compiled_fields(args: argparse.Namespace) -> dict[str, Any]:
    """--check (constraints) and --pattern (attempts): read, compiled once to validate, then stored."""
    out: dict[str, Any] = {}
    for flag, kind, field in (("check", "constraint", "check"), ("pattern", "attempt", "pattern")):
        path = getattr(args, flag)
        if path is None:
            continue
        if args.kind != kind:
            raise ComindError(f"--{flag} applies to a {kind}, not to a {args.kind}")
        from comind.checks.types import compile_check, load_check_file

        spec = load_check_file(path)
        if flag == "pattern" and spec.get("type", "ast-grep") != "ast-grep":
            raise ComindError(f"--pattern {path}: an attempt's pattern is an ast-grep rule, not {spec['type']!r}")
        compile_check("", spec)
        out[field] = spec
    return out


def run(args: argparse.Namespace) -> int:
    from comind.anchors import typed_in
    from comind.cli import workspace
    from comind.cli.output import print_written, stored_where
    from comind.query import current_time

    today = current_time().date()
    until, last_day = until_flag(args.until) if args.until is not None else (None, None)
    passed = last_day is not None and last_day < today  # a record kept as history: said
    ws = workspace(args)
    fields = kind_fields(args.kind, vars(args), today)  # a suppression expired already: refused
    fields.update(compiled_fields(args))
    if args.kind == "suppression":
        _names_a_constraint(ws, str(fields.get("constraint", "")))
    try:
        record = authored_record(
            ws,
            args.kind,
            title=args.title,
            body=args.body,
            trigger=args.trigger,
            on=[typed_in(a, ws.root, ws.cwd) for a in args.on],  # as typed here: relative to -C or the current folder
            context=[typed_in(a, ws.root, ws.cwd) for a in args.context],
            evidence=args.evidence,
            cwd=ws.cwd,
            fields=fields,
            provenance=lambda create: provenance(ws, args, create=create),
            until=until,
        )
    except ValidationError as exc:  # said as the flags that set the fields: what the user typed
        raise ComindError("; ".join(_flag_problem(problem, args.kind) for problem in exc.problems)) from None
    ws.store.put(record)
    dormant = f" (dormant after {last_day.isoformat()})" if last_day else ""
    print_written(
        record,
        args.json,
        f"remembered {args.kind} {short_id(record.id)} {quoted(record.title)}{dormant} {stored_where(ws)}",
    )
    if passed:
        print(
            f"comind: warning: --until {until}: {last_day} has passed; the record is dormant already", file=sys.stderr
        )
    if "check" in record.fields:
        _warn_unmatched(ws, record)
    return 0


def _flag_problem(problem: str, kind: str) -> str:
    """`fields.cause: required` as `--cause is required for a gotcha`; other problems as they are."""
    field, sep, what = problem.partition(": ")
    name = field.removeprefix("fields.")
    if not sep or not field.startswith("fields.") or name not in KIND_FLAGS:
        return f"invalid record: {problem}"
    flag = "--" + name.replace("_", "-")
    return f"{flag} is required for a {kind}" if what == "required" else f"{flag}: {what}"


def _names_a_constraint(ws: Workspace, ref: str) -> None:
    """A suppression's --constraint names a constraint of the ledger as `comind check` matches it:
    its id, its short id, or its check's rule id (a typo would suppress nothing, silently)."""
    from comind.checks.interface import names_check, rule_id
    from comind.errors import ComindError
    from comind.query import open_ledger

    wanted = ref.strip()
    ledger = open_ledger(ws)
    try:
        for r in ledger.all():
            spec = r.fields.get("check")
            rule = rule_id(r.id, spec if isinstance(spec, dict) else {})
            if r.kind == "constraint" and names_check(wanted, r.id, rule):
                return
    finally:
        ledger.close()
    raise ComindError(f"--constraint {ref!r}: names no constraint of the ledger (its id, or its check's rule id)")


def _warn_unmatched(ws: Workspace, record: Record) -> None:
    """Warn on stderr of each selector of the new check that matches nothing at HEAD, as
    ``comind check`` does (HEAD's code index is the one the anchors were resolved in); of a check
    that cannot run here, say only that, as ``comind check`` reports only its not_run."""
    if ws.head() is None:
        return
    from comind.checks.context import CheckContext
    from comind.checks.evaluate import unmatched_warnings
    from comind.checks.types import check_of

    check = check_of(record)
    if check is None:
        return
    ctx = CheckContext(ws.index, work_tree=ws.root)
    reason = check.cannot_run(ctx)
    if reason is not None:
        print(
            f"comind: warning: constraint {short_id(record.id)} ({check.type}) cannot be checked here: {reason}",
            file=sys.stderr,
        )
        return
    head = ctx.commit("HEAD")
    ctx.set_change(None, head)
    if not getattr(check, "run", False):  # (a test check that runs its test: not run here)
        _note_violations(record, check, ctx, head)
    for line in unmatched_warnings(record.id, check, ctx, head):
        print(f"comind: warning: at HEAD, {line}", file=sys.stderr)


def _note_violations(record: Record, check: Check, ctx: CheckContext, head: str) -> None:
    """Say when the new check fails at HEAD already: `comind check` holds a change only to the
    violations it adds, so its "no findings" would otherwise read as the constraint holding."""
    from comind.cli import note

    found = type(check).evaluate_many([check], ctx, head)[check].violations
    if not found:
        return
    where = ", ".join(f"{v.path}:{v.line}" if v.line else str(v.path or "the repository") for v in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    count = f"{len(found)} violation{'s' * (len(found) != 1)}"
    note(
        f"comind: note: constraint {short_id(record.id)} ({check.type}) finds {count} at HEAD already: "
        f"{where}{more}; comind check reports only those a change adds (--all lists every one)"
    )
