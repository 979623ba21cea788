"""Claude Code: `SessionStart` (a digest as additional context) and `PreToolUse` on Edit,
MultiEdit and Write (the records on what the edit touches as additional context; a deny only
when a `must` constraint's compiled check fails on the edited text).

The shapes are the ones documented at https://code.claude.com/docs/en/hooks: stdin carries
session_id, transcript_path, cwd, hook_event_name, tool_name and tool_input; stdout JSON carries
hookSpecificOutput {hookEventName, additionalContext, permissionDecision, permissionDecisionReason}.
No permissionDecision is given unless denying, so the user's own permission rules still decide.
Exit 2 would block the tool call; any other non-zero exit is a non-blocking error.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .interface import (
    BEFORE_EDIT,
    NOTHING,
    SESSION,
    Edit,
    HookInputError,
    Reply,
    Request,
    cwd_of,
    flag,
    path_field,
    session_of,
    text_field,
    tool_input,
)

EDIT_TOOLS = ("Edit", "MultiEdit", "Write")
TIMEOUT = 10  # seconds (Claude Code counts hook timeouts in seconds)


class Claude:
    name: str = "claude"
    events: tuple[str, ...] = ("SessionStart", "PreToolUse")

    def parse(self, event: str, payload: Mapping[str, Any]) -> Request:
        session, cwd = session_of(payload), cwd_of(payload)
        if event == "SessionStart":
            return Request(SESSION, session, cwd)
        tool = payload.get("tool_name")
        if not isinstance(tool, str):
            raise HookInputError("payload.tool_name: expected text")
        if tool not in EDIT_TOOLS:
            return Request(NOTHING, session, cwd)
        args = tool_input(payload)
        path = path_field(args, "file_path", "tool_input")
        if tool == "Write":
            edits: tuple[Edit, ...] = (Edit(path, text_field(args, "content", "tool_input")),)
        elif tool == "Edit":
            edits = (_edit(path, args, "tool_input"),)
        else:
            items = args.get("edits")
            if not isinstance(items, list) or not items:
                raise HookInputError("tool_input.edits: expected a list of edits")
            edits = tuple(
                _edit(path, item, f"tool_input.edits[{n}]") if isinstance(item, Mapping) else _not_an_edit(n)
                for n, item in enumerate(items)
            )
        return Request(BEFORE_EDIT, session, cwd, edits)

    def output(self, request: Request, reply: Reply) -> dict[str, Any] | None:
        event = "SessionStart" if request.kind == SESSION else "PreToolUse"
        out: dict[str, Any] = {"hookEventName": event}
        if reply.deny and request.kind == BEFORE_EDIT:
            out["permissionDecision"] = "deny"
            out["permissionDecisionReason"] = reply.deny
        if reply.context:
            out["additionalContext"] = reply.context
        return {"hookSpecificOutput": out} if len(out) > 1 else None

    def settings_path(self, root: Path, scope: str) -> Path:
        return root / ".claude" / ("settings.local.json" if scope == "local" else "settings.json")

    def hook_config(self, program: str) -> dict[str, list[dict[str, Any]]]:
        def hook(event: str) -> dict[str, Any]:
            return {"type": "command", "command": f"{program} hook claude {event}", "timeout": TIMEOUT}

        return {
            "SessionStart": [{"hooks": [hook("SessionStart")]}],
            "PreToolUse": [{"matcher": "|".join(EDIT_TOOLS), "hooks": [hook("PreToolUse")]}],
        }


def _edit(path: str, args: Mapping[str, Any], where: str) -> Edit:
    old = text_field(args, "old_string", where)
    return Edit(path, text_field(args, "new_string", where), old, flag(args, "replace_all", where))


def _not_an_edit(n: int) -> Edit:
    raise HookInputError(f"tool_input.edits[{n}]: expected an object")


AGENT = Claude()
