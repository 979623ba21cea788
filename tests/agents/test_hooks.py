"""The hook modules on their own: payload parsing (fuzzed), edits, session state, settings merge."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.agents.hooks import AGENTS
from comind.agents.hooks.edits import NotApplicable, apply, changed_lines, touched_by_spans, touched_symbols
from comind.agents.hooks.interface import BEFORE_EDIT, NOTHING, SESSION, Edit, HookInputError, Reply, Request
from comind.agents.hooks.session import KEEP_SESSIONS, MAX_SHOWN, Session, prune
from comind.agents.hooks.settings import merge
from comind.errors import ComindError

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "session_id",
        "cwd",
        "tool_name",
        "tool_input",
        "file_path",
        "old_string",
        "new_string",
        "content",
        "edits",
        "replace_all",
        "allow_multiple",
    ]
)
PAYLOADS = st.dictionaries(KEYS, JSON | st.sampled_from(["Edit", "MultiEdit", "Write", "replace", "write_file"]))


@settings(max_examples=300, deadline=None)
@given(payload=PAYLOADS, nested=st.dictionaries(KEYS, JSON, max_size=5))
def test_parse_returns_a_request_or_a_clear_input_error(payload: dict[str, Any], nested: dict[str, Any]) -> None:
    if "tool_input" in payload and not isinstance(payload["tool_input"], dict):
        payload = {**payload, "tool_input": nested}
    for agent in AGENTS.values():
        for event in agent.events:
            try:
                request = agent.parse(event, payload)
            except HookInputError as exc:
                assert str(exc) and "\n" not in str(exc)
                continue
            assert isinstance(request, Request)
            assert all(isinstance(e.new, str) and isinstance(e.path, str) for e in request.edits)


def test_claude_shapes() -> None:
    claude = AGENTS["claude"]
    edit = claude.parse(
        "PreToolUse",
        {
            "session_id": "s",
            "tool_name": "Edit",
            "tool_input": {"file_path": "/r/a.py", "old_string": "a", "new_string": "b", "replace_all": True},
        },
    )
    assert edit.kind == BEFORE_EDIT and edit.edits == (Edit("/r/a.py", "b", "a", True),)
    assert claude.parse("PreToolUse", {"tool_name": "Bash", "tool_input": {}}).kind == NOTHING
    assert claude.output(edit, Reply()) is None
    assert claude.output(edit, Reply(deny="no")) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "no",
        }
    }
    start = claude.parse("SessionStart", {"session_id": "s", "source": "startup"})
    assert start.kind == SESSION
    assert claude.output(start, Reply("ctx")) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}
    }


def test_gemini_pairs_before_and_after_by_the_arguments() -> None:
    gemini = AGENTS["gemini"]
    args = {"file_path": "a.py", "old_string": "a", "new_string": "b", "instruction": "x"}
    before = gemini.parse("BeforeTool", {"tool_name": "replace", "tool_input": args})
    after = gemini.parse("AfterTool", {"tool_name": "replace", "tool_input": args, "tool_response": {}})
    assert before.call and before.call == after.call
    assert gemini.output(before, Reply("ctx")) is None  # BeforeTool documents no additional context
    assert gemini.output(before, Reply(deny="why")) == {"decision": "deny", "reason": "why"}
    assert gemini.output(after, Reply("ctx")) == {
        "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "ctx"}
    }
    with pytest.raises(ComindError):
        gemini.settings_path(Path("/r"), "local")


def test_apply_and_changed_lines() -> None:
    text = "a\nb\nc\nb\n"
    assert apply(text, [Edit("f", "B", "b")]) == "a\nB\nc\nb\n"
    assert apply(text, [Edit("f", "B", "b", replace_all=True)]) == "a\nB\nc\nB\n"
    assert apply(text, [Edit("f", "new\n")]) == "new\n"
    with pytest.raises(NotApplicable):
        apply(text, [Edit("f", "x", "zzz")])
    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == ({2}, {2})
    assert changed_lines("a\nb\nc\n", "a\nc\n")[1] == {2}


def test_touched_symbols_before_and_after() -> None:
    before = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    after = before.replace("return 2", "return 3")
    assert touched_symbols("m.py", before, after) == {"g": 5}  # with its first line
    assert touched_symbols("m.py", before, "def f():\n    return 1\n") == {"g": 5}  # removed: touched before
    assert touched_symbols("notes.txt", "a", "b") == {}


def test_session_is_bounded_atomic_and_pruned(tmp_path: Path) -> None:
    session = Session.load(tmp_path, "../../etc/passwd")
    assert session.path.parent == tmp_path / "sessions"  # the id is hashed, never a path
    session.mark([f"id{n}" for n in range(MAX_SHOWN + 10)])
    session.save()
    again = Session.load(tmp_path, "../../etc/passwd")
    assert len(again.shown) == MAX_SHOWN and again.shown[-1] == f"id{MAX_SHOWN + 9}"
    assert [p.name for p in (tmp_path / "sessions").iterdir()] == [session.path.name]  # no temporary left
    for n in range(KEEP_SESSIONS + 5):
        Session.load(tmp_path, f"s{n}").save()
    old = Session.load(tmp_path, "old")
    old.save()
    os.utime(old.path, (time.time() - 30 * 86400,) * 2)
    assert prune(tmp_path) == 7
    assert not old.path.exists() and len(list((tmp_path / "sessions").iterdir())) == KEEP_SESSIONS
    old.path.write_text("{not json")
    assert Session.load(tmp_path, "old").shown == []  # a broken file is a cache miss


def test_merge_adds_updates_and_keeps_others() -> None:
    claude = AGENTS["claude"]
    theirs = {"type": "command", "command": "./fmt.sh"}
    data: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [theirs]}]}, "x": 1}
    changes = merge(data, claude, "comind")
    assert len(changes) == 2 and data["x"] == 1
    assert theirs in data["hooks"]["PreToolUse"][0]["hooks"]
    snapshot = json.dumps(data, sort_keys=True)
    assert merge(data, claude, "comind") == []
    assert json.dumps(data, sort_keys=True) == snapshot
    ours = data["hooks"]["PreToolUse"][1]["hooks"][0]
    ours["timeout"] = 99  # someone changed ours: put back, in place
    assert merge(data, claude, "comind") == ["updated the PreToolUse hook: comind hook claude PreToolUse"]
    assert len(data["hooks"]["PreToolUse"]) == 2


@settings(max_examples=200, deadline=None)
@given(
    body=st.lists(st.sampled_from(["    x = 1", "    y = 2", "", "    return x"]), min_size=1, max_size=4),
    at=st.integers(0, 14),
    cut=st.integers(0, 3),
    added=st.lists(st.sampled_from(["    z = 3", "    w = 4"]), max_size=3),
)
def test_spans_at_head_find_what_a_parse_finds(body: list[str], at: int, cut: int, added: list[str]) -> None:
    """The fast path (spans from the view) against parsing before and after, on edits inside and
    between two functions: what the parse finds among the definitions that exist before the edit
    is found from the spans (it may add the definition an insertion follows)."""
    from comind.languages import parse_file

    before = "def f():\n" + "\n".join([*body, "    return 0"]) + "\n\n\ndef g():\n    return 1\n"
    lines = before.splitlines()
    at = min(at, len(lines))
    after_lines = lines[:at] + added + lines[at + cut :]
    after = "\n".join(after_lines) + "\n"
    if after == before:
        return
    spans = [(d.qualname, d.start_line, d.end_line) for d in parse_file("m.py", before.encode()).definitions]
    parsed = touched_symbols("m.py", before, after).keys() & {q for q, _, _ in spans}
    fast = touched_by_spans(spans, before, after).keys()
    assert parsed <= fast, (before, after)


def test_a_nested_definition_reaches_no_further_than_the_one_holding_it() -> None:
    """An edit below a nested function, in the function holding it, touches the holder only."""
    before = "def outer():\n    def inner():\n        return 1\n\n    return inner\n\n\ndef after():\n    return 2\n"
    spans = [("outer", 1, 5), ("outer.inner", 2, 3), ("after", 8, 9)]
    after = before.replace("    return inner\n", "    return inner()\n")
    assert touched_by_spans(spans, before, after) == {"outer": 1}


def test_an_edit_of_a_definition_s_first_line_touches_it_not_the_one_before() -> None:
    before = (
        "class Cart:\n    def total(self):\n        return 1\n\n    def x(self):\n        return 2\n\n\n"
        "def outer():\n    return 3\n"
    )
    spans = [("Cart", 1, 6), ("Cart.total", 2, 3), ("Cart.x", 5, 6), ("outer", 9, 10)]
    after = before.replace("def outer():", "def outer(q=1):")
    assert touched_by_spans(spans, before, after) == {"outer": 9}
    appended = before.replace("        return 2\n", "        return 2\n        log(2)\n")  # deeper: x goes on
    assert touched_by_spans(spans, before, appended) == {"Cart": 1, "Cart.x": 5}
