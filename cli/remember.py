"""comind remember KIND: write a record by hand (a person or an agent at the command line)."""

from __future__ import annotations

import argparse
import os
from typing import Any

# The flag table and field building are shared with the bot's /comind commands.
from comind.authoring import KIND_FLAGS, LIST_FLAGS, kind_fields, parse_evidence
from comind.errors import ComindError
from comind.records import KNOWLEDGE_KINDS

__all__ = ["KIND_FLAGS", "kind_fields", "parse_evidence", "provenance", "register", "run"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "remember",
        parents=[common],
        help="record an intent, decision, attempt, constraint, gotcha or question",
        description="Write a record. Anchors: PATH::Qual.name, PATH, PATH:LINE, module:dotted.name, "
        "dep:ECOSYSTEM/PACKAGE[@RANGE], repo:.",
    )
    p.add_argument(
        "kind", choices=[k for k in KNOWLEDGE_KINDS], metavar="KIND", help=f"one of {', '.join(KNOWLEDGE_KINDS)}"
    )
    p.add_argument("--on", action="append", default=[], metavar="ANCHOR", help="what the record is about (repeatable)")
    p.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="ANCHOR",
        help="code the record depends on; a change there makes it stale (repeatable)",
    )
    p.add_argument("--title", required=True)
    p.add_argument("--body", default="", help="markdown, at most 2 KB")
    p.add_argument("--trigger", default="", help='when it is relevant ("relevant when …")')
    p.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="E",
        help="a commit, URL, record id, test:PATH::NAME, a file, or text (repeatable)",
    )
    p.add_argument("--until", help="the record goes dormant after this date (YYYY-MM or YYYY-MM-DD)")
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
        help="constraint: a compiled check (graph, dependency, ast-grep, semgrep or test), validated first",
    )
    p.add_argument(
        "--pattern",
        metavar="FILE.yml",
        help="attempt: an ast-grep rule recognising the approach when it is proposed again",
    )
    kind_group = p.add_argument_group("kind fields")
    for flag in KIND_FLAGS:
        name = "--" + flag.replace("_", "-")
        if flag in LIST_FLAGS:
            kind_group.add_argument(
                name, action="append", default=[], help='"option | why not"' if flag == "alternative" else None
            )
        else:
            kind_group.add_argument(name)
    p.set_defaults(handler=run)


def provenance(ws: Any, args: argparse.Namespace) -> dict[str, Any]:
    from comind.actors import actor_id

    return {
        "actor": actor_id(ws.user_email(), ws.repo_name),
        "author_kind": getattr(args, "author_kind", None) or os.environ.get("COMIND_AUTHOR_KIND", "human"),
        "source": "cli",
        "repo": ws.repo_name,
        "branch": ws.branch(),
        "head_commit": ws.head(),
    }


def resolve_all(ws: Any, anchors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anchors resolved at HEAD (commit and fingerprints); as written in a repository without commits."""
    if not anchors or ws.head() is None:
        return anchors
    from comind.anchoring import resolve_anchor

    return [resolve_anchor(ws.index, a, "HEAD") for a in anchors]


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
    from comind.anchors import parse_anchor
    from comind.cli import workspace
    from comind.cli.output import print_written
    from comind.records import new_record

    ws = workspace(args)
    fields = kind_fields(args.kind, vars(args))
    fields.update(compiled_fields(args))
    anchors = [parse_anchor(a, "subject") for a in args.on] + [parse_anchor(a, "context") for a in args.context]
    anchors = resolve_all(ws, anchors)
    evidence = [parse_evidence(ws, e) for e in args.evidence]
    record = new_record(
        args.kind,
        title=args.title,
        body=args.body,
        trigger=args.trigger,
        anchors=anchors,
        evidence=evidence,
        fields=fields,
        provenance=provenance(ws, args),
        valid_from=ws.head(),
        until=args.until,
    )
    ws.store.put(record)
    print_written(record, args.json)
    return 0
