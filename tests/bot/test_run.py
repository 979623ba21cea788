"""The bot on a merge request: commands, the report, `comind bot run` and `comind bot serve`,
against the fake GitHub and GitLab over real HTTP, with real git repositories as workspaces."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests
from fakes import forge as fakeforge

from comind.bot.commands import READER_REPLY
from comind.bot.forge import RetryPolicy
from comind.bot.github import GitHubForge
from comind.bot.gitlab import GitLabForge
from comind.bot.report import REPORT_MARKER, load_report, post_report
from comind.bot.run import answer_commands, event_forge_env, run, serve
from comind.checks.findings import Finding, Report
from comind.checks.formats import FormatContext
from comind.harvest.mr import MergeRequestHarvester
from comind.records import harvested_id
from comind.workspace import Workspace


def _fast(fake: Any) -> Any:
    """The fake answers in two writes (headers, body): without TCP_NODELAY each request waits
    for a delayed ACK (~40 ms). Nothing is timed; the tests only finish sooner."""
    fake.server.RequestHandlerClass.disable_nagle_algorithm = True
    return fake


@pytest.fixture
def fake_github() -> Any:
    for fake in fakeforge.fake_github():
        yield _fast(fake)


@pytest.fixture
def fake_gitlab() -> Any:
    for fake in fakeforge.fake_gitlab():
        yield _fast(fake)


TOKEN = "ghp_" + "B0tT0ken" * 5
GL_TOKEN = "glpat-" + "B0tT0ken" * 3
BOT = "comind-bot"
PATCH = "@@ -1,3 +1,5 @@\n import os\n+import redis\n+CACHE = {}\n \n def main():"
SECRET = "hook secret"


@pytest.fixture
def gh(fake_github: fakeforge.FakeGitHub) -> fakeforge.FakeGitHub:
    fake_github.add_token(TOKEN, BOT)
    fake_github.set_permission("alice", "write")
    fake_github.set_permission("rita", "read")
    fake_github.add_pull(5, title="Sessions in Redis", author="alice")
    fake_github.add_file(5, "app/session.py", patch=PATCH)
    return fake_github


def make(fake: fakeforge.FakeGitHub) -> GitHubForge:
    return GitHubForge(fake.full_name, TOKEN, api_url=fake.base, throttle=False, retry=RetryPolicy(backoff=0))


@pytest.fixture
def forge(gh: fakeforge.FakeGitHub) -> GitHubForge:
    return make(gh)


@pytest.fixture
def ws(repo: Path) -> Workspace:
    return Workspace(repo)


def fresh(ws: Workspace) -> Workspace:
    """The same repository on a fresh CI runner: no harvest cache, no ledger view."""
    shutil.rmtree(ws.cache_dir)
    return Workspace(ws.root)


def stored(store: Any) -> list[str]:
    return sorted(key[:36] for key in store.inbox_keys())


def replies(gh: fakeforge.FakeGitHub, author: str = BOT) -> list[str]:
    issue = [c["body"] for c in gh.issue_comments.values() if c["user"] == author]
    inline = [c["body"] for c in gh.review_comments.values() if c["user"] == author]
    return issue + inline


# --- commands ------------------------------------------------------------------------------------


def test_a_command_is_answered_once_across_runs(gh, forge, ws):
    comment = gh.add_issue_comment(
        5,
        "alice",
        '/comind remember constraint "No raw SQL in handlers" '
        "--rule 'use the query builder' --severity must --on app/db.py",
    )
    result = answer_commands(ws, forge, 5)
    assert (result.notes, result.commands, result.written) == (1, 1, 1)
    (answer,) = replies(gh)
    key = f"mr:github:{gh.full_name}:5:issuecomment-{comment}"
    assert f"<!-- comind:answer issuecomment-{comment} " in answer
    assert f"Remembered constraint `{harvested_id(key)[-8:]}`" in answer
    assert stored(ws.harvest_store) == [harvested_id(key)] and stored(ws.store) == []
    # a fresh runner finds the earlier answer on the forge, not in local state
    again = answer_commands(fresh(ws), make(gh), 5)
    assert again.notes == 0 and len(replies(gh)) == 1


def test_a_reader_is_refused_once_and_nothing_is_written(gh, forge, ws):
    gh.add_issue_comment(5, "rita", '/comind remember question "Why Redis" --question why? --on app/session.py')
    result = answer_commands(ws, forge, 5)
    assert result.refused == 1 and result.written == 0
    (answer,) = replies(gh)
    assert READER_REPLY in answer
    assert stored(ws.harvest_store) == [] and stored(ws.store) == []
    answer_commands(ws, make(gh), 5)
    assert len(replies(gh)) == 1


def test_a_malformed_command_gets_the_usage_and_writes_nothing(gh, forge, ws):
    gh.add_issue_comment(5, "alice", "/comind remember decision --chosen redis\n/comind remember wish x")
    result = answer_commands(ws, forge, 5)
    assert result.failed == 2 and result.written == 0
    (answer,) = replies(gh)
    assert "title is required" in answer and "unknown kind" in answer
    assert '```\n/comind remember KIND "TITLE"' in answer
    assert stored(ws.harvest_store) == []


def test_the_bot_ignores_its_own_comments(gh, forge, ws):
    gh.add_issue_comment(5, BOT, "/comind help")
    assert answer_commands(ws, forge, 5).notes == 0
    assert [c for c in gh.calls("POST") if c != "POST /graphql"] == []


def test_an_inline_command_is_answered_in_its_thread_and_anchored_to_the_line(gh, forge, ws):
    root = gh.add_review_comment(
        5,
        "alice",
        "/comind remember gotcha \"CACHE is per process\" --symptom 'stale reads' --cause 'one dict per worker'",
        "app/session.py",
        3,
    )
    answer_commands(ws, forge, 5, publish=True)
    assert f"POST /repos/{gh.full_name}/pulls/5/comments/{root}/replies" in gh.calls()
    (rid,) = stored(ws.store)  # --publish: the shared store
    assert stored(ws.harvest_store) == []
    ledger = ws.ledger()
    ledger.sync(warn=False)
    record = ledger.get(rid)
    assert record.anchors[0]["raw"] == "app/session.py:3" and record.evidence[0]["ref"].endswith(f"r{root}")


def test_why_help_and_review_actions(gh, forge, ws):
    first = gh.add_issue_comment(
        5,
        "alice",
        '/comind remember decision "Sessions in Redis" --chosen redis '
        '--alternative "jwt | leaks roles" --on app/session.py',
    )
    answer_commands(ws, forge, 5)
    rid = harvested_id(f"mr:github:{gh.full_name}:5:issuecomment-{first}")
    gh.add_issue_comment(5, "alice", f"/comind why app/session.py\n/comind confirm {rid[-8:]} re-read it\n/comind help")
    answer_commands(ws, make(gh), 5)
    answer = replies(gh)[-1]
    assert f"`{rid[-8:]}` decision" in answer and "Sessions in Redis" in answer
    assert f"Confirmed `{rid[-8:]}`" in answer and "/comind why ANCHOR" in answer
    assert len(stored(ws.harvest_store)) == 2


# --- the report ----------------------------------------------------------------------------------


def finding(fp: str, path: str | None, line: int | None, title: str, level: str = "error") -> Finding:
    return Finding(
        type="dead_end",
        level=level,
        title=title,
        message=f"{title}: the cache was reverted in #3",
        fingerprint=fp,
        record_id=harvested_id(fp),
        path=path,
        line=line,
        evidence=({"type": "commit", "ref": "d" * 40, "note": "the revert"},),
        in_diff=line in (2, 3),
        commands=(f"comind show {fp}",),
    )


def report(*findings: Finding) -> Report:
    return Report(base="b" * 40, head="a" * 40, findings=list(findings), repo="octo/widgets")


def summaries(gh: fakeforge.FakeGitHub) -> list[dict[str, Any]]:
    return [c for c in gh.issue_comments.values() if c["user"] == BOT and REPORT_MARKER in c["body"]]


def test_the_report_is_created_once_and_edited_on_a_rerun(gh, forge):
    on_diff = finding("fp-cache", "app/session.py", 3, "Re adds the process local cache")
    off_diff = finding("fp-pool", "app/pool.py", 40, "Pool size below the floor", level="warning")
    posted = post_report(forge, 5, report(on_diff, off_diff))
    assert (posted.inline, posted.kept, posted.folded) == (1, 0, 1)
    (summary,) = summaries(gh)
    assert "Re adds the process" in summary["body"] and "Pool size below the floor" in summary["body"]
    (inline,) = gh.review_comments.values()
    assert (inline["path"], inline["line"]) == ("app/session.py", 3)
    assert inline["body"].startswith("<!-- comind:finding fp-cache -->")
    assert "comind show fp-cache" in inline["body"] and "the revert" in inline["body"]

    more = finding("fp-import", "app/session.py", 2, "Imports redis in the handler")
    posted = post_report(make(gh), 5, report(on_diff, off_diff, more))
    assert (posted.inline, posted.kept) == (1, 1)
    (summary,) = summaries(gh)  # the same comment, edited in place
    assert summary["edits"] == 1 and "Imports redis" in summary["body"]
    assert len(gh.review_comments) == 2
    assert gh.count(f"/repos/{gh.full_name}/issues/5/comments", "POST") == 1


def test_inline_comments_only_on_diff_lines_the_rest_in_the_summary(gh, forge):
    findings = [
        finding("fp-ctx", "app/session.py", 1, "On a context line"),
        finding("fp-far", "app/session.py", 40, "Far from the diff"),
        finding("fp-other", "lib/other.py", 2, "In a file the change does not touch"),
        finding("fp-repo", None, None, "About the whole repository"),
    ]
    posted = post_report(forge, 5, report(*findings))
    assert (posted.inline, posted.folded) == (1, 3)
    assert [(c["path"], c["line"]) for c in gh.review_comments.values()] == [("app/session.py", 1)]
    body = summaries(gh)[0]["body"]
    for title in ("Far from the diff", "In a file the change does not touch", "About the whole repository"):
        assert title in body


def test_a_finding_that_disappears_gets_its_thread_resolved_and_a_clean_report_is_one_line(gh, forge):
    post_report(
        forge,
        5,
        report(
            finding("fp-cache", "app/session.py", 3, "Re adds the cache"),
            finding("fp-import", "app/session.py", 2, "Imports redis"),
        ),
    )
    threads = {gh.review_comments[t["root"]]["body"].split(" -->")[0]: tid for tid, t in gh.threads.items()}
    posted = post_report(make(gh), 5, report(finding("fp-import", "app/session.py", 2, "Imports redis")))
    assert posted.resolved == 1 and posted.kept == 1 and posted.inline == 0
    assert gh.threads[threads["<!-- comind:finding fp-cache"]]["resolved"] is True
    assert gh.threads[threads["<!-- comind:finding fp-import"]]["resolved"] is False
    posted = post_report(make(gh), 5, report())
    assert posted.resolved == 1
    (summary,) = summaries(gh)
    lines = [line for line in summary["body"].splitlines() if line.strip()]
    assert lines[0] == REPORT_MARKER and len(lines) == 2 and lines[1].startswith("comind: nothing re-proposed")
    # a finding that comes back after its thread was resolved is commented again
    post_report(make(gh), 5, report(finding("fp-cache", "app/session.py", 3, "Re adds the cache")))
    assert len(gh.review_comments) == 3


def test_a_clean_report_posts_nothing_when_there_was_no_summary(gh, forge):
    posted = post_report(forge, 5, report())
    assert posted.summary is None and [c for c in gh.calls("POST") if c != "POST /graphql"] == []


def test_the_summary_stays_under_the_forge_limit_with_a_pointer(gh, forge):
    big = [finding(f"fp-{i}", "app/pool.py", 100 + i, f"Finding {i} " + "x" * 80) for i in range(400)]
    big = [Finding(**{**f.__dict__, "message": "long explanation " * 200}) for f in big]
    context = FormatContext(summary_link="https://ci.example/runs/7")
    post_report(forge, 5, report(*big), context=context)
    (summary,) = summaries(gh)
    assert len(summary["body"]) <= forge.max_body
    assert "more findings not shown here" in summary["body"] and "https://ci.example/runs/7" in summary["body"]


def test_an_inline_comment_the_forge_refuses_stays_in_the_summary(gh, forge):
    gh.fail(
        f"/repos/{gh.full_name}/pulls/5/comments",
        422,
        method="POST",
        body={"message": "Validation Failed", "errors": [{"message": "line must be part of the diff"}]},
    )
    posted = post_report(forge, 5, report(finding("fp-cache", "app/session.py", 3, "Re adds the cache")))
    assert (posted.inline, posted.folded) == (0, 1) and not gh.review_comments
    assert "Re adds the cache" in summaries(gh)[0]["body"]


def test_reports_round_trip_through_json(tmp_path):
    original = report(
        finding("fp-cache", "app/session.py", 3, "Re adds the cache"),
        Finding(type="violation", level="note", title="t", message="m", fingerprint="f2", rule="myorg/no-raw-sql"),
    )
    path = tmp_path / "report.json"
    path.write_text(json.dumps(original.to_json()))
    assert load_report(path).to_json() == original.to_json()
    path.write_text("{")
    with pytest.raises(Exception, match="not JSON"):
        load_report(path)


# --- comind bot run --------------------------------------------------------------------------------


@pytest.fixture
def actions_env(gh, tmp_path, monkeypatch):
    """GitHub Actions' environment for a pull_request event on #5."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(gh.github_pull_request_event(5, "synchronize")))
    summary = tmp_path / "step-summary.md"
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": gh.full_name,
        "GITHUB_API_URL": gh.base,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_SERVER_URL": gh.base,
        "GITHUB_RUN_ID": "77",
        "COMIND_RETRY_BACKOFF": "0",
        "COMIND_FORGE_THROTTLE": "0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def report_file(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(
        json.dumps(
            report(
                finding("fp-cache", "app/session.py", 3, "Re adds the cache"),
                finding("fp-pool", "app/pool.py", 9, "Pool too small"),
            ).to_json()
        )
    )
    return path


