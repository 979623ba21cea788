"""The interface every agent CLI's hook module implements, apart from the registry.

An agent module turns the JSON its CLI writes to a hook's stdin into a :class:`Request` (what
happened: a session began, a file is about to be edited, or was edited), and a :class:`Reply`
(the `<comind-ledger>` block, or a reason to deny the edit) into the JSON its CLI reads from the
hook's stdout; it also says which settings file holds its hooks and what to put there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from comind.errors import ComindError

SESSION, BEFORE_EDIT, AFTER_EDIT, NOTHING = "session", "before-edit", "after-edit", "nothing"
SCOPES = ("project", "local")


class HookInputError(ComindError):
    """A payload the hook cannot read. Exit 1: both agents treat it as a non-blocking error, so
    the agent goes on (exit 2 would block the tool call)."""

    exit_code = 1


# Named tuples, not dataclasses, on the whole hook path: `dataclasses` costs a hook call ~10 ms to import
class Edit(NamedTuple):
    """One change to one file: `old` replaced by `new` (every occurrence with `replace_all`), or,
    with `old` None, the whole file written as `new`."""

    path: str
    new: str
    old: str | None = None
    replace_all: bool = False


class Request(NamedTuple):
    kind: str  # SESSION, BEFORE_EDIT, AFTER_EDIT, or NOTHING (a tool comind has nothing to say about)
    session: str
    cwd: str | None = None
    edits: tuple[Edit, ...] = ()
    call: str = ""  # pairs a before-edit with its after-edit (agents that add context only after)


class Reply(NamedTuple):
    context: str = ""  # the <comind-ledger> block, "" for none
    deny: str = ""  # why the edit is denied (a `must` constraint's check fails on it), "" for not


class Agent(Protocol):
    name: str
    events: tuple[str, ...]  # the hook events comind answers, as the agent names them

    def parse(self, event: str, payload: Mapping[str, Any]) -> Request:
        """The request, or HookInputError naming what is wrong with the payload."""
        ...

    def output(self, request: Request, reply: Reply) -> dict[str, Any] | None:
        """The JSON to print, None to print nothing."""
        ...

    def settings_path(self, root: Path, scope: str) -> Path: ...

    def hook_config(self, program: str) -> dict[str, list[dict[str, Any]]]:
        """Event -> the hook groups comind adds to the settings' `hooks` (program: how to run comind)."""
        ...


def text_field(payload: Mapping[str, Any], name: str, where: str = "") -> str:
    value = payload.get(name)
    if not isinstance(value, str):
        got = "nothing" if value is None else type(value).__name__
        raise HookInputError(f"{where or 'payload'}.{name}: expected text, got {got}")
    return value


def path_field(payload: Mapping[str, Any], name: str, where: str = "") -> str:
    """A text field that names a file, as the file system can take it: no NUL byte, no lone
    surrogate (JSON allows both; the OS refuses them, where they were internal errors)."""
    value = text_field(payload, name, where)
    if "\0" in value:
        raise HookInputError(f"{where or 'payload'}.{name}: a path with a NUL byte")
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        raise HookInputError(f"{where or 'payload'}.{name}: a path the file system cannot encode") from None
    return value


def session_of(payload: Mapping[str, Any]) -> str:
    session = payload.get("session_id")
    if session is None:
        return ""
    if not isinstance(session, str):
        raise HookInputError(f"payload.session_id: expected text, got {type(session).__name__}")
    return session


def cwd_of(payload: Mapping[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    return path_field(payload, "cwd") if isinstance(cwd, str) and cwd else None


def tool_input(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    value = payload.get("tool_input")
    if not isinstance(value, Mapping):
        raise HookInputError(f"payload.tool_input: expected an object, got {type(value).__name__}")
    return value


def flag(payload: Mapping[str, Any], name: str, where: str) -> bool:
    value = payload.get(name, False)
    if not isinstance(value, bool):
        raise HookInputError(f"{where}.{name}: expected true or false, got {type(value).__name__}")
    return value
