"""comind hook AGENT EVENT: an agent CLI's hook (stdin JSON in, stdout JSON out);
comind init-hooks AGENT: comind's hooks merged into that agent's settings file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

MAX_INPUT = 64 << 20  # bytes of hook input read at most (a Write carries the whole file)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "hook",
        parents=[common],
        help="an agent CLI's hook: the records on what it is about to edit (stdin JSON, stdout JSON)",
        description="Run as an agent CLI's hook: reads the event's JSON on stdin and prints the answer the "
        "agent documents on stdout (nothing when nothing is relevant). Agents: claude (SessionStart, "
        "PreToolUse), gemini (SessionStart, BeforeTool, AfterTool). A payload it cannot read is an error "
        "on stderr with exit 1, which lets the agent go on. `comind hook refresh` remakes the hooks' view "
        "(a failure: one line on stderr, exit 2, kept for the hooks to tell).",
    )
    p.add_argument("agent", metavar="AGENT", action=_Agent, help="claude or gemini (or refresh)")
    p.add_argument("event", metavar="EVENT", nargs="?", default="", help="the hook event, as the agent names it")
    p.add_argument("--release-lock", action="store_true", help=argparse.SUPPRESS)  # (Windows: by its pid)
    p.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)  # the refresh lock, held for its life
    p.set_defaults(handler=run)

    q = sub.add_parser(
        "init-hooks",
        parents=[common],
        help="add comind's hooks to an agent's settings file (idempotent)",
        description="Merge comind's hooks into the agent's settings file, keeping every other setting and "
        "hook: claude: .claude/settings.json (--scope project) or .claude/settings.local.json (--scope local); "
        "gemini: .gemini/settings.json. Prints what it changed.",
    )
    q.add_argument("agent", choices=("claude", "gemini"))
    q.add_argument("--scope", choices=("project", "local"), default="project", help="default project")
    q.set_defaults(handler=init_hooks)


class _Agent(argparse.Action):
    """An error before `run` (a bad -C) exits 1 as `run`'s do, so it never blocks the agent; but
    `comind hook refresh` is no agent's hook: 2, as any command."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, value: Any, option: str | None = None) -> None:
        setattr(namespace, self.dest, value)
        namespace.failure_exit = 2 if value == "refresh" else 1