def test_bot_run_answers_commands_and_posts_the_report(gh, repo, cli, actions_env, report_file):
    gh.add_issue_comment(
        5, "alice", '/comind remember intent "Sessions survive restarts" --need "revocation" --on app/session.py'
    )
    result = cli(repo, "bot", "run", "--forge", "github", "--report", str(report_file))
    assert result.code == 0, result.err
    assert "answered 1 command(s)" in result.err and "report posted: 1 new inline" in result.err
    assert len(summaries(gh)) == 1 and len(gh.review_comments) == 1
    assert any("Remembered intent" in body for body in replies(gh))
    again = cli(repo, "bot", "run", "--report", str(report_file))  # the forge from GITHUB_ACTIONS
    assert again.code == 0, again.err
    assert len(summaries(gh)) == 1 and len(gh.review_comments) == 1 and len(replies(gh)) == 3


def test_a_comment_event_answers_commands_only(gh, repo, cli, actions_env, tmp_path, monkeypatch):
    comment = gh.add_issue_comment(5, "alice", "/comind help")
    event = tmp_path / "comment.json"
    event.write_text(json.dumps(gh.github_issue_comment_event(comment)))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    result = cli(repo, "bot", "run", "--forge", "github")
    assert result.code == 0, result.err
    assert len(replies(gh)) == 1 and not summaries(gh)
    assert gh.count(f"/repos/{gh.full_name}/pulls/5/files") == 0  # no harvest, no check


