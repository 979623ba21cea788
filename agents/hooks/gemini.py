"""Gemini CLI: `SessionStart` (a digest as additional context), `BeforeTool` on write_file and
replace (a deny only when a `must` constraint's compiled check fails on the edited text) and
`AfterTool` on the same tools (the records on what the edit touched, as additional context).

The shapes are the ones documented at https://geminicli.com/docs/hooks/reference: stdin carries
session_id, transcript_path, cwd, hook_event_name, timestamp, tool_name and tool_input;
BeforeTool reads `decision` and `reason` but no additional context, which AfterTool and
SessionStart take as hookSpecificOutput.additionalContext. So the records found before the edit
are kept for the session and given after it. Exit 2 blocks; any other non-zero exit is a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blake3 import blake3

from comind.errors import ComindError

from .interface import (
    AFTER_EDIT,
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

EDIT_TOOLS = ("write_file", "replace")
TIMEOUT = 10_000  # milliseconds (Gemini CLI counts hook timeouts in milliseconds)


class Gemini:
    name: str = "gemini"
    events: tuple[str, ...] = ("SessionStart", "BeforeTool", "AfterTool")

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
        if tool == "write_file":
            edit = Edit(path, text_field(args, "content", "tool_input"))
        else:
            old = text_field(args, "old_string", "tool_input")
            edit = Edit(
                path, text_field(args, "new_string", "tool_input"), old, flag(args, "allow_multiple", "tool_input")
            )
        # the after event carries the same tool_input ("the original arguments"): it names the call
        call = blake3(json.dumps([tool, args], sort_keys=True, default=str).encode()).hexdigest(length=16)
        return Request(BEFORE_EDIT if event == "BeforeTool" else AFTER_EDIT, session, cwd, (edit,), call)

    def output(self, request: Request, reply: Reply) -> dict[str, Any] | None:
        if request.kind == BEFORE_EDIT:
            return {"decision": "deny", "reason": reply.deny} if reply.deny else None
        if not reply.context:
            return None
        event = "SessionStart" if request.kind == SESSION else "AfterTool"
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": reply.context}}

    def settings_path(self, root: Path, scope: str) -> Path:
        if scope == "local":
            raise ComindError(
                "init-hooks gemini: --scope local: Gemini CLI reads one project file, .gemini/settings.json"
            )
        return root / ".gemini" / "settings.json"

    def hook_config(self, program: str) -> dict[str, list[dict[str, Any]]]:
        def hook(event: str) -> dict[str, Any]:
            return {
                "name": f"comind-{event}",
                "type": "command",
                "command": f"{program} hook gemini {event}",
                "timeout": TIMEOUT,
                "description": "comind: recorded facts about the code being edited",
            }

        matcher = "|".join(EDIT_TOOLS)
        return {
            "SessionStart": [{"hooks": [hook("SessionStart")]}],
            "BeforeTool": [{"matcher": matcher, "hooks": [hook("BeforeTool")]}],
            "AfterTool": [{"matcher": matcher, "hooks": [hook("AfterTool")]}],
        }


AGENT = Gemini()
