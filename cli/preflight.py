"""comind preflight: what a change re-proposes, breaks or touches, before it is committed."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from comind.cli import at_least_1, revision

FORMATS = ("text", "json", "agent")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "preflight",
        parents=[common],
        help="before the commit: dead ends, constraints and records on what a change touches",
        # written out: the group below is not argparse-required, yet one of the three is
        usage="%(prog)s [-h] (--diff [RANGE] | --staged | --plan FILE) [--on ANCHOR] [--limit N]\n"
        "                        [--format {text,json,agent}]",
        description="Check a change before it is committed: --diff RANGE (A..B, A...B, or A: the working tree "
        "against A; none: the working tree, untracked files included, against HEAD) or --staged (the index). "
        "Exit codes as comind check.",
    )
    # not required by argparse: a path given alone is answered in run(), which can say what was meant
    what = p.add_mutually_exclusive_group()
    what.add_argument("--diff", nargs="?", const="", metavar="RANGE", help="a range, or the working tree")
    what.add_argument("--staged", action="store_true", help="the staged change")
    what.add_argument("--plan", metavar="FILE", help="a plan in words (a file, or - for stdin): records ranked for it")
    p.add_argument("--on", action="append", default=[], metavar="ANCHOR", help="--plan: code the plan is about")
    p.add_argument("--limit", type=at_least_1, metavar="N", help="--plan: at most this many records (default 10)")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or agent")
    p.add_argument("paths", nargs="*", help=argparse.SUPPRESS)  # FILE, typed for "before I edit FILE"
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from comind.cli import workspace
    from comind.cli.output import AGENT_MARK, hint_if_unharvested
    from comind.errors import ComindError

    if args.paths:
        import os

        path = args.paths[0]
        raise ComindError(f"preflight {path!r}: {_not_a_path()} {_why(path, os.path.isdir(path))}")
    if args.diff is None and not args.staged and args.plan is None:
        raise ComindError("preflight: one of the arguments --diff --staged --plan is required")
    if args.plan is None:  # a plan's flags on a change would be ignored: refused, as MCP refuses `on`
        for flag, given in (("--on", args.on), ("--limit", args.limit is not None)):
            if given:
                raise ComindError(
                    f"preflight: {flag} applies to --plan, not to {'--staged' if args.staged else '--diff'}"
                )
    ws = workspace(args)
    result = _plan(ws, args) if args.plan is not None else _change(ws, args)
    hint_if_unharvested(ws)
    from comind.agents.preflight import SECTIONS
    from comind.agents.render import render, run_hint

    for warning in result.warnings:
        print(f"comind: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    elif args.format == "agent":
        # the same question in text, which lists every item (a plan read from stdin cannot be asked again)
        more = run_hint(*_as_text(args)) if args.plan != "-" else "comind preflight --format text lists every one"
        block = render([i.entry for i in result.items], attributes={"on": "preflight"}, more=more)
        if block.text:
            print(block.text)
    else:
        if not result.items:
            print(result.nothing())
        last = None
        for item in result.items:
            if item.section != last:
                print(f"{SECTIONS.get(item.section, 'ranked for the plan')}:")
                last = item.section
            e = item.entry
            mark = f"  {AGENT_MARK}" if e.author == "agent" else ""
            print(f"  {item.level:<7} {e.kind:<10} T{e.trust} {e.state:<10} {e.id[-8:]}  {e.title}{mark}")
            for line in item.message.splitlines():  # whole: a cut at 300 made "held by 2 of the 1,186" "of the 1"
                print(f"          {line}")
            if e.verify:
                print(f"          {e.verify}")
        if result.unread:  # (the warning on stderr says which and why)
            n = len(result.unread)
            print(f"comind preflight: partial result, {n} changed file{'s' if n != 1 else ''} could not be read")
    return int(result.exit_code(ws.config.fail_level))


def _as_text(args: argparse.Namespace) -> list[str]:
    """The command asked, in the text format: `comind preflight --plan plan.md --on app/ --limit 5`."""
    if args.plan is not None:
        words = ["--plan", args.plan, *(w for a in args.on for w in ("--on", a))]
        return ["comind", "preflight", *words, *(["--limit", str(args.limit)] if args.limit else [])]
    if args.staged:
        return ["comind", "preflight", "--staged"]
    return ["comind", "preflight", "--diff", *([args.diff] if args.diff else [])]


def _not_a_path() -> str:
    return "preflight checks a change (--diff [RANGE], --staged) or a plan (--plan FILE), not a file;"


def _why(path: str, folder: bool = False) -> str:
    """The question a path given to preflight meant, as `comind why` takes it (a folder with its slash)."""
    import shlex

    anchor = path.rstrip("/") + "/" if folder else path
    return f"what is known about a file before you edit it: comind why {shlex.quote(anchor)}"


def _change(ws: Any, args: argparse.Namespace) -> Any:
    from comind.agents.worktree import PendingTree
    from comind.errors import ComindError

    spec = args.diff or None
    for rev in re.split(r"\.{2,3}", spec or ""):  # a typo is named as --base's is, before any work
        try:
            revision(ws, rev or None, "--diff")
        except ComindError:
            named = [where / rev for where in (ws.cwd, ws.root) if rev == spec and (where / rev).exists()]
            if named:  # `--diff FILE`: "what should I know before editing FILE"
                said = f"--diff {rev!r}: a path, not a revision; {_not_a_path()} {_why(rev, named[0].is_dir())}"
                raise ComindError(said) from None
            raise
    # git writes the tree of the working tree (or the index) while the check machinery is imported
    tree = None if spec and ".." in spec else PendingTree(ws.root, ws.head_dir, staged=args.staged)
    from comind.agents.preflight import preflight_change, resolve
    from comind.query import open_ledger

    base, head, written = resolve(ws, spec, staged=args.staged, tree=tree)
    return preflight_change(ws, open_ledger(ws), base, head, "staged" if args.staged else "diff", written=written)


def _plan(ws: Any, args: argparse.Namespace) -> Any:
    from pathlib import Path

    from comind.agents.preflight import preflight_plan
    from comind.anchors import parse_anchor, typed_in
    from comind.errors import ComindError
    from comind.query import open_ledger

    try:
        text = sys.stdin.read() if args.plan == "-" else Path(args.plan).read_text(encoding="utf-8")
    except FileNotFoundError:  # most often the plan itself, typed where its file goes
        raise ComindError(
            f"--plan {_cut(args.plan)!r}: no such file (--plan reads a file, or stdin with -: "
            "echo 'the plan' | comind preflight --plan -)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ComindError(f"--plan {args.plan}: cannot read it ({exc})") from None
    on = [parse_anchor(typed_in(a, ws.root, ws.cwd)) for a in args.on]  # relative to -C or the current folder
    return preflight_plan(ws, open_ledger(ws), text, on, args.limit or 10)


def _cut(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