def test_not_a_pull_request_is_nothing_to_do(repo, cli, actions_env, tmp_path, monkeypatch):
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    result = cli(repo, "bot", "run", "--forge", "github")
    assert result.code == 0 and "nothing to do" in result.err


def test_a_fork_pr_with_a_read_only_token_degrades_in_one_log_line(gh, repo, cli, actions_env, report_file):
    gh.add_issue_comment(5, "alice", "/comind help")
    for path in (f"/repos/{gh.full_name}/issues/5/comments", f"/repos/{gh.full_name}/pulls/5/comments"):
        gh.fail(path, 403, times=100, method="POST", body={"message": "Resource not accessible by integration"})
    result = cli(repo, "bot", "run", "--forge", "github", "--report", str(report_file))
    assert result.code == 0, result.err
    lines = [line for line in result.err.splitlines() if "cannot write" in line]
    assert len(lines) == 1 and "403" in lines[0]
    # the check step that wrote the report printed its annotations and summary: not twice
    assert "::error" not in result.out and not Path(actions_env["GITHUB_STEP_SUMMARY"]).exists()
    assert not gh.issue_comments.keys() - {c for c, v in gh.issue_comments.items() if v["user"] != BOT}
    assert gh.count(f"/repos/{gh.full_name}/issues/5/comments", "POST") == 1  # one try, then no more writes


