"""`comind init-hooks`: comind's hooks merged into an agent's settings file, idempotently.

The file's other settings and hooks are kept as they are. A hook is comind's when its command
runs `… hook <agent> <event>`; one already there is updated in place, never added twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from comind.errors import ComindError

from .interface import Agent
from .session import write_atomic


def read_settings(path: Path, events: Iterable[str]) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ComindError(f"{path}: not valid JSON ({exc}); fix or move it, nothing was changed") from None
    if not isinstance(data, dict):
        raise ComindError(f"{path}: expected a JSON object at the top, nothing was changed")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(hooks.get(e, []), list) for e in events):
        raise ComindError(f"{path}: `hooks` is not an object of event lists, nothing was changed")
    return data


def merge(data: dict[str, Any], agent: Agent, program: str) -> list[str]:
    """Add or update comind's hooks in `data` (changed in place); what changed, one line each."""
    wanted = agent.hook_config(program)
    hooks = data.setdefault("hooks", {})
    changes = []
    for event, groups in wanted.items():
        groups_there = hooks.setdefault(event, [])
        for group in groups:
            for hook in group["hooks"]:
                changes += _place(groups_there, group, hook, agent.name, event)
    return changes


def _ours(hook: Any, agent: str, event: str) -> bool:
    command = hook.get("command") if isinstance(hook, Mapping) else None
    return isinstance(command, str) and command.rstrip().endswith(f"hook {agent} {event}")


def _place(groups: list[Any], group: Mapping[str, Any], hook: dict[str, Any], agent: str, event: str) -> list[str]:
    matcher = group.get("matcher")
    for there in groups:
        if not isinstance(there, dict) or not isinstance(there.get("hooks"), list):
            continue
        for n, old in enumerate(there["hooks"]):
            if not _ours(old, agent, event):
                continue
            if old == hook and there.get("matcher") == matcher:
                return []
            there["hooks"][n] = hook
            if matcher is not None and there.get("matcher") != matcher:
                if len(there["hooks"]) > 1:  # the group holds others' hooks: ours moves to its own
                    del there["hooks"][n]
                    groups.append({**group, "hooks": [hook]})
                else:
                    there["matcher"] = matcher
            return [f"updated the {event} hook: {hook['command']}"]
    groups.append({**group, "hooks": [hook]})
    where = f" (matcher {matcher})" if matcher else ""
    return [f"added the {event} hook{where}: {hook['command']}"]


def install(root: Path, agent: Agent, scope: str, program: str = "comind") -> tuple[Path, list[str]]:
    path = agent.settings_path(root, scope)
    data = read_settings(path, agent.hook_config(program))
    changes = merge(data, agent, program)
    if changes:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path, changes
