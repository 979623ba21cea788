"""The GitHub adapter against the fake GitHub over real HTTP (PyGithub doing the talking)."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from fakes import forge as fakeforge

from comind.bot import FORGES, forge_from_env, get_forge, merge_request_number_from_env
from comind.bot.forge import ForgeError, RetryPolicy
from comind.bot.github import GitHubForge

fake_github = pytest.fixture(fakeforge.fake_github)

TOKEN = "ghp_" + "S3cr3t" * 6
BOT = "comind-bot"
MARKER = "<!-- comind:report v1 instance=default -->"
PATCH = "@@ -1,3 +1,4 @@\n import os\n+import sys\n \n def main():"


@pytest.fixture
def gh(fake_github: fakeforge.FakeGitHub) -> fakeforge.FakeGitHub:
    fake_github.add_token(TOKEN, BOT)
    fake_github.add_pull(1, title="Add sys", labels=("bug",))
    fake_github.add_file(1, "app.py", patch=PATCH)
    return fake_github


def make(fake: fakeforge.FakeGitHub, token: str = TOKEN, **config: object) -> GitHubForge:
    config.setdefault("retry", RetryPolicy(attempts=3, backoff=0))
    return GitHubForge(fake.full_name, token, api_url=fake.base, throttle=False, **config)  # type: ignore[arg-type]


@pytest.fixture
def forge(gh: fakeforge.FakeGitHub) -> GitHubForge:
    return make(gh)


# --- summary upsert ---------------------------------------------------------------------------------


def test_summary_is_created_once_edited_on_change_and_left_alone_when_unchanged(gh, forge):
    first = forge.upsert_summary(1, MARKER, f"{MARKER}\nno findings")
    assert gh.count(f"/repos/{gh.full_name}/issues/1/comments", "POST") == 1
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\nno findings") == first
    assert gh.count(method="PATCH") == 0
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\n1 finding") == first
    assert gh.count(method="PATCH") == 1
    assert gh.count(method="POST") == 1
    (comment,) = gh.issue_comments.values()
    assert comment["body"] == f"{MARKER}\n1 finding" and comment["user"] == BOT


def test_marker_in_another_users_comment_is_ignored(gh, forge):
    theirs = gh.add_issue_comment(1, "mallory", f"quoting {MARKER} to hijack the summary")
    mine = forge.upsert_summary(1, MARKER, f"{MARKER}\nreport")
    assert mine != str(theirs)
    assert gh.issue_comments[theirs]["edits"] == 0
    assert gh.issue_comments[theirs]["body"].startswith("quoting")


def test_duplicated_summaries_are_healed_and_deleted(gh, forge):
    keep = gh.add_issue_comment(1, BOT, f"{MARKER}\nold")
    extra = gh.add_issue_comment(1, BOT, f"{MARKER}\nold too")
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\nnew") == str(keep)
    assert gh.deleted == [extra]
    forge.delete_summary(1, MARKER)
    assert gh.deleted == [extra, keep]
    assert not gh.issue_comments


def test_summary_without_marker_gets_one_and_long_bodies_are_cut(gh, forge):
    forge.upsert_summary(1, MARKER, "x" * 70_000)
    (comment,) = gh.issue_comments.values()
    assert comment["body"].startswith(MARKER)
    assert len(comment["body"]) == forge.max_body
    assert comment["body"].endswith("artifact)")


def test_actions_token_cannot_read_user_and_falls_back_to_the_actions_login(gh):
    gh.add_token("ghs_installation", None)
    env = {
        "GITHUB_TOKEN": "ghs_installation",
        "GITHUB_REPOSITORY": gh.full_name,
        "GITHUB_API_URL": gh.base,
        "GITHUB_ACTIONS": "true",
    }
    forge = GitHubForge.from_env(env, retry=RetryPolicy(backoff=0), throttle=False)
    assert forge.bot_login() == "github-actions[bot]"
    first = forge.upsert_summary(1, MARKER, "v1")
    assert forge.upsert_summary(1, MARKER, "v2") == first
    assert len(gh.issue_comments) == 1


def test_unknown_bot_login_is_a_clear_error_not_a_duplicate(gh):
    gh.add_token("ghs_installation", None)
    forge = make(gh, token="ghs_installation")
    with pytest.raises(ForgeError, match="COMIND_BOT_LOGIN") as info:
        forge.upsert_summary(1, MARKER, "v1")
    assert "GET /user" in str(info.value) and "403" in str(info.value)
    assert not gh.issue_comments
    assert make(gh, token="ghs_installation", bot_login="my-app[bot]").bot_login() == "my-app[bot]"


# --- inline comments, threads, replies ------------------------------------------------------------------


def test_inline_comment_on_a_diff_line(gh, forge):
    note = forge.post_inline(1, "app.py", 2, "fingerprint:abc", "a" * 40)
    assert note.is_inline and note.path == "app.py" and note.line == 2 and note.author == BOT
    assert note.url.endswith(f"#discussion_r{note.id}")
    (mine,) = forge.bot_inline_notes(1)
    assert mine.id == note.id and mine.thread_id is not None and mine.resolved is False


def test_inline_comment_off_the_diff_is_a_forge_error(gh, forge):
    with pytest.raises(ForgeError, match="must be part of the diff") as info:
        forge.post_inline(1, "app.py", 40, "nope", "a" * 40)
    assert info.value.status == 422
    assert gh.count(f"/repos/{gh.full_name}/pulls/1/comments", "POST") == 1  # 4xx: not retried


def test_notes_gather_comments_reviews_and_inline_threads(gh, forge):
    general = gh.add_issue_comment(1, "alice", "/comind remember decision use sys")
    gh.add_review(1, "bob", "Looks fine overall", state="APPROVED")
    gh.add_review(1, "bob", "", state="APPROVED")  # no text: not a note
    root = gh.add_review_comment(1, "bob", "why sys?", "app.py", 2)
    reply = gh.add_review_comment(1, "alice", "argv", "", 0, in_reply_to=root)
    notes = forge.notes(1)
    assert [n.body for n in notes] == ["/comind remember decision use sys", "Looks fine overall", "why sys?", "argv"]
    by_id = {n.id: n for n in notes if n.is_inline}
    assert notes[0].id == str(general) and not notes[0].is_inline and notes[0].thread_id is None
    assert notes[1].url.endswith("#pullrequestreview-" + notes[1].id)
    tid = gh.thread_of(root)
    assert by_id[str(root)].thread_id == tid == by_id[str(reply)].thread_id
    assert by_id[str(reply)].in_reply_to == str(root) and by_id[str(root)].in_reply_to is None
    assert by_id[str(reply)].path == "app.py" and by_id[str(reply)].line == 2


def test_threads_and_resolution_through_graphql(gh, forge):
    root = gh.add_review_comment(1, "bob", "why sys?", "app.py", 2)
    gh.add_review_comment(1, "alice", "argv", "", 0, in_reply_to=root)
    (thread,) = forge.threads(1)
    assert thread.id == gh.thread_of(root) and not thread.resolved
    assert (thread.path, thread.line, len(thread.notes)) == ("app.py", 2, 2)
    forge.resolve_thread(1, thread.id)
    assert gh.threads[thread.id]["resolved"] is True
    assert "resolveReviewThread" in gh.graphql[-1]["query"]
    assert gh.graphql[-1]["variables"] == {"input": {"threadId": thread.id}}
    assert forge.threads(1)[0].resolved is True
    with pytest.raises(ForgeError, match="Could not resolve"):
        forge.resolve_thread(1, "PRRT_missing")


def test_review_threads_paginate_over_graphql_cursors(gh, forge):
    for i in range(130):
        gh.add_review_comment(1, "bob", f"c{i}", "app.py", 2)
    assert len(forge.threads(1)) == 130
    pages = [q for q in gh.graphql if "reviewThreads" in q["query"]]
    assert [q["variables"]["after"] for q in pages[-2:]] == [None, "100"]


def test_replies_to_inline_notes_go_to_the_thread_root(gh, forge):
    root = gh.add_review_comment(1, "bob", "why sys?", "app.py", 2)
    reply = gh.add_review_comment(1, "alice", "/comind remember decision argv", "", 0, in_reply_to=root)
    note = next(n for n in forge.notes(1) if n.id == str(reply))
    answer = forge.reply(1, note, "Remembered as d-123")
    assert f"POST /repos/{gh.full_name}/pulls/1/comments/{root}/replies" in gh.calls()
    assert answer.is_inline and answer.in_reply_to == str(root) and answer.thread_id == note.thread_id
    assert gh.review_comments[int(answer.id)]["in_reply_to"] == root


def test_reply_to_a_general_note_is_an_issue_comment(gh, forge):
    gh.add_issue_comment(1, "alice", "/comind confirm d-1")
    (note,) = forge.notes(1)
    answer = forge.reply(1, note, "Confirmed")
    assert not answer.is_inline and gh.issue_comments[int(answer.id)]["body"] == "Confirmed"


def test_reactions(gh, forge):
    gh.add_issue_comment(1, "alice", "/comind confirm d-1")
    gh.add_review_comment(1, "bob", "/comind retract d-2", "app.py", 2)
    for note in forge.notes(1):
        forge.add_reaction(1, note, "+1")
    assert [(r["kind"], r["content"]) for r in gh.reactions] == [("issue", "+1"), ("review", "+1")]
    with pytest.raises(ForgeError, match="unknown reaction"):
        forge.add_reaction(1, forge.notes(1)[0], "thumbsup")


# --- permissions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "writes"),
    [("admin", True), ("maintain", True), ("write", True), ("triage", False), ("read", False), ("none", False)],
)
def test_permission(gh, forge, role, writes):
    gh.set_permission("carol", role)
    assert forge.permission("carol") == role
    assert forge.can_write("carol") is writes


def test_unknown_user_has_no_permission(gh, forge):
    assert forge.permission("nobody-here") == "none"
    assert not forge.can_write("nobody-here")


# --- merge requests and files ---------------------------------------------------------------------------


def test_merge_request_fields(gh, forge):
    gh.add_pull(2, state="closed", merged=True, author="bob", body="desc")
    gh.add_pull(3, state="closed")
    open_mr, merged, closed = forge.merge_request(1), forge.merge_request(2), forge.merge_request(3)
    assert (open_mr.state, open_mr.merged, open_mr.merge_commit_sha) == ("open", False, None)
    assert open_mr.labels == ("bug",) and open_mr.title == "Add sys" and open_mr.author == "alice"
    assert (open_mr.source_branch, open_mr.target_branch) == ("feature", "main")
    assert (open_mr.head_sha, open_mr.base_sha, open_mr.start_sha) == ("a" * 40, "b" * 40, "b" * 40)
    assert open_mr.web_url == f"{gh.base}/{gh.full_name}/pull/1"
    assert (merged.state, merged.merged, merged.merge_commit_sha) == ("merged", True, "c" * 40)
    assert merged.description == "desc" and merged.author == "bob"
    assert (closed.state, closed.merged) == ("closed", False)
    assert open_mr.updated_at.tzinfo is not None


def test_merge_requests_updated_after_newest_first_and_stops_early(gh, forge):
    start = gh.now
    for n in range(2, 252):
        gh.add_pull(n, updated_at=start + timedelta(minutes=n), state="closed", merged=n % 2 == 0)
    cutoff = start + timedelta(minutes=200)
    got = list(forge.merge_requests(updated_after=cutoff))
    assert [mr.number for mr in got] == list(range(251, 199, -1))
    assert gh.count(f"/repos/{gh.full_name}/pulls") == 1  # the first page of 100 reached the cutoff
    merged = list(forge.merge_requests(updated_after=cutoff, state="merged"))
    assert all(mr.merged for mr in merged) and len(merged) == 26
    assert len(list(forge.merge_requests())) == 251
    assert gh.count(f"/repos/{gh.full_name}/pulls") == 2 + 3


def test_changed_files_statuses_and_diff_lines(gh, forge):
    gh.add_file(1, "new.py", status="added", patch="@@ -0,0 +1,2 @@\n+a\n+b")
    gh.add_file(1, "gone.py", status="removed", patch="@@ -1 +0,0 @@\n-a")
    gh.add_file(1, "b.py", status="renamed", previous_filename="a.py")
    gh.add_file(1, "logo.png", status="modified")
    files = {f.path: f for f in forge.changed_files(1)}
    assert files["app.py"].status == "modified" and files["app.py"].additions == 1
    assert files["app.py"].diff_lines() == {1, 2, 3, 4} and files["app.py"].added_lines() == {2}
    assert (files["new.py"].status, files["gone.py"].status) == ("added", "removed")
    assert (files["b.py"].status, files["b.py"].old_path) == ("renamed", "a.py")
    assert files["logo.png"].patch is None


def test_notes_and_files_paginate(gh, forge):
    for i in range(250):
        gh.add_issue_comment(1, "alice", f"comment {i}")
    for i in range(230):
        gh.add_file(1, f"f{i}.py", patch="@@ -1 +1 @@\n-a\n+b")
    assert len(forge.notes(1)) == 250
    assert gh.count(f"/repos/{gh.full_name}/issues/1/comments") == 3
    assert len(list(forge.changed_files(1))) == 231
    assert gh.count(f"/repos/{gh.full_name}/pulls/1/files") == 3


def test_three_thousand_files(gh, forge, caplog):
    for i in range(3100):
        gh.add_file(1, f"src/m{i}.py", patch="@@ -1 +1 @@\n-a\n+b")
    with caplog.at_level(logging.WARNING, logger="comind.bot.github"):
        files = list(forge.changed_files(1))
    assert len(files) == 3000 and len({f.path for f in files}) == 3000
    assert gh.count(f"/repos/{gh.full_name}/pulls/1/files") == 30
    assert "3000 files" in caplog.text


# --- failures -------------------------------------------------------------------------------------------


def test_a_500_is_retried_a_bounded_number_of_times_then_named(gh, forge):
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(path, 500, times=10)
    with pytest.raises(ForgeError) as info:
        forge.merge_request(1)
    assert gh.count(path) == 3
    message = str(info.value)
    assert f"GET {path}" in message and "HTTP 500" in message and "3 attempts" in message
    assert info.value.status == 500 and info.value.request == f"GET {path}"


def test_a_500_then_success_succeeds(gh, forge):
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(path, 502, times=2)
    assert forge.merge_request(1).number == 1
    assert gh.count(path) == 3


def test_a_failure_in_the_middle_of_pagination_retries_that_page_only(gh, forge):
    for i in range(150):
        gh.add_issue_comment(1, "alice", f"c{i}")
    path = f"/repos/{gh.full_name}/issues/1/comments"
    gh.fail(path, 503, times=1, query={"page": "2"})
    assert len(forge.notes(1)) == 150
    assert [r.query.get("page") for r in gh.requests if r.path == path] == [None, "2", "2"]


def test_writes_are_retried_too(gh, forge):
    gh.fail(f"/repos/{gh.full_name}/issues/1/comments", 500, times=1, method="POST")
    forge.upsert_summary(1, MARKER, "v1")
    assert len(gh.issue_comments) == 1


def test_429_with_retry_after_zero_is_retried(gh, forge):
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(path, 429, times=2, headers={"Retry-After": "0"})
    assert forge.merge_request(1).number == 1
    assert gh.count(path) == 3


def test_403_rate_limit_is_retried_but_a_plain_403_is_not(gh, forge):
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(
        path,
        403,
        times=1,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0"},
        body={"message": "API rate limit exceeded for installation ID 1."},
    )
    assert forge.merge_request(1).number == 1
    gh.fail(path, 403, times=1, body={"message": "Resource not accessible by integration"})
    with pytest.raises(ForgeError, match="Resource not accessible"):
        forge.merge_request(1)
    assert gh.count(path) == 3


def test_a_long_rate_limit_wait_fails_at_once(gh, forge):
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(path, 429, times=5, headers={"Retry-After": "3600"})
    with pytest.raises(ForgeError, match=r"rate limited.*3600 s"):
        forge.merge_request(1)
    assert gh.count(path) == 1


def test_secondary_rate_limit_without_headers_asks_for_a_minute(gh):
    forge = make(gh, retry=RetryPolicy(attempts=3, backoff=0, max_wait=10))
    path = f"/repos/{gh.full_name}/pulls/1"
    gh.fail(path, 403, body={"message": "You have exceeded a secondary rate limit. Please wait."})
    with pytest.raises(ForgeError, match="wait 60 s"):
        forge.merge_request(1)
    assert gh.count(path) == 1


def test_graphql_5xx_is_retried(gh, forge):
    root = gh.add_review_comment(1, "bob", "why?", "app.py", 2)
    gh.fail("/graphql", 500, times=1)
    forge.resolve_thread(1, gh.thread_of(root))
    assert gh.threads[gh.thread_of(root)]["resolved"] is True
    assert gh.count("/graphql") == 2


def test_not_found_is_not_retried(gh, forge):
    with pytest.raises(ForgeError, match="HTTP 404") as info:
        forge.merge_request(99)
    assert info.value.status == 404
    assert gh.count(f"/repos/{gh.full_name}/pulls/99") == 1


def test_tokens_never_appear_in_errors_or_reprs(gh):
    bad = make(gh, token="ghp_wrongwrongwrongwrongwrongwrongwrong12")
    with pytest.raises(ForgeError) as info:
        bad.merge_request(1)
    assert "401" in str(info.value) and "Bad credentials" in str(info.value)
    assert "ghp_wrong" not in str(info.value) and "ghp_wrong" not in repr(bad)
    good = make(gh)
    gh.fail(f"/repos/{gh.full_name}/pulls/1", 500, times=3, body={"message": f"echo {TOKEN}"})
    with pytest.raises(ForgeError) as info:
        good.merge_request(1)
    assert TOKEN not in str(info.value) and "***" in str(info.value)
    assert TOKEN not in repr(good)


def test_connection_refused_is_a_forge_error(gh):
    forge = GitHubForge(
        gh.full_name,
        TOKEN,
        api_url="http://127.0.0.1:9",
        throttle=False,
        retry=RetryPolicy(attempts=2, backoff=0),
        timeout=2,
    )
    with pytest.raises(ForgeError, match="no response"):
        forge.merge_request(1)


# --- construction ---------------------------------------------------------------------------------------


def test_from_env_requires_a_token_and_a_repository():
    with pytest.raises(ForgeError, match="GITHUB_TOKEN"):
        GitHubForge.from_env({"GITHUB_REPOSITORY": "o/r"})
    with pytest.raises(ForgeError, match="GITHUB_REPOSITORY"):
        GitHubForge.from_env({"GITHUB_TOKEN": "t"})
    with pytest.raises(ForgeError, match="OWNER/NAME"):
        GitHubForge("just-a-name", "t")


def test_registry(gh):
    assert set(FORGES) == {"github", "gitlab"}
    forge = get_forge("github", repository=gh.full_name, token=TOKEN, api_url=gh.base, throttle=False)
    assert forge.merge_request(1).number == 1
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": gh.full_name,
        "GITHUB_API_URL": gh.base,
    }
    assert forge_from_env(env).name == "github"
    with pytest.raises(ForgeError, match="unknown forge"):
        get_forge("gitea")
    with pytest.raises(ForgeError, match="cannot tell the forge"):
        forge_from_env({})


def test_merge_request_number_from_env(gh, tmp_path):
    event = tmp_path / "event.json"
    comment = gh.add_issue_comment(1, "alice", "/comind confirm d-1")
    event.write_text(json.dumps(gh.github_issue_comment_event(comment)))
    assert merge_request_number_from_env({"GITHUB_EVENT_PATH": str(event)}) == 1
    event.write_text(json.dumps(gh.github_pull_request_event(1)))
    assert merge_request_number_from_env({"GITHUB_EVENT_PATH": str(event)}) == 1
    assert merge_request_number_from_env({"GITHUB_REF": "refs/pull/12/merge"}) == 12
    assert merge_request_number_from_env({"GITHUB_REF": "refs/heads/main"}) is None
    assert merge_request_number_from_env({"CI_MERGE_REQUEST_IID": "7"}) == 7
    # Actions always writes the event: one that cannot be read fails the job rather than skip the check
    event.write_text("{not json")
    with pytest.raises(ForgeError, match=r"^GITHUB_EVENT_PATH .*event.json: not a JSON event \(Expecting"):
        merge_request_number_from_env({"GITHUB_EVENT_PATH": str(event)})
    with pytest.raises(ForgeError, match=r"^GITHUB_EVENT_PATH .*gone.json: cannot read it: No such file"):
        merge_request_number_from_env({"GITHUB_EVENT_PATH": str(tmp_path / "gone.json")})