def test_the_fallback_s_unwritable_job_summary_is_one_warning(tmp_path, capsys):
    """Where the bot cannot comment, the findings go to annotations and the job summary; a summary
    path that cannot be written is one line naming it, not an internal error."""
    from comind.bot.run import fallback

    folder = tmp_path / "a-folder"
    folder.mkdir()
    fallback(
        report(finding("fp-cache", "app/session.py", 3, "Re adds the cache")),
        FormatContext(job_summary=folder),
        "github",
    )
    out, err = capsys.readouterr()
    assert out.startswith("::error file=app/session.py,line=3")
    said = f"the job summary was not written: $GITHUB_STEP_SUMMARY {str(folder)!r}: Is a directory"
    assert err == f"comind: bot: warning: {said}\n"


def test_a_500_during_a_run_is_retried(gh, repo, cli, actions_env, report_file):
    gh.fail(f"/repos/{gh.full_name}/pulls/5", 502, times=2)
    gh.fail(f"/repos/{gh.full_name}/issues/5/comments", 500, times=1, method="POST")
    result = cli(repo, "bot", "run", "--forge", "github", "--report", str(report_file))
    assert result.code == 0, result.err
    assert len(summaries(gh)) == 1


def test_a_500_that_persists_is_reported_and_the_other_steps_still_run(gh, repo, cli, actions_env, report_file):
    gh.add_issue_comment(5, "alice", "/comind help")
    gh.fail(f"/repos/{gh.full_name}/pulls/5/reviews", 500, times=100)
    result = cli(repo, "bot", "run", "--forge", "github", "--report", str(report_file))
    assert result.code == 2
    assert f"GET /repos/{gh.full_name}/pulls/5/reviews failed after 3 attempts (HTTP 500)" in result.err
    assert len(summaries(gh)) == 1  # the report was still posted


