"""comind bot run|serve: the merge-request bot in CI, or as a webhook server."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from comind.cli import at_least_1


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "bot",
        parents=[common],
        help="the merge-request bot: /comind commands and the report",
        description="Answer /comind commands on a merge request, harvest it, and post the "
        "comind check report as one summary comment plus inline comments.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    r = actions.add_parser(
        "run",
        parents=[common],
        help="in CI: answer commands, harvest, check and post the report",
        description="Run inside GitHub Actions (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_EVENT_NAME, "
        "GITHUB_EVENT_PATH, GITHUB_API_URL) or a GitLab merge-request pipeline (CI_API_V4_URL, "
        "CI_PROJECT_ID, CI_MERGE_REQUEST_IID, and COMIND_GITLAB_TOKEN: an access token with the "
        "api scope). On comment events only the commands are answered.",
    )
    r.add_argument("--forge", choices=("github", "gitlab"), help="default: from the CI environment")
    r.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="post this report (written by comind check --format json) instead of running the check",
    )
    r.add_argument(
        "--number", type=at_least_1, metavar="N", help="the merge request (default: from the CI environment)"
    )
    r.add_argument(
        "--publish",
        action="store_true",
        help="write records from commands and threads to the shared store, not the local harvest cache",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="print the summary comment and inline comments it would post; write nothing to the forge",
    )
    r.set_defaults(handler=run_bot)
    s = actions.add_parser(
        "serve",
        parents=[common],
        help="a webhook server that answers /comind commands as they are written",
        description="Receive GitHub or GitLab webhooks (signed with COMIND_WEBHOOK_SECRET) and answer the "
        "/comind commands of the merge request a comment was written on. The forge token comes "
        "from COMIND_GITHUB_TOKEN/GITHUB_TOKEN or COMIND_GITLAB_TOKEN.",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    s.add_argument("--publish", action="store_true", help="write records to the shared store")
    s.set_defaults(handler=run_serve)


def run_bot(args: argparse.Namespace) -> int:
    from comind.bot.run import run_from_env
    from comind.cli import workspace

    ws = workspace(args)
    return run_from_env(
        ws,
        args.forge,
        os.environ,
        report_file=args.report,
        publish=args.publish,
        number=args.number,
        dry_run=args.dry_run,
    )


def run_serve(args: argparse.Namespace) -> int:
    import logging

    from comind.bot.run import serve
    from comind.cli import workspace

    ws = workspace(args)
    server = serve(ws, os.environ, host=args.host, port=args.port, publish=args.publish)
    logging.basicConfig(level=logging.INFO, format="comind: %(message)s")
    server.serve_forever()
    return 0
