"""comind check: the CI entry point."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from comind.cli import note, quiet, revision
from comind.errors import ComindError

if TYPE_CHECKING:
    from comind.workspace import Workspace


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "check",
        parents=[common],
        help="report what a change re-proposes, breaks or makes stale",
        description="Harvest what is new, index base and head, evaluate constraints (only violations the change "
        "introduces), match the change against dead ends and report stale records. Without --base: "
        "the merge base with the default branch, or every finding at head when HEAD is that branch.",
    )
    p.add_argument(
        "--base", metavar="REV", help="the baseline revision (a merge request's target), e.g. --base origin/main"
    )
    p.add_argument(
        "--head", metavar="REV", default="HEAD", help="the revision checked (default HEAD), e.g. --head HEAD~1"
    )
    p.add_argument(
        "--staged",
        action="store_true",
        help="check what is staged (git add) against HEAD, as a pre-commit hook does; implies --no-harvest",
    )
    p.add_argument(
        "--all",
        action="store_true",
        dest="check_all",
        help="report everything at head, not a change: every violation (not with --base or --staged)",
    )
    p.add_argument(
        "--format",
        default=None,
        metavar="FORMAT",
        help="text (default), json, sarif, github, gitlab or markdown, e.g. --format markdown",
    )
    p.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="FORMAT=FILE",
        help="also write FORMAT to FILE, in an existing folder (repeatable), e.g. --output sarif=comind.sarif",
    )
    p.add_argument(
        "--filter",
        dest="filter_mode",
        choices=("added", "diff-context", "file", "none"),
        default="none",
        help="report only findings on added lines, within the diff's context, in changed files, or "
        "everywhere (none, the default), as reviewdog's filter modes; findings with no place are kept",
    )
    p.add_argument("--no-harvest", action="store_true", help="do not harvest new history first")
    p.add_argument("--list-rules", action="store_true", help="print the rulebook (ids, options, defaults) and exit")
    p.set_defaults(handler=run)


def _outputs(args: argparse.Namespace) -> dict[str, Path | None]:
    from comind.checks.formats import FORMATS

    outputs: dict[str, Path | None] = {}
    for spec in args.output:
        name, sep, path = spec.partition("=")
        if not sep or not path:
            raise ComindError(f"--output {spec!r}: expected FORMAT=FILE, e.g. sarif=comind.sarif")
        if not Path(path).parent.is_dir():  # a typo in a path is an error, not a new folder
            raise ComindError(f"--output {spec}: the folder {Path(path).parent} does not exist")
        if Path(path).is_dir():  # (before the check runs: its report would have nowhere to go)
            raise ComindError(f"--output {spec}: {path} is a folder; name a file in it")
        outputs[name] = Path(path)
    outputs[args.format or "text"] = None
    for name in outputs:
        if name not in FORMATS:
            raise ComindError(f"unknown format {name!r} (one of {', '.join(FORMATS)})")
    return outputs


def _staged(ws: Workspace) -> str:
    """A commit of the index on top of HEAD, on no ref, as preflight writes it: a fixed identity and
    HEAD's dates, so it needs no git identity (a CI container has none) and the same index makes the
    same commit."""
    from comind.agents.worktree import uncommitted_commit

    if ws.head() is None:
        raise ComindError("--staged: the repository has no commit to compare with")
    head = str(ws.index.resolve("HEAD").id)
    return uncommitted_commit(ws.index.repo, ws.root, ws.head_dir, head, staged=True)


def _progress() -> Any:
    if not sys.stderr.isatty() or os.environ.get("CI") or quiet():
        return None
    return lambda message: sys.stderr.write(f"\r\033[Kcomind: {message}…") and sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    from comind.checks.formats import FormatContext, github, plural, render_all
    from comind.checks.run import run_check
    from comind.cli import workspace
    from comind.cli.output import hint_if_unharvested, use_colour
    from comind.harvest.run import written_words

    if args.list_rules:
        from comind.rulebook import listing

        sys.stdout.write(listing())
        return 0
    if args.check_all and (args.base or args.staged):  # (--all looks at head alone: a change's dead ends go unseen)
        given = f"--base {args.base}" if args.base else "--staged"
        raise ComindError(f"--all checks everything at head, not a change: {given} does not apply")
    ws = workspace(args)
    outputs = _outputs(args)  # bad formats fail before any work
    progress = _progress()
    base, head, harvest = revision(ws, args.base, "--base"), args.head, not args.no_harvest
    if head != "HEAD":  # (HEAD itself: a repository without commits says so itself)
        revision(ws, head, "--head")
    if args.staged:
        if args.head != "HEAD":
            raise ComindError(f"--staged checks the index against HEAD: --head {args.head} does not apply")
        base, head, harvest = base or "HEAD", _staged(ws), False
    report = run_check(
        ws,
        base=base,
        head=head,
        check_all=args.check_all,
        harvest=harvest,
        progress=progress,
        filter_mode=args.filter_mode,
    )
    if progress:
        sys.stderr.write("\r\033[K")
    if not harvest:
        hint_if_unharvested(ws)
    harvested = report.stats.get("harvest") or {}
    if harvested.get("commits") and not quiet():
        relations = report.stats.get("relations", 0)  # (new records count them too)
        print(
            f"comind: harvested {plural(harvested['commits'], 'new commit')}: "
            f"{written_words(harvested['new'], harvested['rederived'])}; "
            f"{plural(report.stats.get('records', 0), 'record')} "
            "in the ledger" + (f" and {plural(relations, 'relation')} between them" if relations else ""),
            file=sys.stderr,
        )
    context = FormatContext.from_env(colour=use_colour(), repo_root=ws.root, head_sha=report.head)
    printed = render_all(report, outputs, context)
    for text in printed.values():
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    if "github" in outputs and context.job_summary:
        problem = github.write_summary(report, context)
        if problem is not None:
            print(f"comind: warning: {problem}", file=sys.stderr)
    if args.base and not args.staged and report.base == report.head:
        note(f"comind: {head} has no commit that {args.base} lacks: nothing was checked (--base is the target)")
    if args.check_all and not quiet() and _ahead_of_default(ws, report.head):
        note(ALL_ON_A_BRANCH)
    if head == "HEAD" and not quiet() and _uncommitted(ws.root):
        note("comind: uncommitted changes are not checked (check reads commits): `comind preflight --diff` reads them")
    return report.exit_code(ws.config.fail_level)


ALL_ON_A_BRANCH = (
    "comind: --all reports the code at head, not this branch's change: `comind check` matches it against dead ends"
)


def _ahead_of_default(ws: Any, head: str) -> bool:
    """Has `head` commits the default branch lacks (a branch's change, which `--all` does not match)?"""
    tip = ws.default_tip()
    return bool(tip and head and tip != head and not ws.index.repo.descendant_of(tip, head))


def _uncommitted(root: Path) -> bool:
    """Do the work tree or the index differ from HEAD in a tracked file? (git's own stat-cached test)"""
    import subprocess

    done = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=root, capture_output=True, check=False)
    return done.returncode == 1
