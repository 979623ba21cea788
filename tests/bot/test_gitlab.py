"""The GitLab adapter against the fake GitLab over real HTTP (python-gitlab doing the talking)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fakes import forge as fakeforge

from comind.bot import forge_from_env
from comind.bot.forge import ForgeError, RetryPolicy
from comind.bot.gitlab import GitLabForge

fake_gitlab = pytest.fixture(fakeforge.fake_gitlab)

TOKEN = "glpat-" + "S3cr3t" * 4
BOT = "project_42_bot_7f3a"
MARKER = "<!-- comind:report v1 instance=default -->"
PATCH = "@@ -1,3 +1,4 @@\n import os\n+import sys\n \n def main():\n"
MR = "/api/v4/projects/42/merge_requests/1"


@pytest.fixture
def gl(fake_gitlab: fakeforge.FakeGitLab) -> fakeforge.FakeGitLab:
    fake_gitlab.add_token(TOKEN, BOT)
    fake_gitlab.add_mr(1, title="Add sys", labels=("bug",))
    fake_gitlab.add_diff(1, "app.py", PATCH)
    return fake_gitlab


def make(fake: fakeforge.FakeGitLab, token: str = TOKEN, **config: object) -> GitLabForge:
    config.setdefault("retry", RetryPolicy(attempts=3, backoff=0))
    return GitLabForge(fake.project_id, token, url=fake.base, **config)  # type: ignore[arg-type]


@pytest.fixture
def forge(gl: fakeforge.FakeGitLab) -> GitLabForge:
    return make(gl)


def bodies(gl: fakeforge.FakeGitLab, iid: int = 1) -> list[str]:
    return [n["body"] for n in gl.all_notes(iid)]


# --- summary upsert ---------------------------------------------------------------------------------


def test_summary_is_created_once_edited_on_change_and_left_alone_when_unchanged(gl, forge):
    first = forge.upsert_summary(1, MARKER, f"{MARKER}\nno findings")
    assert gl.count(f"{MR}/notes", "POST") == 1
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\nno findings") == first
    assert gl.count(method="PUT") == 0
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\n1 finding") == first
    assert gl.edits == {int(first): 1}
    assert bodies(gl) == [f"{MARKER}\n1 finding"]
    assert gl.all_notes(1)[0]["author"]["username"] == BOT


def test_marker_in_another_users_or_a_system_note_is_ignored(gl, forge):
    theirs = gl.add_note(1, "mallory", f"quoting {MARKER}")
    gl.add_note(1, BOT, f"changed the description {MARKER}", system=True)
    mine = forge.upsert_summary(1, MARKER, f"{MARKER}\nreport")
    assert mine != str(theirs) and not gl.edits
    assert len(bodies(gl)) == 3


def test_duplicated_summaries_are_healed_and_deleted(gl, forge):
    keep = gl.add_note(1, BOT, f"{MARKER}\nold")
    extra = gl.add_note(1, BOT, f"{MARKER}\nold too")
    assert forge.upsert_summary(1, MARKER, f"{MARKER}\nnew") == str(keep)
    assert gl.deleted == [extra]
    forge.delete_summary(1, MARKER)
    assert gl.deleted == [extra, keep] and bodies(gl) == []


# --- inline comments, threads, replies ------------------------------------------------------------------


def test_inline_comment_on_a_diff_line(gl, forge):
    note = forge.post_inline(1, "app.py", 2, "fingerprint:abc", "a" * 40)
    assert note.is_inline and (note.path, note.line, note.author) == ("app.py", 2, BOT)
    assert note.thread_id and note.resolved is False
    assert note.url == f"{gl.web_url}/-/merge_requests/1#note_{note.id}"
    (discussion,) = gl.discussions[1]
    position = discussion["notes"][0]["position"]
    assert (position["base_sha"], position["start_sha"], position["head_sha"]) == ("b" * 40, "d" * 40, "a" * 40)
    (mine,) = forge.bot_inline_notes(1)
    assert mine.id == note.id


def test_inline_comment_on_an_earlier_push_uses_that_versions_shas(gl, forge):
    gl.add_version(1, "e" * 40, "b" * 40, "f" * 40)
    forge.post_inline(1, "app.py", 2, "on the old head", "a" * 40)
    position = gl.discussions[1][0]["notes"][0]["position"]
    assert (position["head_sha"], position["start_sha"]) == ("a" * 40, "d" * 40)
    assert gl.count(f"{MR}/versions") == 1
    with pytest.raises(ForgeError, match="not the head of any diff version"):
        forge.post_inline(1, "app.py", 2, "x", "9" * 40)


def test_inline_comment_off_the_diff_is_a_forge_error(gl, forge):
    with pytest.raises(ForgeError, match="line code") as info:
        forge.post_inline(1, "app.py", 40, "nope", "a" * 40)
    assert info.value.status == 400
    assert gl.count(f"{MR}/discussions", "POST") == 1


def test_notes_carry_discussion_ids_and_skip_system_notes(gl, forge):
    general = gl.add_note(1, "alice", "/comind remember decision use sys")
    gl.add_note(1, "alice", "added 1 commit", system=True)
    did, root = gl.add_thread(1, "bob", "why sys?", path="app.py", line=2)
    reply = gl.add_reply(1, did, "alice", "argv")
    notes = forge.notes(1)
    assert [n.body for n in notes] == ["/comind remember decision use sys", "why sys?", "argv"]
    assert notes[0].id == str(general) and not notes[0].is_inline and notes[0].thread_id
    assert notes[0].resolved is None
    assert [n.thread_id for n in notes[1:]] == [did, did]
    assert notes[2].in_reply_to == str(root) and notes[1].in_reply_to is None
    assert (notes[2].path, notes[2].line, notes[2].is_inline, notes[2].id) == ("app.py", 2, True, str(reply))


def test_threads_and_resolution(gl, forge):
    gl.add_note(1, "alice", "a general comment is not a thread")
    did, _ = gl.add_thread(1, "bob", "why sys?", path="app.py", line=2)
    gl.add_reply(1, did, "alice", "argv")
    (thread,) = forge.threads(1)
    assert (thread.id, thread.resolved, thread.path, thread.line, len(thread.notes)) == (did, False, "app.py", 2, 2)
    forge.resolve_thread(1, did)
    assert all(n["resolved"] for n in gl.discussion(1, did)["notes"])
    assert gl.requests[-1].method == "PUT" and gl.requests[-1].body == {"resolved": True}
    assert forge.threads(1)[0].resolved is True
    assert all(n.resolved for n in forge.notes(1) if n.thread_id == did)


def test_reply_to_an_inline_note_goes_into_its_discussion(gl, forge):
    did, root = gl.add_thread(1, "bob", "why sys?", path="app.py", line=2)
    gl.add_reply(1, did, "alice", "/comind remember decision argv")
    note = forge.notes(1)[-1]
    answer = forge.reply(1, note, "Remembered as d-123")
    assert f"POST {MR}/discussions/{did}/notes" in gl.calls()
    assert answer.thread_id == did and answer.in_reply_to == str(root) and answer.is_inline
    assert [n["body"] for n in gl.discussion(1, did)["notes"]][-1] == "Remembered as d-123"


def test_reply_to_a_general_note_turns_it_into_a_thread(gl, forge):
    gl.add_note(1, "alice", "/comind confirm d-1")
    (note,) = forge.notes(1)
    answer = forge.reply(1, note, "Confirmed")
    assert answer.in_reply_to == note.id and not answer.is_inline
    (discussion,) = gl.discussions[1]
    assert not discussion["individual_note"] and len(discussion["notes"]) == 2


def test_reactions_are_award_emoji(gl, forge):
    gl.add_note(1, "alice", "/comind confirm d-1")
    (note,) = forge.notes(1)
    forge.add_reaction(1, note, "+1")
    assert [(a["name"], a["awardable_id"]) for a in gl.awards] == [("thumbsup", int(note.id))]


# --- permissions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "permission", "writes"),
    [
        (50, "admin", True),
        (40, "maintain", True),
        (30, "write", True),
        (20, "triage", False),
        (15, "read", False),
        (10, "read", False),
        (5, "none", False),
    ],
)
def test_permission_by_access_level(gl, forge, level, permission, writes):
    gl.set_access("carol", level)
    assert forge.permission("carol") == permission
    assert forge.can_write("carol") is writes


def test_non_members_and_unknown_users_have_no_permission(gl, forge):
    gl.user("dave")
    assert forge.permission("dave") == "none"
    assert forge.permission("nobody-here") == "none"
    assert gl.count("/api/v4/users") == 2


# --- merge requests and files ---------------------------------------------------------------------------


def test_merge_request_fields(gl, forge):
    gl.add_mr(2, state="merged", author="bob", description="desc", merge_commit_sha="c" * 40)
    gl.add_mr(3, state="closed")
    gl.add_mr(4, state="locked")
    mr, merged = forge.merge_request(1), forge.merge_request(2)
    assert (mr.state, mr.merged, mr.merge_commit_sha, mr.labels) == ("open", False, None, ("bug",))
    assert (mr.base_sha, mr.start_sha, mr.head_sha) == ("b" * 40, "d" * 40, "a" * 40)
    assert (mr.source_branch, mr.target_branch, mr.author) == ("feature", "main", "alice")
    assert mr.web_url == f"{gl.web_url}/-/merge_requests/1"
    assert (merged.state, merged.merged, merged.merge_commit_sha, merged.description) == (
        "merged",
        True,
        "c" * 40,
        "desc",
    )
    assert forge.merge_request(3).state == "closed" and forge.merge_request(4).state == "open"


def test_merge_requests_updated_after_and_pagination(gl, forge):
    start = gl.now
    for iid in range(2, 252):
        gl.add_mr(iid, updated_at=start + timedelta(minutes=iid), state="merged" if iid % 2 else "opened")
    cutoff = start + timedelta(minutes=100)
    got = list(forge.merge_requests(updated_after=cutoff))
    assert [mr.number for mr in got] == list(range(251, 99, -1))
    assert got[0].base_sha is None and got[0].head_sha == "a" * 40  # listings carry no diff_refs
    assert gl.count("/api/v4/projects/42/merge_requests") == 2
    sent = gl.requests[0].query
    assert (sent["updated_after"], sent["order_by"], sent["sort"]) == (
        cutoff.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "updated_at",
        "desc",
    )
    merged = list(forge.merge_requests(state="merged"))
    assert len(merged) == 125 and all(mr.merged for mr in merged)
    assert gl.requests[-1].query["state"] == "merged"
    assert len(list(forge.merge_requests(state="open"))) == 126


def test_changed_files_statuses(gl, forge):
    gl.add_diff(1, "new.py", "@@ -0,0 +1,2 @@\n+a\n+b\n", new_file=True)
    gl.add_diff(1, "gone.py", "@@ -1 +0,0 @@\n-a\n", deleted_file=True)
    gl.add_diff(1, "b.py", "", old_path="a.py")
    files = {f.path: f for f in forge.changed_files(1)}
    assert (files["app.py"].status, files["app.py"].additions, files["app.py"].deletions) == ("modified", 1, 0)
    assert files["app.py"].diff_lines() == {1, 2, 3, 4}
    assert (files["new.py"].status, files["new.py"].additions) == ("added", 2)
    assert (files["gone.py"].status, files["gone.py"].deletions) == ("removed", 1)
    assert (files["b.py"].status, files["b.py"].old_path, files["b.py"].patch) == ("renamed", "a.py", None)


def test_notes_and_files_paginate(gl, forge):
    for i in range(250):
        gl.add_note(1, "alice", f"comment {i}")
    assert len(forge.notes(1)) == 250
    assert gl.count(f"{MR}/discussions") == 3
    for i in range(3000):
        gl.add_diff(1, f"src/m{i}.py", "@@ -1 +1 @@\n-a\n+b\n")
    assert len(list(forge.changed_files(1))) == 3001
    assert gl.count(f"{MR}/diffs") == 31


# --- failures -------------------------------------------------------------------------------------------


def test_a_500_is_retried_a_bounded_number_of_times_then_named(gl, forge):
    gl.fail(MR, 500, times=10)
    with pytest.raises(ForgeError) as info:
        forge.merge_request(1)
    assert gl.count(MR) == 3
    assert f"GET {MR}" in str(info.value) and "HTTP 500" in str(info.value)
    assert info.value.status == 500


def test_a_500_then_success_succeeds(gl, forge):
    gl.fail(MR, 503, times=2)
    assert forge.merge_request(1).number == 1
    assert gl.count(MR) == 3


def test_429_with_retry_after_zero_is_retried_and_a_long_one_fails_at_once(gl, forge):
    gl.fail(f"{MR}/notes", 429, times=2, headers={"Retry-After": "0"}, method="POST")
    forge.upsert_summary(1, MARKER, "v1")
    assert gl.count(f"{MR}/notes", "POST") == 3 and len(bodies(gl)) == 1
    gl.fail(MR, 429, times=5, headers={"Retry-After": "900"})
    with pytest.raises(ForgeError, match="900 s"):
        forge.merge_request(1)
    assert gl.count(MR) == 1


def test_not_found_is_not_retried(gl, forge):
    with pytest.raises(ForgeError, match="HTTP 404"):
        forge.merge_request(99)
    assert gl.count("/api/v4/projects/42/merge_requests/99") == 1


def test_tokens_never_appear_in_errors_or_reprs(gl):
    bad = make(gl, token="glpat-wrongwrongwrongwrong")
    with pytest.raises(ForgeError) as info:
        bad.merge_request(1)
    assert "401" in str(info.value) and "glpat-wrong" not in str(info.value)
    assert "glpat-wrong" not in repr(bad)
    good = make(gl)
    gl.fail(MR, 500, times=3, body={"message": f"echo {TOKEN}"})
    with pytest.raises(ForgeError) as info:
        good.merge_request(1)
    assert TOKEN not in str(info.value) and "***" in str(info.value)


# --- construction ---------------------------------------------------------------------------------------


def test_from_env_explains_that_the_job_token_cannot_post(gl):
    with pytest.raises(ForgeError, match=r"CI_JOB_TOKEN.*cannot post"):
        GitLabForge.from_env({"CI_JOB_TOKEN": "x", "CI_PROJECT_ID": "42"})
    env = {
        "GITLAB_CI": "true",
        "COMIND_GITLAB_TOKEN": TOKEN,
        "CI_PROJECT_ID": "42",
        "CI_API_V4_URL": f"{gl.base}/api/v4",
    }
    forge = forge_from_env(env)
    assert forge.name == "gitlab" and forge.bot_login() == BOT
    assert forge.merge_request(1).title == "Add sys"
