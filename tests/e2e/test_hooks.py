"""`comind hook` run as the agents run it: a process fed payloads shaped as their docs show.

Claude Code: https://code.claude.com/docs/en/hooks; Gemini CLI: docs/hooks/reference.md of
google-gemini/gemini-cli. Malformed payloads get a clear error on stderr and exit 1 (2 would
block the agent's tool call), and nothing is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo
from hooks_repo import CACHED, COMIND, PERM, base, build, claude_edit, history, hook, refresh

from comind.agents.hooks import view as views
from comind.agents.render import TOKEN_BUDGET, tokens
from comind.workspace import Workspace

OLD = "        return perm in grants\n"
NEW = "        return perm in set(grants)\n"


def context(result) -> str:  # type: ignore[no-untyped-def]
    assert result.code == 0, result.err
    return str(result.json["hookSpecificOutput"]["additionalContext"])


def test_session_start_digest_then_nothing_twice(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    first = hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"})
    text = context(first)
    assert first.json["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert text.startswith('<comind-ledger source="comind"') and text.endswith("</comind-ledger>")
    assert "[constraint · T3 · active · must] Never eval input" in text
    assert "Cache grants in the checker" in text  # the reverted attempt (harvested, T2)
    assert "An agent's guess" not in text  # T1: never surfaced by a hook
    assert tokens(text) <= TOKEN_BUDGET
    again = hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "resume"})
    assert (again.code, again.out) == (0, "")  # each record once per session


def test_an_agents_record_a_person_confirmed_is_labelled_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """It was shown at T3 yet labelled "written by an agent, unconfirmed": the label now follows the
    person's confirmation, as its trust does."""
    repo = build(tmp_path, cli)
    stored = [json.loads(p.read_text()) for p in (repo.path / ".comind/ledger").rglob("*.json")]
    guess = next(r["id"] for r in stored if r["title"] == "An agent's guess")
    assert cli(repo.path, "review", "confirm", guess).code == 0  # a person at the CLI
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "[gotcha · T3 · active · written by an agent, confirmed by a person] An agent's guess" in text
    assert "unconfirmed" not in text


