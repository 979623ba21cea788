"""The MCP tools' argument handling, fuzzed: whatever JSON an agent sends, a tool answers or
refuses with one line (ToolError); nothing else escapes to crash a call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from comind.agents.mcp.tools import TOOLS, ToolError, call, why_resource
from comind.workspace import Workspace

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    repo = GitRepo(tmp_path_factory.mktemp("fuzz"))
    repo.write("app/perm.py", "class Checker:\n    def check(self, user):\n        return user.ok\n")
    repo.commit("initial")
    return Workspace(repo.path)


def arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
    keys = [*TOOLS[name].arguments.model_json_schema()["properties"], "extra"]
    known = st.sampled_from(["app/perm.py", "app/perm.py::Checker.check", "module:app", "confirm", "diff", "gotcha"])
    return st.dictionaries(st.sampled_from(keys), known | JSON, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_arguments_answer_or_refuse_in_one_line(ws: Workspace, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["why", "review", "preflight"]))  # remember would write
    try:
        call(ws, name, data.draw(arguments(name)))
    except ToolError as exc:
        assert "\n" not in str(exc) and str(exc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uri=st.text(max_size=60).map(lambda t: "comind://why/" + t) | st.text(max_size=40))
def test_any_resource_uri_answers_or_refuses_in_one_line(ws: Workspace, uri: str) -> None:
    try:
        assert isinstance(why_resource(ws, uri), str)
    except ToolError as exc:
        assert "\n" not in str(exc)


def test_a_repository_path_is_required(tmp_path: Path) -> None:
    from comind.errors import ComindError

    with pytest.raises(ComindError, match="not inside a git repository"):
        Workspace(tmp_path)


VALID = {
    "why": {"anchor": "app/perm.py"},
    "preflight": {"mode": "plan", "plan": "check the permissions"},
    "remember": {"kind": "gotcha", "title": "x", "on": ["app/perm.py"], "symptom": "s", "cause": "c"},
    "review": {"action": "confirm", "id": "abcdef12"},
}


def _typed(schema: dict[str, Any], wanted: str) -> bool:
    return schema.get("type") == wanted or any(s.get("type") == wanted for s in schema.get("anyOf", ()))


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_a_string_is_no_boolean_or_number(ws: Workspace, name: str) -> None:
    """Arguments are taken as their schema types them: "yes" for a boolean, "5" or 5.5 for an
    integer, 1 for a boolean are refused (pydantic's lax mode would read "yes" as true)."""
    properties = TOOLS[name].arguments.model_json_schema()["properties"]
    for field, schema in properties.items():
        bad = ["yes", "true", 1] if _typed(schema, "boolean") else ["5", 5.5, True] if _typed(schema, "integer") else []
        for value in bad:
            with pytest.raises(ToolError) as refused:
                call(ws, name, {**VALID[name], field: value})
            assert str(refused.value).startswith(f"{name}: {field}: "), (field, value, str(refused.value))
    assert [f for f, s in properties.items() if _typed(s, "boolean") or _typed(s, "integer")] == {
        "why": ["history"],
        "preflight": ["limit"],
    }.get(name, [])


def test_valid_booleans_and_numbers_still_answer(ws: Workspace) -> None:
    assert call(ws, "why", {"anchor": "app/perm.py", "history": True}).text
    assert call(ws, "preflight", {"mode": "plan", "plan": "check the permissions", "limit": 3}).text