def test_pagination_and_a_merge_request_with_3000_files(gh, forge, ws):
    for i in range(3100):
        gh.add_file(5, f"src/m{i}.py", patch="@@ -1 +1,2 @@\n a\n+b")
    for i in range(130):
        gh.add_issue_comment(5, "bob", f"comment {i}")
    gh.add_issue_comment(5, "alice", "/comind help")
    findings = [finding("fp-last", "src/m2998.py", 2, "On the last visible file")]
    result = run(ws, forge, 5, report=report(*findings), env={})
    assert not result.errors and result.answered is not None and result.answered.notes == 1
    assert result.posted.inline == 1
    assert gh.count(f"/repos/{gh.full_name}/pulls/5/files") >= 30
    assert gh.count(f"/repos/{gh.full_name}/issues/5/comments", "GET") >= 2


# --- GitLab ---------------------------------------------------------------------------------------


def test_no_token_degrades_to_the_log_and_says_what_to_set(fake_gitlab, repo, cli, report_file, monkeypatch):
    """A GitLab job without COMIND_GITLAB_TOKEN: no comment, exit 0, one line naming the variable,
    and the report's findings in the job log; the fake forge hears nothing."""
    gl = fake_gitlab
    gl.add_mr(5)
    env = {
        "GITLAB_CI": "true",
        "CI_API_V4_URL": f"{gl.base}/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "5",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("COMIND_GITLAB_TOKEN", "GITLAB_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    result = cli(repo, "bot", "run", "--report", str(report_file))
    assert result.code == 0, result.err
    assert "set COMIND_GITLAB_TOKEN" in result.err and "posts no comments" in result.err
    assert "check step's output" in result.err and result.out == ""  # printed once, by the check step
    assert gl.all_notes(5) == []
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    monkeypatch.setenv("CI_MERGE_REQUEST_DIFF_BASE_SHA", base)
    result = cli(repo, "bot", "run")  # no report: the bot checks the change against the job's base itself
    assert result.code == 0 and "posts no comments" in result.err
    assert gl.all_notes(5) == []


def test_gitlab_merge_request_pipeline(fake_gitlab, repo, cli, report_file, monkeypatch):
    gl = fake_gitlab
    gl.add_token(GL_TOKEN, BOT)
    gl.set_access("alice", 30)
    gl.set_access("rita", 20)
    gl.add_mr(5, title="Sessions in Redis", head_sha="a" * 40)
    gl.add_diff(5, "app/session.py", PATCH)
    gl.add_note(5, "alice", '/comind remember question "Why a dict" --question why? --on app/session.py')
    gl.add_note(5, "rita", "/comind help")
    env = {
        "GITLAB_CI": "true",
        "CI_API_V4_URL": f"{gl.base}/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "5",
        "COMIND_GITLAB_TOKEN": GL_TOKEN,
        "COMIND_RETRY_BACKOFF": "0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for _ in range(2):
        result = cli(repo, "bot", "run", "--report", str(report_file))
        assert result.code == 0, result.err
    bot_notes = [n for n in gl.all_notes(5) if n["author"]["username"] == BOT]
    assert sum(REPORT_MARKER in n["body"] for n in bot_notes) == 1
    assert sum("Remembered question" in n["body"] for n in bot_notes) == 1
    assert sum(READER_REPLY in n["body"] for n in bot_notes) == 1
    assert sum(n["type"] == "DiffNote" for n in bot_notes) == 1  # the in-diff finding, once
    assert len(stored(Workspace(repo).harvest_store)) == 1


def test_gitlab_forge_answers_too(fake_gitlab, ws):
    gl = fake_gitlab
    gl.add_token(GL_TOKEN, BOT)
    gl.set_access("alice", 40)
    gl.add_mr(5)
    gl.add_diff(5, "app/session.py", PATCH)
    did, nid = gl.add_thread(
        5, "alice", '/comind remember gotcha "g" --symptom s --cause c', path="app/session.py", line=3
    )
    forge = GitLabForge(42, GL_TOKEN, url=gl.base, retry=RetryPolicy(backoff=0))
    assert answer_commands(ws, forge, 5).written == 1
    (answer,) = [n for n in gl.discussion(5, did)["notes"] if n["author"]["username"] == BOT]
    assert f"<!-- comind:answer note_{nid} " in answer["body"]
    assert stored(ws.harvest_store) == [harvested_id(f"mr:gitlab:42:5:note_{nid}")]


# --- comind bot serve ------------------------------------------------------------------------------


def test_serve_refuses_to_start_without_a_secret(repo, cli, monkeypatch):
    monkeypatch.delenv("COMIND_WEBHOOK_SECRET", raising=False)
    result = cli(repo, "bot", "serve", "--port", "0")
    assert result.code == 2 and result.err.startswith("comind: bot serve: set COMIND_WEBHOOK_SECRET")


def test_serve_rejects_forged_events_and_answers_signed_commands(gh, ws):
    env = {
        "COMIND_WEBHOOK_SECRET": SECRET,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": gh.base,
        "COMIND_RETRY_BACKOFF": "0",
        "COMIND_FORGE_THROTTLE": "0",
    }
    server = serve(ws, env, port=0)
    comment = gh.add_issue_comment(
        5, "alice", '/comind remember question "Why Redis" --question why? --on app/session.py'
    )
    body = json.dumps(gh.github_issue_comment_event(comment)).encode()
    headers = {"X-GitHub-Event": "issue_comment", "Content-Type": "application/json"}
    with server:
        forged = requests.post(
            server.url,
            data=body,
            timeout=30,
            headers={**headers, "X-Hub-Signature-256": fakeforge.github_signature("wrong", body)},
        )
        assert forged.status_code == 401
        signed = requests.post(
            server.url,
            data=body,
            timeout=30,
            headers={**headers, "X-Hub-Signature-256": fakeforge.github_signature(SECRET, body)},
        )
        assert signed.status_code == 202
        noise = json.dumps(gh.github_pull_request_event(5)).encode()
        requests.post(
            server.url,
            data=noise,
            timeout=30,
            headers={
                "X-GitHub-Event": "pull_request",
                "X-Hub-Signature-256": fakeforge.github_signature(SECRET, noise),
            },
        )
    # stopping drained the queue
    assert server.handled == 2 and server.failed == 0
    (answer,) = replies(gh)
    assert "Remembered question" in answer
    assert len(stored(ws.harvest_store)) == 1


def test_bot_run_checks_the_change_itself_and_sweeps_for_dead_ends(gh, repo, cli, actions_env):
    from conftest import git

    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "app.py").write_text("def f():\n    return 2\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD").strip()
    gh.add_pull(6, title="Return two", head_sha=head, base_sha=base)
    gh.add_file(6, "app.py", status="added", patch="@@ -0,0 +1,2 @@\n+def f():\n+    return 2")
    gh.add_pull(9, title="Shard sessions", state="closed", labels=("dead-end",))
    event = Path(actions_env["GITHUB_EVENT_PATH"])
    event.write_text(json.dumps(gh.github_pull_request_event(6)))
    result = cli(repo, "bot", "run", "--forge", "github")
    assert result.code == 0, result.err
    assert "harvested 1 new record(s)" in result.err and "report posted" in result.err
    assert not summaries(gh)  # a clean report and no earlier summary: nothing to say
    titles = [r.title for r in Workspace(repo).harvest_store.read(warn=False).records.values()]
    assert titles == ["Abandoned: Shard sessions"]


def test_serve_answers_a_signed_gitlab_note_hook(fake_gitlab, ws):
    gl = fake_gitlab
    gl.add_token(GL_TOKEN, BOT)
    gl.set_access("alice", 30)
    gl.add_mr(5)
    nid = gl.add_note(5, "alice", "/comind help")
    env = {
        "COMIND_WEBHOOK_SECRET": SECRET,
        "COMIND_GITLAB_TOKEN": GL_TOKEN,
        "COMIND_RETRY_BACKOFF": "0",
        "CI_API_V4_URL": f"{gl.base}/api/v4",
    }
    server = serve(ws, env, port=0)
    hook = gl.gitlab_note_hook(5, nid)
    with server:
        assert (
            requests.post(
                server.url, json=hook, timeout=30, headers={"X-Gitlab-Event": "Note Hook", "X-Gitlab-Token": "wrong"}
            ).status_code
            == 401
        )
        assert (
            requests.post(
                server.url, json=hook, timeout=30, headers={"X-Gitlab-Event": "Note Hook", "X-Gitlab-Token": SECRET}
            ).status_code
            == 202
        )
    assert server.handled == 1 and server.failed == 0
    (answer,) = [n for n in gl.all_notes(5) if n["author"]["username"] == BOT]
    assert f"<!-- comind:answer note_{nid} " in answer["body"] and "/comind why ANCHOR" in answer["body"]


def test_an_event_never_chooses_where_the_token_goes(fake_gitlab):
    # whoever holds the webhook secret could name their own host as the project's web_url
    fake_gitlab.add_mr(5)
    hook = fake_gitlab.gitlab_note_hook(5, fake_gitlab.add_note(5, "alice", "/comind help"))
    hook["project"] = {**hook["project"], "web_url": "https://attacker.example/group/app"}
    for env in ({}, {"CI_API_V4_URL": f"{fake_gitlab.base}/api/v4"}):
        out = event_forge_env("gitlab", hook, env)
        assert "attacker.example" not in json.dumps(out) and out.get("CI_API_V4_URL") == env.get("CI_API_V4_URL")


def test_a_forbidden_read_is_an_error_not_a_read_only_token(gh, ws, capsys):
    gh.add_token("ghs_app", None)  # an App installation token: GET /user answers 403
    gh.add_issue_comment(5, "alice", "/comind help")
    forge = GitHubForge(gh.full_name, "ghs_app", api_url=gh.base, throttle=False, retry=RetryPolicy(backoff=0))
    result = run(
        ws,
        forge,
        5,
        report=report(finding("fp-cache", "app/session.py", 3, "Re adds the cache")),
        harvest=False,
        env={},
    )
    assert not result.degraded and result.exit_code == 2
    assert all("COMIND_BOT_LOGIN" in error for error in result.errors) and len(result.errors) == 2
    assert "cannot write" not in capsys.readouterr().err


def test_a_dry_run_prints_what_it_would_post_and_writes_nothing(gh, repo, cli, actions_env, report_file):
    gh.add_issue_comment(5, "alice", '/comind remember intent "Sessions survive" --need "x" --on app/session.py')
    before = len(gh.requests)
    result = cli(repo, "bot", "run", "--forge", "github", "--report", str(report_file), "--dry-run")
    assert result.code == 0, result.err
    assert "--- would post or edit the summary comment on #5" in result.out and REPORT_MARKER in result.out
    assert "--- would comment on app/session.py:3 of #5" in result.out  # the in-diff finding
    assert "Pool too small" in result.out  # the other, in the summary only
    writes = [
        r
        for r in gh.requests[before:]
        if r.method != "GET" and not (r.path == "/graphql" and "mutation" not in json.dumps(r.body))
    ]
    assert writes == [] and summaries(gh) == [] and not gh.review_comments and replies(gh) == []
    assert "dry run: would post 1 new inline" in result.err


# --- issue 24 item 7: replies are inert, edited commands are answered again ----------------------


def test_a_reply_escapes_markdown_images_links_and_controls(gh, forge, ws):
    title = "![x](//evil.example/i.png) [click](http://evil.example) \x1b]8;;http://evil\x07ok\x1b]8;;\x07 @team"
    gh.add_issue_comment(5, "alice", f'/comind remember gotcha "{title}" --symptom s --cause c --on app/db.py')
    assert answer_commands(ws, forge, 5).written == 1
    (answer,) = replies(gh)
    assert "![x](" not in answer and "[click](" not in answer and "](http" not in answer
    assert "\x1b" not in answer and "\x07" not in answer and "@team" not in answer
    assert "evil.example" in answer  # the text is shown, inert


def test_an_edited_command_is_answered_again_and_an_unchanged_one_is_not(gh, forge, ws):
    comment = gh.add_issue_comment(
        5, "alice", '/comind remember gotcha "First wording" --symptom s --cause c --on app/db.py'
    )
    assert answer_commands(ws, forge, 5).notes == 1
    gh.issue_comments[comment]["body"] = '/comind remember gotcha "Second wording" --symptom s --cause c --on app/db.py'
    gh.issue_comments[comment]["updated_at"] = gh.tick()
    again = answer_commands(ws, make(gh), 5)
    assert (again.notes, again.written) == (1, 1)
    assert "Second wording" in replies(gh)[-1] and len(replies(gh)) == 2
    ledger = ws.ledger()
    ledger.sync(warn=False)
    assert {r.title for r in ledger.all()} == {"First wording", "Second wording"}
    second = next(r.id for r in ledger.all() if r.title == "Second wording")
    # a fresh runner's harvester derives the later version's record under the same id
    again_ws = fresh(ws)
    MergeRequestHarvester(again_ws, make(gh)).harvest_merge_request(5)
    assert second in stored(again_ws.harvest_store)
    assert answer_commands(ws, make(gh), 5).notes == 0  # the same text again: answered already
    gh.issue_comments[comment]["updated_at"] = gh.tick()  # edited without a change of text
    assert answer_commands(ws, make(gh), 5).notes == 0 and len(replies(gh)) == 2


def test_a_command_with_a_date_that_is_not_one_is_refused_and_the_next_run_lives(gh, forge, ws):
    # issue 24 item 1, through the bot: `--until 2024-02-30` is answered with the problem, nothing is written
    gh.add_issue_comment(
        5, "alice", '/comind remember gotcha "Dates" --symptom s --cause c --on app/db.py --until 2024-02-30'
    )
    result = answer_commands(ws, forge, 5)
    assert (result.failed, result.written) == (1, 0)
    (answer,) = replies(gh)
    shown = answer.replace("\\", "")  # Markdown escapes, as rendered
    assert "until" in shown and "'2024-02-30' is not a date" in shown
    assert stored(ws.harvest_store) == []
    gh.add_issue_comment(5, "alice", "/comind why app/db.py")
    assert answer_commands(ws, make(gh), 5).notes == 1  # the next run answers, it does not die