def test_a_revert_that_gave_no_reason_says_so_and_does_not_quote_our_sentence(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Its evidence quoted the harvester's own sentence as if the revert said it: `"The revert gave no
    reason for taking out “Cache grants in the checker”."`, the title again, in an agent's budget."""
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache grants in the checker")
    reverted = repo.head()
    revert = repo.revert_head()  # no reason given
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    assert f"  evidence: revert {revert[:10]}; reverted {reverted[:10]}; no reason given\n" in text, text
    assert "gave no reason" not in text


def test_the_digest_shows_dead_ends_in_code_before_reverted_tooling_bumps(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Reverted bot bumps, newer than the code's dead end, came first and spent the budget on it."""
    repo = history(tmp_path)  # "Cache grants in the checker", reverted
    bot = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"
    for path, old, new, subject in (
        ("requirements.txt", "requests==2.31.0\n", "requests==2.32.0\n", "Bump requests from 2.31.0 to 2.32.0"),
        (
            ".pre-commit-config.yaml",
            "repos: []\n# rev: v0.4.0\n",
            "repos: []\n# rev: v0.5.0\n",
            "[pre-commit.ci] pre-commit autoupdate",
        ),
        (
            ".github/workflows/ci.yml",
            "on: push\n# checkout@v3\n",
            "on: push\n# checkout@v4\n",
            "Bump actions/checkout from 3 to 4",
        ),
    ):
        repo.write(path, old)
        repo.commit(f"Add {path}")
        repo.write(path, new)
        repo.commit(subject, author=bot)
        repo.revert_head("It broke the build.")
    assert cli(repo.path, "harvest").code == 0
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    titles = [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith("[attempt")]
    assert titles[0] == "Cache grants in the checker", titles
    assert set(titles[1:]) <= {"Bump requests from 2.31.0 to 2.32.0", "[pre-commit.ci] pre-commit autoupdate",
                               "Bump actions/checkout from 3 to 4"}  # fmt: skip


def test_the_digest_shows_dead_ends_in_code_before_a_reverted_submodule_bump(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted change that only moved a submodule's commit, newer than the code's dead end, came
    first: it is tooling, as a reverted lockfile or CI bump is, and comes after the code's."""
    repo = history(tmp_path)  # "Cache grants in the checker", reverted
    repo.write(".gitmodules", '[submodule "sub"]\n\tpath = vendor/sub\n\turl = https://example.com/sub.git\n')
    (repo.path / "vendor" / "sub").mkdir(parents=True)  # (not checked out, as a clone leaves it)
    for sha, subject in (("1" * 40, "Add the sub submodule"), ("2" * 40, "Bump vendor/sub to the new parser")):
        repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/sub")
        repo.commit(subject)
    repo.revert_head("It broke the build.")
    assert cli(repo.path, "harvest").code == 0
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    titles = [line.split("] ", 1)[1] for line in text.splitlines() if line.startswith("[attempt")]
    assert titles == ["Cache grants in the checker", "Bump vendor/sub to the new parser"], titles


def test_edit_multiedit_and_write_get_the_records_on_what_they_touch(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    edit = hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW))
    text = context(edit)
    out = edit.json["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and "permissionDecision" not in out  # the user's rules decide
    assert "load_grants is slow when cold" in text and "which this edit touches" in text
    assert "verify: read app/perm.py:2-4" in text and "An agent's guess" not in text
    assert (repo.path / "app/perm.py").read_text() == PERM  # a hook never edits
    same = hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW))
    assert (same.code, same.out) == (0, "")  # shown once this session

    multi = {
        **base(repo.path, "PreToolUse", "s-2"),
        "tool_name": "MultiEdit",
        "tool_input": {
            "file_path": str(repo.path / "app/perm.py"),
            "edits": [
                {"old_string": "def audit(event):", "new_string": "def audit(event, who):", "replace_all": False},
                {"old_string": OLD, "new_string": NEW, "replace_all": False},
            ],
        },
    }
    assert "load_grants is slow when cold" in context(hook(repo.path, "claude", "PreToolUse", multi))
    write = {
        **base(repo.path, "PreToolUse", "s-3"),
        "tool_name": "Write",
        "tool_input": {"file_path": str(repo.path / "app/perm.py"), "content": CACHED},
    }
    assert "Cache grants in the checker" in context(hook(repo.path, "claude", "PreToolUse", write))


def test_a_record_on_a_class_says_which_member_the_edit_touches(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    args = ("gotcha", "--title", "Checker is shared", "--on", "app/perm.py::Checker", "--symptom", "x", "--cause", "y")
    assert cli(repo.path, "remember", *args).code == 0
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "on app/perm.py::Checker, whose member Checker.check this edit touches" in text
    assert "on app/perm.py::Checker.check, which this edit touches" in text


def test_a_record_on_a_class_names_the_members_touched_in_file_order(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Not the alphabetically first member touched: those the edit touches, as the file orders them,
    three at most and then how many more."""
    cart = "class Cart:\n" + "".join(f"    def {m}(self):\n        return {i}\n\n" for i, m in enumerate(METHODS))
    repo = GitRepo(tmp_path)
    repo.write("app/cart.py", cart)
    repo.commit("initial")
    args = ("gotcha", "--title", "Carts are shared", "--on", "app/cart.py::Cart", "--symptom", "x", "--cause", "y")
    assert cli(repo.path, "remember", *args).code == 0

    def why(session: str, *methods: str) -> str:
        written = cart
        for m in methods:
            written = written.replace(f"return {METHODS.index(m)}\n", f"return {METHODS.index(m)} + 1\n")
        content = {"file_path": str(repo.path / "app/cart.py"), "content": written}
        payload = {**base(repo.path, "PreToolUse", session), "tool_name": "Write", "tool_input": content}
        return context(hook(repo.path, "claude", "PreToolUse", payload))

    refresh(cli, repo.path)
    assert "on app/cart.py::Cart, whose member Cart.total this edit touches" in why("s-1", "total")
    two = "on app/cart.py::Cart, whose members Cart.total and Cart.add this edit touches"
    assert two in why("s-2", "add", "total")
    three = "on app/cart.py::Cart, whose members Cart.total, Cart.add and Cart.clear this edit touches"
    assert three in why("s-3", "clear", "add", "total")
    more = "on app/cart.py::Cart, whose members Cart.total, Cart.add and 2 more this edit touches"
    assert more in why("s-4", "refund", "clear", "add", "total")


METHODS = ("total", "add", "remove", "clear", "refund")  # the file's order, not the alphabet's


def test_nothing_relevant_prints_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    other = claude_edit(repo.path, "    return 1\n", "    return 2\n", path="app/other.py")
    assert (lambda r: (r.code, r.out, r.err))(hook(repo.path, "claude", "PreToolUse", other)) == (0, "", "")
    audit = claude_edit(repo.path, "    return event\n", "    return [event]\n")  # perm.py, not Checker.check
    text = context(hook(repo.path, "claude", "PreToolUse", audit))
    assert "Never eval input" in text and "load_grants" not in text  # file-wide records only
    read = {**base(repo.path, "PreToolUse"), "tool_name": "Read", "tool_input": {"file_path": str(repo.path / "a")}}
    assert hook(repo.path, "claude", "PreToolUse", read).out == ""


def test_an_edit_of_a_class_outside_its_method_does_not_show_the_method_s_records(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """As preflight: a record on `Checker.check` is about that method; a line added to `Checker` above
    it touches the class, not the method (in a Ruby module holding a whole file, it named every one)."""
    repo = build(tmp_path, cli)
    above = claude_edit(repo.path, "class Checker:\n", "class Checker:\n    LIMIT = 3\n")
    text = context(hook(repo.path, "claude", "PreToolUse", above))
    assert "Never eval input" in text and "load_grants" not in text, text


def test_a_failing_must_check_denies_with_the_reason_as_data(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    bad = claude_edit(repo.path, "    return event\n", "    return eval(event)\n")
    result = hook(repo.path, "claude", "PreToolUse", bad)
    out = result.json["hookSpecificOutput"]
    assert result.code == 0 and out["permissionDecision"] == "deny"
    assert '"Never eval input" — eval() of event' in out["permissionDecisionReason"]
    assert "verify: read app/perm.py:8" in out["permissionDecisionReason"]
    fine = hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-9"))
    assert "permissionDecision" not in fine.json["hookSpecificOutput"]


def test_a_manifest_edit_that_breaks_a_must_dependency_check_is_denied(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a manifest is no file of a language the code index reads: the checks that read it are asked all the same
    repo = history(tmp_path)
    repo.write("requirements.txt", "requests==2.31.0\n")
    repo.commit("Pin requests")
    assert cli(repo.path, "harvest").code == 0
    check = tmp_path / "requests.yml"
    check.write_text("type: dependency\necosystem: pypi\npackage: requests\nforbid: '>=3'\n")
    on = ("--on", "requirements.txt", "--rule", "requests < 3", "--severity", "must", "--check", str(check))
    assert cli(repo.path, "remember", "constraint", "--title", "Stay on requests 2", *on).code == 0
    refresh(cli, repo.path)
    args = {"file_path": str(repo.path / "requirements.txt"), "content": "requests==3.0.1\n"}
    bad = {**base(repo.path, "PreToolUse"), "tool_name": "Write", "tool_input": args}
    out = hook(repo.path, "claude", "PreToolUse", bad).json["hookSpecificOutput"]
    assert out.get("permissionDecision") == "deny", out
    assert '"Stay on requests 2"' in out["permissionDecisionReason"]
    fine = {**bad, "session_id": "s-2", "tool_input": {**args, "content": "requests==2.32.3\n"}}
    assert "permissionDecision" not in hook(repo.path, "claude", "PreToolUse", fine).json["hookSpecificOutput"]


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ("not json {", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ({"session_id": "s", "tool_name": "Edit"}, "tool_input"),
        ({"session_id": "s", "tool_name": "Edit", "tool_input": {"file_path": "app/perm.py"}}, "old_string"),
        ({"session_id": 7, "tool_name": "Write", "tool_input": {}}, "session_id"),
        ({"tool_name": "MultiEdit", "tool_input": {"file_path": "x.py", "edits": "no"}}, "edits"),
        ({"tool_name": "Write", "tool_input": {"file_path": "/etc/passwd", "content": "x"}}, "outside the repository"),
        ({"tool_name": "Write", "tool_input": {"file_path": "../x.py", "content": "x"}}, "outside the repository"),
        (
            {
                "tool_name": "Edit",
                "tool_input": {"file_path": "/repo/a\u0000b.py", "old_string": "a", "new_string": "b"},
            },
            "tool_input.file_path: a path with a NUL byte",
        ),
        (
            {"tool_name": "Write", "tool_input": {"file_path": "a\ud800b.py", "content": "x"}},
            "tool_input.file_path: a path the file system cannot encode",
        ),
        (
            {"cwd": "/repo/a\u0000b", "tool_name": "Write", "tool_input": {"file_path": "x.py", "content": "x"}},
            "payload.cwd: a path with a NUL byte",
        ),
    ],
)
def test_malformed_payloads_error_with_exit_1_and_write_nothing(cli, tmp_path: Path, payload, said) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    hooks = repo.path / ".git/comind/hooks"
    made = {p: p.read_bytes() for p in hooks.rglob("*") if p.is_file()}  # the view
    if isinstance(payload, dict):
        payload = {"cwd": str(repo.path), "hook_event_name": "PreToolUse", **payload}
    result = hook(repo.path, "claude", "PreToolUse", payload)
    assert result.code == 1 and result.out == ""  # 1: a non-blocking error, the agent goes on
    assert result.err.startswith("comind hook: ") and said in result.err and result.err.count("\n") == 1
    assert "\0" not in result.err
    assert {p: p.read_bytes() for p in hooks.rglob("*") if p.is_file()} == made
    assert repo.git("status", "--porcelain") == ""


def test_unknown_agent_or_event_is_not_a_block(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    assert hook(repo.path, "nosuch", "PreToolUse", {}).code == 1
    assert hook(repo.path, "claude", "BeforeTool", {}).code == 1


def test_at_most_500_tokens_and_the_rest_later(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    for n in range(12):
        title = f"Gotcha number {n} about the grants path and its caches"
        assert (
            cli(
                repo.path,
                "remember",
                "gotcha",
                "--title",
                title,
                "--on",
                "app/perm.py::Checker.check",
                "--symptom",
                "a symptom that takes some room " * 3,
                "--cause",
                "a cause " * 5,
            ).code
            == 0
        )
    refresh(cli, repo.path)
    first = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert tokens(first) <= TOKEN_BUDGET and "more not shown (run: comind why app/perm.py)\n" in first
    second = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert tokens(second) <= TOKEN_BUDGET
    shown = [line for line in (first + second).splitlines() if line.startswith("[gotcha")]
    assert len(shown) == len(set(shown))  # none twice in the session


def test_a_digest_cut_short_names_where_the_rest_are(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The session digest is the repository's constraints and dead ends: what it leaves out is in
    `comind log` (not in `comind preflight --diff`, which shows the records on a change)."""
    repo = build(tmp_path, cli)
    for n in range(12):
        made = cli(
            repo.path, "remember", "constraint", "--title", f"Constraint number {n} on the grants path and its caches",
            "--on", "app/perm.py", "--rule", "a rule that takes some room " * 3, "--severity", "should",
        )  # fmt: skip
        assert made.code == 0, made.err
    refresh(cli, repo.path)
    start = hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"})
    text = context(start)
    assert tokens(text) <= TOKEN_BUDGET
    assert "more not shown (run: comind log --kind constraint --kind attempt)\n" in text, text
    assert "comind preflight" not in text


def test_gemini_before_and_after_tool(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    stamp = {"timestamp": "2026-12-02T12:00:00Z"}
    start = hook(repo.path, "gemini", "SessionStart", {**base(repo.path, "SessionStart"), **stamp, "source": "startup"})
    assert start.json["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Never eval input" in start.json["hookSpecificOutput"]["additionalContext"]
    args = {"file_path": str(repo.path / "app/perm.py"), "instruction": "a set", "old_string": OLD, "new_string": NEW}
    call = {**base(repo.path, "BeforeTool"), **stamp, "tool_name": "replace", "tool_input": args}
    before = hook(repo.path, "gemini", "BeforeTool", call)
    assert (before.code, before.out) == (0, "")  # BeforeTool takes no context: kept for AfterTool
    (repo.path / "app/perm.py").write_text(PERM.replace(OLD, NEW))  # the tool runs
    response = {"llmContent": "ok", "returnDisplay": "ok"}
    after = hook(repo.path, "gemini", "AfterTool", {**call, "hook_event_name": "AfterTool", "tool_response": response})
    out = after.json["hookSpecificOutput"]
    assert out["hookEventName"] == "AfterTool" and "load_grants is slow when cold" in out["additionalContext"]
    bad = {**call, "tool_input": {**args, "old_string": "    return event\n", "new_string": "    return eval(event)\n"}}
    denied = hook(repo.path, "gemini", "BeforeTool", bad)
    assert denied.json["decision"] == "deny" and "Never eval input" in denied.json["reason"]
    assert hook(repo.path, "gemini", "BeforeTool", "nope").code == 1


def test_at_a_new_head_it_answers_from_the_cache_and_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    assert cli(repo.path, "hook", "refresh").code == 0
    old_head = repo.git("rev-parse", "HEAD").strip()
    repo.write("app/new.py", "def new():\n    return 0\n")
    repo.commit("a new head")
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert f"note: as of {old_head[:7]}: HEAD moved to" in text and "refresh" in text
    lock = repo.path / ".git/comind/hooks/refresh.lock"
    for _ in range(600):  # the background refresh ends (not a timing: it is waited for)
        if not lock.exists():
            break
        time.sleep(0.1)
    view = json.loads((repo.path / ".git/comind/hooks/view.json").read_text())
    assert view["head"] == repo.git("rev-parse", "HEAD").strip()
    fresh = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-new")))
    assert "note: as of" not in fresh


def _refreshed(repo: Path) -> None:
    lock = repo / ".git/comind/hooks/refresh.lock"
    for _ in range(600):  # the background refresh ends (not a timing: it is waited for)
        if not lock.exists():
            return
        time.sleep(0.1)


def test_a_history_never_harvested_is_harvested_by_the_refresh(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = history(tmp_path)
    start = hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart", "s-0"), "source": "startup"})
    assert start.code == 0  # the refresh starts (the answer: its view if made meanwhile, else a note)
    _refreshed(repo.path)
    assert (repo.path / ".git/comind/harvest").exists()
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "Cache grants in the checker" in text and "note:" not in text
    # a revert committed during the session is read by the refresh the next call starts
    repo.write("app/other.py", "def other():\n    return 2\n")
    repo.commit("Return two from other")
    repo.revert_head("Callers expect one.")
    edit = {"file_path": str(repo.path / "app/other.py"), "old_string": "1", "new_string": "3", "replace_all": False}
    payload = {**base(repo.path, "PreToolUse", "s-2"), "tool_name": "Edit", "tool_input": edit, "tool_use_id": "t2"}
    assert hook(repo.path, "claude", "PreToolUse", payload).code == 0  # no record there yet: it starts the refresh
    _refreshed(repo.path)
    assert "Return two from other" in context(hook(repo.path, "claude", "PreToolUse", {**payload, "session_id": "s-3"}))


def test_while_the_view_is_made_a_hook_answers_a_note_and_waits_for_no_build(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No view yet (here: one of an older format) and a refresh making it (here: this process holds
    its lock): a hook call does not make the view itself (13 s on an 18,600-commit history, past the
    agents' 10 s timeout), starts no second refresh, and says once per session that it is being made."""
    repo = build(tmp_path, cli)
    hooks = repo.path / ".git/comind/hooks"
    (hooks / "view.json").write_text('{"version": 1}')
    held = _hold(hooks / "refresh.lock", repo.head())
    start = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    assert start.startswith('<comind-ledger source="comind" on="session start">\nnote: comind is making its view')
    assert "Never eval input" not in start and start.count("\n") == 2
    assert hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)).out == ""  # once a session
    bad = claude_edit(repo.path, "    return event\n", "    return eval(event)\n", session="s-2")
    edit = hook(repo.path, "claude", "PreToolUse", bad).json["hookSpecificOutput"]
    assert "permissionDecision" not in edit and "records and `must` checks apply from a later call" in str(edit)
    args = {"file_path": str(repo.path / "app/perm.py"), "old_string": OLD, "new_string": NEW}
    gemini = {**base(repo.path, "BeforeTool", "s-3"), "tool_name": "replace", "tool_input": args}
    assert hook(repo.path, "gemini", "BeforeTool", gemini).out == ""  # (it takes context only after the edit)
    assert (hooks / "refresh.lock").read_text() == f"{os.getpid()} {repo.head()}"  # one refresh at a time
    assert (hooks / "view.json").read_text() == '{"version": 1}'  # nothing made or half-made meanwhile

    views.release(hooks / "refresh.lock", held)  # that refresh ended without a view: the next call starts one
    assert hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-4")).code == 0
    _refreshed(repo.path)
    assert "load_grants is slow when cold" in context(
        hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-5"))
    )


def _hold(lock: Path, head: str) -> int:
    """Hold the refresh lock as a running refresh does: the kernel lock, its pid and HEAD written."""
    held = views.take_lock(lock)
    assert held is not None
    os.write(held[0], f"{os.getpid()} {head}".encode())
    return held[0]


@pytest.mark.parametrize("left", ["its starter died before writing it", "an older comind's, its pid alone"])
def test_a_refresh_lock_left_behind_is_taken_over(cli, tmp_path: Path, left: str) -> None:  # type: ignore[no-untyped-def]
    """A lock no process holds, and no refresh of ours started (it names no HEAD): the next call
    starts a refresh at once (a lock left so blocked every refresh for 10 min)."""
    repo = build(tmp_path, cli)
    repo.write("app/new.py", "def new():\n    return 0\n")
    repo.commit("a new head")
    lock = repo.path / ".git/comind/hooks/refresh.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock.write_text("" if left.startswith("its starter") else str(gone.pid))
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "; a refresh is running" in text, text
    _refreshed(repo.path)
    assert not lock.exists() and not (repo.path / ".git/comind/hooks/refresh.failed").exists()
    view = json.loads((repo.path / ".git/comind/hooks/view.json").read_text())
    assert view["head"] == repo.git("rev-parse", "HEAD").strip()


@pytest.mark.skipif(os.name == "nt", reason="POSIX: the kernel lock")
def test_a_file_system_without_flock_takes_the_lock_by_creating_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Where flock fails for want of support (ENOLCK: vboxsf, some FUSE and network mounts), no
    refresh holds the lock: taken as held, no refresh was ever started and the hooks said one was
    being made forever. There the lock is taken as on Windows: the file created exclusively."""
    import errno
    import fcntl

    def no_flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    lock = tmp_path / "hooks" / "refresh.lock"
    held = views.take_lock(lock)
    assert held is not None and held[1] == ""
    assert views.take_lock(lock) is None  # a second call, while the first holds it
    views.release(lock, held[0])
    assert not lock.exists()
    again = views.take_lock(lock)
    assert again is not None
    views.release(lock, again[0])


def test_two_calls_taking_over_a_left_lock_start_one_refresh(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two calls find a lock left behind. Judging it left and holding it are one step (a kernel
    lock), so the second cannot take it over too, nor remove the first one's (two refreshes ran)."""
    repo = build(tmp_path, cli)
    repo.write("app/new.py", "def new():\n    return 0\n")
    repo.commit("a new head")
    lock = repo.path / ".git/comind/hooks/refresh.lock"
    lock.write_text("")  # left: its starter died before writing it
    first = views.take_lock(lock)  # the first call, half-way: it took the lock over
    assert first is not None and first[1] == ""
    assert views.take_lock(lock) is None  # the second, at the same step: it cannot
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "; a refresh is already running" in text, text  # a third, all the way, as an agent runs it
    assert lock.exists() and lock.read_text() == ""  # neither removed nor rewrote the first's lock
    assert views.start_refresh(Workspace(repo.path), lock, first)  # the first starts the one refresh
    assert lock.read_text().split() == [lock.read_text().split()[0], repo.head()]
    _refreshed(repo.path)
    assert not lock.exists()
    assert json.loads((repo.path / ".git/comind/hooks/view.json").read_text())["head"] == repo.head()


def test_a_refresh_killed_counts_as_failed_and_is_retried_later(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A refresh killed (SIGKILL, the OOM killer) writes no failure: its lock, left naming the HEAD
    it was for, is its failure. The next calls start none while that stands (it was started on every
    call), say why as a refresh that failed does, and the agent is never blocked."""
    repo = build(tmp_path, cli)
    old_head = repo.head()
    repo.write("app/new.py", "def new():\n    return 0\n")
    repo.commit("a new head")
    hooks = repo.path / ".git/comind/hooks"
    assert views.refresh_in_background(Workspace(repo.path))  # as a hook call starts it
    pid = int((hooks / "refresh.lock").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)  # before it could import comind, let alone finish
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    assert (hooks / "refresh.lock").exists() and not (hooks / "refresh.failed").exists()

    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "load_grants is slow when cold" in text  # the view it has still answers
    assert f"note: as of {old_head[:7]}: HEAD moved to" in text and "comind could not refresh it" in text
    assert f'quoted here: "{views.UNFINISHED}"' in text
    mark = json.loads((hooks / "refresh.failed").read_text())
    assert mark["head"] == repo.head() and mark["reason"] == views.UNFINISHED
    assert not (hooks / "refresh.lock").exists()  # none started
    again = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-2")))
    assert "comind could not refresh it" in again and "refresh is running" not in again
    assert not (hooks / "refresh.lock").exists() and json.loads((hooks / "refresh.failed").read_text()) == mark

    (hooks / "refresh.failed").write_text(json.dumps({**mark, "at": time.time() - 7200}))  # the backoff is over
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-3")))
    assert "; a refresh is running" in text, text
    _refreshed(repo.path)
    assert not (hooks / "refresh.failed").exists()
    assert json.loads((hooks / "view.json").read_text())["head"] == repo.head()


def test_a_refresh_killed_with_no_view_yet_says_so_and_waits(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No view yet and the refresh making it killed: the next call answers that comind could not
    make its view, with why, and starts none (it would be killed again at once)."""
    repo = history(tmp_path)
    hooks = repo.path / ".git/comind/hooks"
    assert views.refresh_in_background(Workspace(repo.path))
    pid = int((hooks / "refresh.lock").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    start = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    assert "note: comind could not make its view" in start and f'quoted here: "{views.UNFINISHED}"' in start
    assert not (hooks / "refresh.lock").exists() and not (hooks / "view.json").exists()


def _break_the_store(repo: GitRepo) -> None:
    """A store path that names a file: every refresh fails reading it (a real failure, no mock)."""
    repo.write(".comind.yml", "store: not-a-folder\n")
    repo.write("not-a-folder", "a file\n")
    repo.commit("store in a file")


def test_a_refresh_that_fails_says_why_and_is_not_started_again_while_that_stands(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A refresh that fails every time must not be started by every hook call, nor the note say a
    view is being made: the failure is kept with the state it was for, told as data, retried later."""
    repo = history(tmp_path)
    _break_the_store(repo)
    hooks = repo.path / ".git/comind/hooks"
    done = cli(repo.path, "hook", "refresh")
    assert done.code == 2 and done.err.startswith("comind: store 'not-a-folder': ") and done.err.count("\n") == 1
    mark = json.loads((hooks / "refresh.failed").read_text())
    assert mark["head"] == repo.head() and mark["reason"] == done.err.strip().removeprefix("comind: ")

    start = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    assert "note: comind could not make its view" in start and "is making its view" not in start
    assert "`comind hook refresh` shows the error" in start and "quoted here: \"store 'not-a-folder': " in start
    assert hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)).out == ""  # once a session
    edit = hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-2"))
    assert "could not make its view" in context(edit)
    # no refresh was started: none runs, and the mark (rewritten by each one that fails) is the same
    assert not (hooks / "refresh.lock").exists() and json.loads((hooks / "refresh.failed").read_text()) == mark

    (hooks / "refresh.failed").write_text(json.dumps({**mark, "at": time.time() - 7200}))  # the backoff is over
    assert hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-3")).code == 0
    _refreshed(repo.path)
    again = json.loads((hooks / "refresh.failed").read_text())
    assert again["at"] > mark["at"] and again["reason"] == mark["reason"]  # tried again, failed again

    repo.rm("not-a-folder")  # fixed: a new HEAD, so the failure no longer stands
    repo.commit("the store is a folder again")
    assert hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-4")).code == 0
    _refreshed(repo.path)
    assert not (hooks / "refresh.failed").exists()  # a refresh that succeeds removes the mark
    assert "Cache grants in the checker" in context(
        hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-5"))
    )


def test_a_failed_refresh_keeps_no_credential_of_the_store(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A store URL with credentials is refused, and the refresh fails: its mark kept the URL, key and
    secret, in `.git/comind/hooks/refresh.failed` (the error itself names none)."""
    repo = history(tmp_path)
    monkeypatch.setenv("COMIND_STORE", "s3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY@bucket/p")
    assert cli(repo.path, "hook", "refresh").code == 2
    mark = (repo.path / ".git/comind/hooks/refresh.failed").read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in mark and "wJalrXUtnFEMI" not in mark, mark


def test_a_view_that_cannot_be_refreshed_is_used_and_says_why(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    old_head = repo.head()
    _break_the_store(repo)
    hooks = repo.path / ".git/comind/hooks"
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "; a refresh is running" in text  # the first call starts one, which fails in the background
    _refreshed(repo.path)
    mark = json.loads((hooks / "refresh.failed").read_text())
    assert mark["head"] == repo.head() and mark["reason"].startswith("store 'not-a-folder': ")
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, session="s-2")))
    assert "load_grants is slow when cold" in text  # the view it has still answers
    assert f"note: as of {old_head[:7]}: HEAD moved to" in text and "comind could not refresh it" in text
    assert "quoted here: \"store 'not-a-folder': " in text and "refresh is running" not in text
    assert not (hooks / "refresh.lock").exists() and json.loads((hooks / "refresh.failed").read_text()) == mark
    assert cli(repo.path, "hook", "refresh").code == 2  # a person's refresh always tries, and says why


def test_a_repository_without_commits_starts_no_refresh(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path)  # `git init`, nothing committed: no history to harvest
    payload = {**base(repo.path, "SessionStart"), "source": "startup"}
    assert hook(repo.path, "claude", "SessionStart", payload).code == 0  # makes the (empty) view
    assert hook(repo.path, "claude", "SessionStart", {**payload, "session_id": "s-2"}).code == 0
    assert not (repo.path / ".git/comind/hooks/refresh.lock").exists()


def test_init_hooks_merges_idempotently_and_keeps_other_settings(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    settings = repo.path / ".claude/settings.json"
    settings.parent.mkdir()
    theirs = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
    settings.write_text(
        json.dumps({"model": "x", "hooks": {"PreToolUse": [theirs]}, "permissions": {"allow": ["Read"]}})
    )
    first = cli(repo.path, "init-hooks", "claude")
    assert first.code == 0 and "added the PreToolUse hook (matcher Edit|MultiEdit|Write)" in first.out
    data = json.loads(settings.read_text())
    assert data["model"] == "x" and data["permissions"] == {"allow": ["Read"]} and theirs in data["hooks"]["PreToolUse"]
    ours = [h for g in data["hooks"]["PreToolUse"] for h in g["hooks"] if "hook claude" in h["command"]]
    assert [h["command"] for h in ours] == ["comind hook claude PreToolUse"]
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "comind hook claude SessionStart"
    second = cli(repo.path, "init-hooks", "claude")
    assert second.out.strip() == ".claude/settings.json: nothing to change"
    assert json.loads(settings.read_text()) == data
    local = cli(repo.path, "init-hooks", "claude", "--scope", "local")
    assert local.code == 0 and (repo.path / ".claude/settings.local.json").exists()
    gemini = cli(repo.path, "init-hooks", "gemini")
    assert gemini.code == 0 and "BeforeTool" in gemini.out and "AfterTool" in gemini.out
    hooks = json.loads((repo.path / ".gemini/settings.json").read_text())["hooks"]
    assert hooks["BeforeTool"][0]["matcher"] == "write_file|replace"
    assert cli(repo.path, "init-hooks", "gemini").out.strip() == ".gemini/settings.json: nothing to change"


def test_init_hooks_warns_when_the_hooks_would_not_find_this_comind(tmp_path: Path) -> None:
    """The settings name a bare `comind` (a committed file is shared across machines): when this
    PATH finds none, or another one first, the hooks would fail or run that one, silently. One line
    says so and names the fix; the settings keep the bare name."""
    repo = GitRepo(tmp_path)
    repo.write("a.py", "x = 1\n")
    repo.commit("initial")
    here = Path(COMIND).parent
    fix = f"put {here} on the PATH the agent runs with (or write {COMIND} in the hooks' commands)\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "comind").write_text("#!/bin/sh\nexit 0\n")
    (other / "comind").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")}

    def init_hooks(path: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [COMIND, "init-hooks", "claude", "--scope", "local"],
            cwd=repo.path, env={**env, "PATH": path}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done

    lost = init_hooks("/usr/bin:/bin")
    assert (
        lost.stderr
        == f"comind: warning: no `comind` on PATH: the hooks' `comind hook …` commands will fail to start; {fix}"
    )
    elsewhere = init_hooks(f"{other}:{here}:/usr/bin:/bin")
    assert elsewhere.stderr.startswith(
        f"comind: warning: `comind` on PATH is {other / 'comind'}, not this one ({COMIND})"
    )
    assert elsewhere.stderr.endswith(fix) and elsewhere.stderr.count("\n") == 1
    assert init_hooks(f"{here}:/usr/bin:/bin").stderr == ""
    hooks = json.loads((repo.path / ".claude/settings.local.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == "comind hook claude SessionStart"  # bare, as before


def test_init_hooks_takes_a_shim_to_this_comind_for_this_comind(tmp_path: Path) -> None:
    """A pyenv-style shim folder on PATH (a script that re-dispatches through its manager) was
    warned of as "another comind": what it runs is known only by running it, so its --version is
    asked, where the hooks run. A shim to this comind is quiet; one to another version is named
    with that version; one that runs no comind here is warned of as before."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("initial")
    here = Path(COMIND).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")}

    def shims(name: str, target: str) -> Path:
        """$ROOT/shims/comind execs `$ROOT/libexec/manager exec comind …`, which execs ``target``."""
        root = tmp_path / name
        for path, text in (
            (root / "shims" / "comind", f'#!/bin/sh\nexec "{root}/libexec/manager" exec "${{0##*/}}" "$@"\n'),
            (root / "libexec" / "manager", f'#!/bin/sh\n[ "$1" = exec ] || exit 1\nshift 2\nexec "{target}" "$@"\n'),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            path.chmod(0o755)
        return root / "shims"

    def warned(path: Path) -> str:
        done = subprocess.run(
            [COMIND, "init-hooks", "claude", "--scope", "local"], input="",
            cwd=repo.path, env={**env, "PATH": f"{path}:/usr/bin:/bin"}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert warned(shims("pyenv", COMIND)) == ""
    older = tmp_path / "older-comind"
    older.write_text("#!/bin/sh\necho comind 0.0.1\n")
    older.chmod(0o755)
    to_older = shims("asdf", str(older))
    assert warned(to_older).startswith(
        f"comind: warning: `comind` on PATH is {to_older / 'comind'} (comind 0.0.1), not this one ({COMIND}): "
        f"the hooks will run that one; put {here} on the PATH"
    )
    nowhere = shims("mise", str(tmp_path / "no-such-comind"))
    assert warned(nowhere).startswith(f"comind: warning: `comind` on PATH is {nowhere / 'comind'}, not this one")
    # a program that would read the input init-hooks was given (a pipe here) never gets it: /dev/null
    reader = tmp_path / "reading-comind"
    reader.write_text('#!/bin/sh\n[ "$(readlink /proc/self/fd/0)" = /dev/null ] && echo comind 0.0.2\n')
    reader.chmod(0o755)
    to_reader = shims("nodenv", str(reader))
    assert "(comind 0.0.2)" in warned(to_reader)


def test_init_hooks_refuses_a_broken_settings_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = build(tmp_path, cli)
    settings = repo.path / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}')
    result = cli(repo.path, "init-hooks", "claude")
    assert result.code == 2 and "not valid JSON" in result.err and result.err.count("\n") == 1
    assert settings.read_text() == '{"hooks": {,}'


def test_a_warm_session_start_reads_the_view_and_loads_nothing_heavy(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A hook call with the view current reads `.git/comind/hooks/` and nothing else: no git
    objects, no ledger, no store, no parser, no process; and no dataclasses (~10 ms to import)."""
    import os
    import subprocess
    import sys

    repo = build(tmp_path, cli)
    assert cli(repo.path, "hook", "refresh").code == 0
    heavy = (
        "pygit2",
        "sqlite3",
        "yaml",
        "subprocess",
        "dataclasses",
        "tree_sitter",
        "comind.ledger",
        "comind.records",
        "comind.status",
        "comind.store",
        "comind.codeindex",
        "comind.languages",
        "comind.checks",
    )
    code = (
        "import sys\nfrom comind.cli import main\nsys.argv = ['comind', 'hook', 'claude', 'SessionStart']\n"
        f"code = main()\nprint(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    payload = json.dumps({**base(repo.path, "SessionStart", "s-light"), "source": "startup"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo.path, input=payload, capture_output=True, text=True, env=env
    )
    assert "<comind-ledger" in done.stdout, done.stderr  # it answered: the digest
    assert done.stdout.splitlines()[-1] == "0 []"


def test_an_edit_is_told_to_read_the_attempts_code_where_it_is_now(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An attempt that also wrote docs: the hook shows its code (not its first anchor, README.md), at
    the lines the code has now."""
    from gitrepo import GitRepo

    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.write("README.md", "demo\n")
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.write("README.md", "demo\n\nGrants are cached in the checker.\n")
    repo.commit("Cache grants in the checker")
    repo.git("revert", "--no-edit", "HEAD")
    assert cli(repo.path, "harvest").code == 0
    repo.write("app/perm.py", "# Permissions.\n" * 10 + PERM)
    repo.commit("Say what the module is")
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "Cache grants in the checker" in text and "verify: read app/perm.py:12-14" in text


def test_the_digest_shows_dead_ends_on_live_code_before_those_on_code_gone_or_drifted(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Newer dead ends on a file deleted since (an editor's config) and on code rewritten since came
    first and spent the three places the budget has on code that is no longer there."""
    repo = history(tmp_path)  # "Cache grants in the checker", reverted: its code is still there
    repo.write("app/report.py", "def report(rows):\n" + "".join(f"    total_{n} = sum(rows[{n}])\n" for n in range(8)))
    repo.commit("Add the report")
    repo.write("app/report.py", (repo.path / "app/report.py").read_text() + "    return total_0\n")
    repo.commit("Return the first total")
    repo.revert_head("Wrong total.")
    repo.write("app/report.py", "def report(rows):\n    return [len(r) for r in rows if r]\n")
    repo.commit("Rewrite the report")  # the dead end above is stale now
    repo.write(".gitpod.yml", "tasks: []\n")
    repo.write(".vscode/settings.json", "{}\n")
    repo.commit("Add a Gitpod config")
    repo.write(".gitpod.yml", "tasks: []\nvscode: {extensions: [prettier]}\n")
    repo.write(".vscode/settings.json", '{"prettier": true}\n')
    repo.commit("Switch the editor extension")
    repo.revert_head("Not wanted.")
    repo.git("rm", "-q", ".gitpod.yml")
    repo.commit("Drop the Gitpod config")  # the newest dead end: one of its files gone, so stale
    assert cli(repo.path, "harvest").code == 0
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "SessionStart", {**base(repo.path, "SessionStart"), "source": "startup"}))
    heads = [line for line in text.splitlines() if line.startswith("[attempt")]
    assert [h.split("] ", 1)[1] for h in heads] == [
        "Cache grants in the checker",
        "Switch the editor extension",  # shown by its file still there, the newer of the two stale
        "Return the first total",
    ], text
    assert "· stale]" in heads[1] and "· stale]" in heads[2], heads
    assert "  on: .vscode/settings.json (verified at " in text, text


def test_an_edit_shows_must_constraints_and_dead_ends_before_questions(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Records on an edit came in the order they were written: questions written first filled the
    500 tokens, and the `must` constraint and the dead end on the same code were left out."""
    repo = history(tmp_path)
    assert cli(repo.path, "harvest").code == 0  # the dead end: "Cache grants in the checker"
    for n in range(6):
        asked = cli(
            repo.path, "remember", "question", "--title", f"Open question {n} on how the checker loads its grants",
            "--on", "app/perm.py::Checker.check", "--question", "is it still needed here, or can it go? " * 3,
        )  # fmt: skip
        assert asked.code == 0, asked.err
    made = cli(
        repo.path, "remember", "constraint", "--title", "Grants are read fresh on every check",
        "--on", "app/perm.py::Checker.check", "--rule", "no cache in front of load_grants", "--severity", "must",
    )  # fmt: skip
    assert made.code == 0, made.err
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    heads = [line for line in text.splitlines() if line.startswith("[")]
    assert heads[0].endswith("· must] Grants are read fresh on every check"), text
    assert heads[1].startswith("[attempt") and heads[1].endswith("] Cache grants in the checker"), text
    assert all(h.startswith("[question") for h in heads[2:]) and "more not shown" in text, text


def test_an_edit_that_changes_nothing_gets_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """old_string == new_string (the Edit tool refuses it) was answered with every record on the file,
    "which this edit changes"."""
    repo = build(tmp_path, cli)
    same = hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, OLD))
    assert (same.code, same.out) == (0, "")
    write = {
        **base(repo.path, "PreToolUse"),
        "tool_name": "Write",
        "tool_input": {"file_path": str(repo.path / "app/perm.py"), "content": PERM},
    }
    assert (hook(repo.path, "claude", "PreToolUse", write).out) == ""
    assert "Never eval input" in context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))


def test_an_edit_is_told_to_read_the_code_it_edits_as_preflight_is(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A dead end on two functions, the edited one second: the hook said to read the other (the
    record's subject) while `preflight --diff` on the same change said to read the edited one; both
    then said it was `on` the other, and now on the one edited, as `verify` reads it."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/alias.py", "def aliases():\n    return {}\n")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/alias.py", "def aliases():\n    return {'grant': 'perm'}\n")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache grants in the checker")
    repo.revert_head("Stale grants.")
    assert cli(repo.path, "harvest").code == 0
    new = "        if not grants:\n            return False\n" + OLD  # Checker.check grows to lines 2-6
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, new)))
    assert "  on: app/perm.py::Checker.check (verified at " in text and "  verify: read app/perm.py:2-6\n" in text, text
    assert "alias" not in text
    repo.write("app/perm.py", PERM.replace(OLD, new))
    item = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"][0]
    assert (item["on"], item["anchored"], item["verify"]) == ("app/perm.py::Checker.check", "", "read app/perm.py:2-6")
    args = {"file_path": str(repo.path / "app/perm.py"), "instruction": "back", "old_string": new, "new_string": OLD}
    call = {**base(repo.path, "BeforeTool", "s-2"), "timestamp": "2026-12-02T12:00:00Z", "tool_name": "replace"}
    call["tool_input"] = args
    assert hook(repo.path, "gemini", "BeforeTool", call).out == ""  # kept for AfterTool
    repo.write("app/perm.py", PERM)  # the tool runs: the lines to read are those after it
    response = {"llmContent": "ok", "returnDisplay": "ok"}
    after = hook(repo.path, "gemini", "AfterTool", {**call, "hook_event_name": "AfterTool", "tool_response": response})
    assert "  verify: read app/perm.py:2-4\n" in after.json["hookSpecificOutput"]["additionalContext"]
    assert "  on: app/perm.py::Checker.check (" in after.json["hookSpecificOutput"]["additionalContext"]


def test_an_edit_of_code_renamed_since_is_on_it_by_its_name_now(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A dead end on two functions, the edited one renamed and moved since: `on` named the other
    (the record's subject) and `verify` the edited one, so the agent could not tell them one code.
    Now `on` names what is edited as it is now, and how it was anchored."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/alias.py", "def aliases():\n    return {}\n")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/alias.py", "def aliases():\n    return {'grant': 'perm'}\n")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache grants in the checker")
    repo.revert_head("Stale grants.")
    repo.mv("app/perm.py", "app/perms.py")
    repo.write("app/perms.py", PERM.replace("def check", "def allowed"))
    repo.commit("Call check allowed, in perms")
    assert cli(repo.path, "harvest").code == 0
    refresh(cli, repo.path)
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW, path="app/perms.py")))
    assert "why shown: on app/perms.py::Checker.allowed, which this edit touches" in text, text
    assert "  on: app/perms.py::Checker.allowed (verified at " in text
    assert "; anchored as app/perm.py::Checker.check)\n" in text and "  verify: read app/perms.py:2-4\n" in text


def test_an_edit_of_a_file_a_record_is_on_is_on_that_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record on a symbol in one file and on another file whole: an edit of that file named the
    symbol in `on` and the file in `verify`. One on a file and on a symbol in it is on the symbol."""
    repo = history(tmp_path)
    for title, on in (("Grants are read once", "app/other.py::other"), ("Checks are pure", "app/perm.py")):
        second = "app/perm.py" if on != "app/perm.py" else "app/perm.py::Checker.check"
        made = cli(
            repo.path, "remember", "constraint", "--on", on, "--on", second,
            "--title", title, "--rule", title.lower(), "--severity", "should",
        )  # fmt: skip
        assert made.code == 0, made.err
    repo.commit("records")
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    block = text[text.index("Grants are read once") :].split("\n[")[0]
    assert "  on: app/perm.py (verified at " in block and "  verify: read app/perm.py\n" in block, block
    block = text[text.index("Checks are pure") :].split("\n[")[0]
    assert "  on: app/perm.py::Checker.check (" in block and "  verify: read app/perm.py:2-4\n" in block, block
    repo.write("app/perm.py", PERM.replace(OLD, NEW))
    items = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"]
    assert sorted((i["title"], i["on"], i["verify"]) for i in items if i["kind"] == "constraint") == [
        ("Checks are pure", "app/perm.py::Checker.check", "read app/perm.py:2-4"),
        ("Grants are read once", "app/perm.py", "read app/perm.py"),
    ]


def test_an_edit_in_a_folder_a_record_is_on_is_told_to_read_the_file_it_edits(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record on a folder: `preflight --diff` said nothing to read, the hook its subject; both
    now say the file edited in it."""
    repo = history(tmp_path)
    made = cli(
        repo.path, "remember", "constraint", "--on", "app/", "--title", "The app reads no environment variable",
        "--rule", "configuration comes from the settings object", "--severity", "should",
    )  # fmt: skip
    assert made.code == 0, made.err
    repo.commit("records")
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, OLD, NEW)))
    assert "The app reads no environment variable" in text and "  verify: read app/perm.py\n" in text, text
    repo.write("app/perm.py", PERM.replace(OLD, NEW))
    items = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"]
    [item] = [i for i in items if i["kind"] == "constraint"]
    assert item["verify"] == "read app/perm.py", item


@pytest.mark.skipif(os.name == "nt", reason="fork and flock are POSIX")
def test_a_process_forked_from_the_refresh_does_not_hold_its_lock(tmp_path: Path) -> None:
    """The refresh's harvest forks an anchor worker, which inherited the lock's descriptor: a worker
    outliving a refresh that was killed kept the lock, and no refresh could start. The fork closes it."""
    import fcntl
    import sys

    lock = tmp_path / "refresh.lock"
    script = f"""
import fcntl, os, sys
from comind.agents.hooks.view import keep_from_forks
fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
keep_from_forks(fd)
if os.fork() == 0:  # the worker: it lives on, the refresh dies
    sys.stdout.write("forked\\n"); sys.stdout.flush()
    import time; time.sleep(30); os._exit(0)
os._exit(0)
"""
    worker = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout is not None and worker.stdout.readline() == "forked\n"
        worker.wait(timeout=10)  # the refresh is gone; its worker sleeps on
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises while anyone still holds it
        finally:
            os.close(fd)
    finally:
        subprocess.run(["pkill", "-f", str(lock)], check=False)


def test_code_of_one_line_is_read_at_that_line_not_a_range_of_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A dead end on a one-line function: what to read is `app/ping.py:2`, as an anchor writes a
    line, where the hook and `preflight --diff` said `app/ping.py:2-2`."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/ping.py", "import os\ndef ping(): return os.getpid()\n")
    repo.commit("initial")
    repo.write("app/ping.py", "import os\ndef ping(): return os.getppid()\n")
    repo.commit("Ping the parent")
    repo.revert_head("The parent is init in a container.")
    assert cli(repo.path, "harvest").code == 0
    old, new = "def ping(): return os.getpid()\n", "def ping(): return os.getpid() or 1\n"
    text = context(hook(repo.path, "claude", "PreToolUse", claude_edit(repo.path, old, new, path="app/ping.py")))
    assert "  verify: read app/ping.py:2\n" in text, text
    repo.write("app/ping.py", "import os\n" + new)
    item = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"][0]
    assert item["verify"] == "read app/ping.py:2", item