def run(args: argparse.Namespace) -> int:
    """Whatever goes wrong, the exit code is 1, never 2: 2 tells the agent to block the tool call.
    (`comind hook refresh` is a person's command, or the hooks' in the background: 2, as any.)"""
    from comind.errors import ComindError

    if args.agent == "refresh":
        return _refresh(args)
    try:
        return _hook(args)
    except ComindError as exc:
        print(f"comind hook: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug must not block the agent either
        print(f"comind hook: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _hook(args: argparse.Namespace) -> int:
    from pathlib import Path

    from comind.agents.hooks import AGENTS
    from comind.agents.hooks.answer import respond
    from comind.agents.hooks.interface import HookInputError
    from comind.cli import workspace

    agent = AGENTS.get(args.agent)
    if agent is None:
        raise HookInputError(f"unknown agent {args.agent!r} (one of {', '.join(AGENTS)})")
    if args.event not in agent.events:
        raise HookInputError(f"{agent.name}: unknown event {args.event!r} (one of {', '.join(agent.events)})")
    raw = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(raw) > MAX_INPUT:
        raise HookInputError(f"stdin: more than {MAX_INPUT >> 20} MiB")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise HookInputError(f"stdin: not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"stdin: expected a JSON object, got {type(payload).__name__}")
    request = agent.parse(args.event, payload)
    if not getattr(args, "directory", None) and request.cwd:
        if not Path(request.cwd).is_dir():
            raise HookInputError(f"payload.cwd: {request.cwd} is not a folder")
        args.directory = request.cwd
    reply = respond(workspace(args), request)
    out = agent.output(request, reply)
    if out is not None:
        print(json.dumps(out, ensure_ascii=False))
    return 0


def _refresh(args: argparse.Namespace) -> int:
    """Remake the hooks' view. A failure is kept (one line, as `comind` prints it) in
    `refresh.failed` for the hook calls to tell and to wait on (`view.failure`), then said as any
    command says it: one line on stderr, exit 2."""
    import contextlib

    from comind.agents.hooks import view
    from comind.cli import workspace
    from comind.errors import ComindError
    from comind.sanitize import printed, redact_secrets

    if args.lock_fd is not None:  # started by a hook: a refresh that hangs ends, and its lock with it
        import signal

        signal.alarm(view.LOCK_STALE)
        view.keep_from_forks(args.lock_fd)
    ws = workspace(args)
    head = ws.head() or ""
    try:
        view.save(ws, view.refreshed(ws))
    except Exception as exc:
        reason = str(exc) if isinstance(exc, ComindError) else f"internal error: {type(exc).__name__}: {exc}"
        with contextlib.suppress(OSError):  # (before the lock goes: a hook waiting on it reads why)
            view.record_failure(ws, head, redact_secrets(printed(reason)))
        raise
    finally:
        if args.lock_fd is not None or args.release_lock:
            view.release(view.hooks_dir(ws.git_dir) / "refresh.lock", args.lock_fd)
    return 0


def init_hooks(args: argparse.Namespace) -> int:
    from comind.agents.hooks import AGENTS
    from comind.agents.hooks.settings import install
    from comind.cli import workspace

    ws = workspace(args)
    path, changes = install(ws.root, AGENTS[args.agent], args.scope)
    if warning := program_not_found(ws.root):
        print(f"comind: warning: {warning}", file=sys.stderr)
    where = path.relative_to(ws.root) if path.is_relative_to(ws.root) else path
    if not changes:
        print(f"{where}: nothing to change")
    for line in changes:
        print(f"{where}: {line}")
    if changes and ws.head():  # the first hook call then finds the history harvested and the view made
        from comind.agents.hooks import view

        view.save(ws, view.refreshed(ws))
    return 0


def program_not_found(cwd: Path) -> str:
    """Why the hooks' bare `comind` may not run this comind, "" when it will (as far as this PATH
    tells): none on PATH, or another one first. The settings keep the bare name, which a committed
    file shares across machines; the warning names the folder to put on PATH instead."""
    import os
    import shutil
    from pathlib import Path

    from comind import __version__

    running = _running_program()
    if running is None:
        return ""  # (run some other way: nothing to compare)
    found = shutil.which("comind")
    fix = f"put {running.parent} on the PATH the agent runs with (or write {running} in the hooks' commands)"
    if found is None:
        return f"no `comind` on PATH: the hooks' `comind hook …` commands will fail to start; {fix}"
    if os.path.realpath(found) == os.path.realpath(running):
        return ""
    # another file: a pyenv, asdf or mise shim re-dispatches to an installation only running it tells
    answer = _version_of(found, cwd)
    if answer == f"comind {__version__}":
        return ""
    said = f" ({answer})" if answer else ""
    return f"`comind` on PATH is {Path(found)}{said}, not this one ({running}): the hooks will run that one; {fix}"


def _version_of(program: str, cwd: Path) -> str:
    """The first line `program --version` prints, run where the hooks run; "" when it says nothing."""
    import subprocess

    try:
        done = subprocess.run(
            [program, "--version"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,  # (init-hooks may be fed a script on stdin: never the probe's to read)
            capture_output=True,
            text=True,
            errors="replace",
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = done.stdout.strip().splitlines()
    return lines[0].strip()[:100] if done.returncode == 0 and lines else ""


def _running_program() -> Path | None:
    """The `comind` program running: the script started (sys.argv[0]), else the one installed beside
    this Python (comind run in-process); None when neither is there."""
    from pathlib import Path

    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == "comind" and started.is_file():
        return started.absolute()
    beside = Path(sys.executable).parent / "comind"
    return beside.absolute() if sys.executable and beside.is_file() else None
