"""comind harvest: reverts, Lore and other trailers from the git history into records."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "harvest",
        parents=[common],
        help="harvest reverts, Lore and other trailers from git history",
        description="Read the history new since the last harvest (HEAD and the default branch) and "
        "write the records it proves into the harvest cache (.git/comind/harvest), or "
        "into the shared store with --publish.",
    )
    p.add_argument("--since", metavar="REV", help="read only commits after REV (a commit, branch or tag, not a date)")
    p.add_argument("--full", action="store_true", help="read the whole history again")
    p.add_argument(
        "--publish",
        action="store_true",
        help="write into the shared store instead of the local cache (the whole default branch's "
        "history, however much a local harvest already read)",
    )
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(handler=run)


def _progress() -> Any:
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if total else ""
        sys.stderr.write(f"\rcomind: harvested {done} commit{'' if done == 1 else 's'}{end}")
        sys.stderr.flush()

    return show


def run(args: argparse.Namespace) -> int:
    from comind.cli import verbosity, workspace
    from comind.harvest.run import harvest
    from comind.sanitize import printed

    ws = workspace(args)
    # the term weights are the dead-end check's: left to it, but counted again with --full
    result = harvest(ws, since=args.since, full=args.full, publish=args.publish, progress=_progress(), weigh=args.full)
    if args.json:
        print(json.dumps(result.summary() | {"examples": result.examples}, sort_keys=True, indent=2))
        return 0
    print("nothing new since the last harvest" if result.up_to_date else result.line())
    if verbosity() > 0:  # -v: what was skipped, and why, with the commits it was seen at
        for reason, count in sorted(result.skipped.items(), key=lambda item: (-item[1], item[0])):
            seen = result.examples.get(f"skipped:{reason}", [])[:3]
            print(printed(f"  skipped {count} {reason}" + (f": {'; '.join(seen)}" if seen else "")))
    return 0
