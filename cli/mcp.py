"""comind mcp: the ledger as a Model Context Protocol server over stdio, for coding agents."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the ledger to coding agents over MCP (stdio): why, preflight, remember, review",
        description="A Model Context Protocol server on stdin/stdout: tools why, preflight, remember and review, "
        "the resource template comind://why/{anchor} and the prompt why-is-this-like-this. What an agent "
        "writes through it is T1 and labelled as an agent's until a person confirms it.",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from comind.cli import workspace

    ws = workspace(args)  # not a git repository: one line and exit 2, before any protocol
    # The SDK (pydantic, anyio, starlette: ~300 ms) is imported only here, so that no other
    # command pays for it.
    from comind.agents.mcp.server import serve

    serve(ws)
    return 0
