"""The merge-request harvester against the fake GitHub and GitLab over real HTTP."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fakes import forge as fakeforge

from comind.bot.forge import RetryPolicy
from comind.bot.github import GitHubForge
from comind.bot.gitlab import GitLabForge
from comind.bot.run import answer_commands
from comind.harvest.mr import (
    MAX_APPROACH_FILES,
    MAX_FILE_ANCHORS,
    STATE_FILE,
    MergeRequestHarvester,
    approach_of_files,
    fingerprint_of_files,
    harvest,
    patch_lines,
    reverted_number,
)
from comind.mergerequests import MergeRequestFile
from comind.records import Record, harvested_id
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


TOKEN = "ghp_" + "H4rvest" * 5
BOT = "comind-bot"
PATCH = "@@ -1,3 +1,5 @@\n import os\n+import redis\n+CACHE = {}\n \n def main():\n-    pass\n+    return CACHE"
LORE = """Agreed after the call.

Constraint: sessions must be revocable within a minute
Rejected: JWT with short expiry | still leaks roles to the client
Directive: [until:2030-01] do not cache session objects in the app
Not-tested: Redis failover
Tested: unit tests"""


@pytest.fixture
def gh(fake_github: fakeforge.FakeGitHub) -> fakeforge.FakeGitHub:
    fake_github.add_token(TOKEN, BOT)
    fake_github.set_permission("alice", "write")
    fake_github.add_pull(5, title="Sessions in Redis", author="alice")
    fake_github.add_file(5, "app/session.py", patch=PATCH)
    return fake_github


def make(fake: fakeforge.FakeGitHub) -> GitHubForge:
    return GitHubForge(fake.full_name, TOKEN, api_url=fake.base, throttle=False, retry=RetryPolicy(backoff=0))


@pytest.fixture
def ws(repo: Path) -> Workspace:
    return Workspace(repo)


def records(ws: Workspace, store: Any = None) -> dict[str, Record]:
    store = store or ws.harvest_store
    return {r.id: r for r in store.read(warn=False).records.values()}


def texts(fingerprint: dict[str, Any], side: str, n: int = 0) -> list[str]:
    """The texts of one side of the n-th file of a stored approach fingerprint."""
    return [text for _, text, _ in fingerprint["files"][n][side]]


def by_kind(found: dict[str, Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for record in sorted(found.values(), key=lambda r: r.title):
        out.setdefault(record.kind, []).append(record)
    return out


# --- Lore in resolved threads ----------------------------------------------------------------------


def test_lore_keys_in_a_resolved_thread_become_records(gh, ws):
    root = gh.add_review_comment(5, "bob", "Why not JWT?", "app/session.py", 3, resolved=True)
    reply = gh.add_review_comment(5, "alice", LORE, "", 0, in_reply_to=root)
    gh.add_review_comment(5, "carol", "Constraint: open threads do not count", "app/session.py", 2)
    result = harvest(ws, make(gh))
    assert result.merge_requests == 1 and result.written == 5 and not result.skipped
    kinds = by_kind(records(ws))
    assert sorted(kinds) == ["attempt", "constraint", "decision", "gotcha", "question"]
    (constraint,) = kinds["constraint"]
    assert constraint.fields == {"rule": "sessions must be revocable within a minute", "severity": "must"}
    assert constraint.anchors[0]["raw"] == "app/session.py:3"
    assert constraint.evidence[0] == {"type": "url", "ref": f"{gh.base}/{gh.full_name}/pull/5#discussion_r{reply}"}
    provenance = constraint.provenance
    assert provenance["author_kind"] == "harvested" and provenance["source"] == "mr"
    assert provenance["harvester"] == {"name": "mr", "version": "1"}
    assert constraint.id == harvested_id(f"mr:github:{gh.full_name}:5:discussion_r{reply}:lore:0")
    (decision,) = kinds["decision"]
    assert decision.fields["chosen"] == "Sessions in Redis"
    assert decision.fields["alternatives"] == [
        {"option": "JWT with short expiry", "why_not": "still leaks roles to the client"}
    ]
    (attempt,) = kinds["attempt"]
    assert attempt.fields["outcome"] == "abandoned" and attempt.fields["approach"] == "JWT with short expiry"
    (gotcha,) = kinds["gotcha"]
    assert gotcha.fields["symptom"] == "do not cache session objects in the app"
    assert gotcha.data["until"] == "2030-01-31"
    (question,) = kinds["question"]
    assert question.fields["question"] == "Redis failover"


def test_a_reharvest_writes_nothing_new_and_the_watermark_advances(gh, ws):
    root = gh.add_review_comment(5, "bob", "Why not JWT?", "app/session.py", 3, resolved=True)
    gh.add_review_comment(5, "alice", LORE, "", 0, in_reply_to=root)
    first = harvest(ws, make(gh))
    state = json.loads((ws.cache_dir / STATE_FILE).read_text())
    assert state == {f"github:{gh.full_name}": first.watermark.isoformat()}
    assert first.watermark == make(gh).merge_request(5).updated_at
    again = harvest(ws, make(gh))
    assert again.merge_requests == 1  # the boundary merge request, seen again
    assert again.derived == 5 and again.written == 0
    # a fresh runner derives the same records: same ids and hashes
    first_records = records(ws)
    shutil.rmtree(ws.cache_dir)
    fresh = Workspace(ws.root)
    assert harvest(fresh, make(gh)).written == 5
    assert records(fresh) == first_records
    # newer merge requests only, next time
    gh.add_pull(6, title="Later", updated_at=gh.now + timedelta(hours=1))
    later = harvest(fresh, make(gh))
    assert later.merge_requests == 2 and later.watermark == gh.now + timedelta(hours=1)
    assert harvest(fresh, make(gh)).merge_requests == 1


def test_the_description_lore_is_harvested_with_file_anchors(gh, ws):
    gh.add_pull(
        7,
        title="Drop the local cache",
        body="Constraint: one cache, in Redis\nNot-tested: cold start",
        state="closed",
        merged=True,
    )
    gh.add_file(7, "app/cache.py", patch="@@ -1 +1 @@\n-CACHE = {}\n+CACHE = redis")
    gh.add_file(7, "app/other.py", patch="@@ -1 +1 @@\n-a = 1\n+a = 2")
    harvest(ws, make(gh))
    kinds = by_kind(records(ws))
    (constraint,) = kinds["constraint"]
    assert [a["path"] for a in constraint.anchors] == ["app/cache.py", "app/other.py"]
    assert constraint.evidence == [{"type": "mr", "ref": f"{gh.base}/{gh.full_name}/pull/7"}]
    assert constraint.id == harvested_id(f"mr:github:{gh.full_name}:7:description:lore:0")
    assert kinds["question"][0].fields["question"] == "cold start"


# --- commands -----------------------------------------------------------------------------------------


def test_commands_are_rederived_on_a_fresh_runner_and_readers_are_not(gh, ws):
    gh.set_permission("rita", "read")
    gh.add_issue_comment(
        5,
        "alice",
        '/comind remember decision "Sessions in Redis" --chosen redis '
        '--alternative "jwt | leaks roles" --on app/session.py',
    )
    gh.add_issue_comment(5, "rita", '/comind remember question "Q" --question q --on app/session.py')
    answer_commands(ws, make(gh), 5)
    answered = records(ws)
    assert len(answered) == 1
    (rid,) = answered
    gh.add_issue_comment(5, "alice", f"/comind confirm {rid[-8:]} still true")  # not answered yet
    shutil.rmtree(ws.cache_dir)
    fresh = Workspace(ws.root)
    result = MergeRequestHarvester(fresh, make(gh)).harvest_merge_request(5)
    assert result.written == 2 and not result.skipped
    found = records(fresh)
    assert found[rid] == answered[rid]  # byte for byte: the same record
    (confirm,) = [r for r in found.values() if r.kind == "relation"]
    assert confirm.fields["target"] == rid and confirm.fields["relation"] == "confirms"


# --- reverts and dead ends ---------------------------------------------------------------------------


def test_a_merged_revert_pr_becomes_a_reverted_attempt(gh, ws):
    gh.add_pull(3, title="Cache sessions in process", state="closed", merged=True)
    gh.add_file(3, "app/session.py", patch=PATCH)
    gh.add_pull(
        4,
        title='Revert "Cache sessions in process"',
        state="closed",
        merged=True,
        body=f"Reverts {gh.full_name}#3\n\nIt leaked memory under load.",
    )
    gh.add_file(4, "app/session.py", patch="@@ -1,5 +1,3 @@\n import os\n-import redis\n-CACHE = {}\n")
    harvest(ws, make(gh))
    attempts = [r for r in records(ws).values() if r.kind == "attempt"]
    (attempt,) = attempts
    assert attempt.id == harvested_id(f"mr:github:{gh.full_name}:4:revert")
    assert attempt.title == "Reverted: Cache sessions in process"
    assert attempt.fields["outcome"] == "reverted" and attempt.fields["reason"] == "It leaked memory under load."
    fingerprint = attempt.fields["fingerprint"]
    assert (fingerprint["base"], fingerprint["head"]) == ("b" * 40, "c" * 40)  # the reverted change, as merged
    assert fingerprint["files"] == [
        {
            "path": "app/session.py",
            "old_path": None,
            "status": "M",
            "binary": False,
            "skipped": False,
            "added": [[3, "CACHE = {}", False], [6, "return CACHE", False]],
            "removed": [[4, "pass", False]],
        }
    ]
    assert [e["ref"] for e in attempt.evidence] == [
        f"{gh.base}/{gh.full_name}/pull/4",
        f"{gh.base}/{gh.full_name}/pull/3",
        "c" * 40,
    ]
    assert [a["path"] for a in attempt.anchors] == ["app/session.py"]
    assert harvest(ws, make(gh)).written == 0


def test_a_megabyte_description_of_blank_lines_is_read_in_one_pass(gh, ws):
    # anyone may open a merge request: `^\s*Reverts` ran from every line start over all the blank lines
    gh.add_pull(3, title="Cache sessions in process", state="closed", merged=True)
    gh.add_file(3, "app/session.py", patch=PATCH)
    blank = "\n" * 1_000_000
    body = f"{blank}Reverts {gh.full_name}#3\n{blank}This reverts commit abcdef1.{blank}It leaked memory.{blank}"
    gh.add_pull(4, title='Revert "Cache sessions in process"', state="closed", merged=True, body=body)
    gh.add_file(4, "app/session.py", patch="@@ -1,5 +1,3 @@\n import os\n-import redis\n-CACHE = {}\n")
    harvest(ws, make(gh))
    (attempt,) = [r for r in records(ws).values() if r.kind == "attempt"]
    assert attempt.fields["reason"] == "It leaked memory."


def test_a_revert_known_only_by_its_title_reads_its_own_diff_backwards(gh, ws):
    gh.add_pull(4, title='Revert "Cache sessions in process"', state="closed", merged=True)
    gh.add_file(4, "app/session.py", patch="@@ -1,3 +1,3 @@\n import os\n-CACHE = {}\n+CACHE = None")
    gh.add_pull(8, title='Revert "Not merged"', state="closed", merged=False)
    harvest(ws, make(gh))
    (attempt,) = [r for r in records(ws).values() if r.kind == "attempt"]
    fingerprint = attempt.fields["fingerprint"]
    assert texts(fingerprint, "added") == ["CACHE = {}"] and texts(fingerprint, "removed") == ["CACHE = None"]
    assert fingerprint["files"][0]["added"][0][0] == 2  # the line as it was before the revert
    assert attempt.title == "Reverted: Cache sessions in process"


def test_a_closed_dead_end_mr_becomes_an_abandoned_attempt(gh, ws):
    gh.add_pull(
        9,
        title="Shard sessions by user",
        state="closed",
        labels=("Dead-End",),
        body="Too much coordination for too little gain.",
    )
    gh.add_file(9, "app/shard.py", status="added", patch="@@ -0,0 +1,2 @@\n+def shard(user):\n+    return hash(user)")
    gh.add_pull(10, title="Closed, no label", state="closed")
    gh.add_pull(11, title="Open with the label", labels=("dead-end",))
    harvest(ws, make(gh))
    (attempt,) = [r for r in records(ws).values() if r.kind == "attempt"]
    assert attempt.id == harvested_id(f"mr:github:{gh.full_name}:9:dead-end")
    assert attempt.fields["outcome"] == "abandoned" and attempt.title == "Abandoned: Shard sessions by user"
    assert attempt.fields["reason"] == "Too much coordination for too little gain."
    assert texts(attempt.fields["fingerprint"], "added") == ["def shard(user):", "return hash(user)"]
    assert attempt.fields["fingerprint"]["files"][0]["status"] == "A"


def test_the_dead_end_label_is_configurable(gh, repo, monkeypatch):
    monkeypatch.setenv("COMIND_DEAD_END_LABEL", "wontfix")
    gh.add_pull(9, title="Shard sessions", state="closed", labels=("wontfix",))
    gh.add_pull(10, title="Other", state="closed", labels=("dead-end",))
    ws = Workspace(repo)
    harvest(ws, make(gh))
    assert [r.title for r in records(ws).values()] == ["Abandoned: Shard sessions"]


def test_a_dead_end_with_3000_files_stays_bounded(gh, ws):
    gh.add_pull(9, title="Rewrite everything", state="closed", labels=("dead-end",))
    for i in range(3100):
        gh.add_file(9, f"src/m{i}.py", patch=f"@@ -1 +1 @@\n-old_{i} = {i}\n+new_{i} = {'x' * 150}")
    harvest(ws, make(gh))
    (attempt,) = [r for r in records(ws).values() if r.kind == "attempt"]
    assert len(attempt.anchors) == MAX_FILE_ANCHORS
    fingerprint = attempt.fields["fingerprint"]
    assert len(fingerprint["files"]) == MAX_APPROACH_FILES and fingerprint["truncated"] is True
    assert len(attempt.to_json()) < 512 * 1024


def test_pagination_over_merge_requests(gh, ws):
    start = gh.now
    for n in range(20, 150):
        gh.add_pull(
            n,
            title=f"Change {n}",
            updated_at=start + timedelta(minutes=n),
            state="closed",
            labels=("dead-end",) if n % 50 == 0 else (),
        )
    result = harvest(ws, make(gh))
    assert result.merge_requests == 131
    assert gh.count(f"/repos/{gh.full_name}/pulls") == 2
    assert sorted(r.title for r in records(ws).values()) == ["Abandoned: Change 100", "Abandoned: Change 50"]


def test_a_500_while_harvesting_is_retried(gh, ws):
    gh.add_review_comment(5, "bob", "Constraint: keep it small", "app/session.py", 3, resolved=True)
    gh.fail("/graphql", 500, times=2)
    assert harvest(ws, make(gh)).written == 1


# --- GitLab -------------------------------------------------------------------------------------------


def test_gitlab_threads_reverts_and_the_updated_after_watermark(fake_gitlab, ws):
    gl = fake_gitlab
    gl.add_token("glpat-harvest", BOT)
    gl.add_mr(3, title="Cache sessions in process", state="merged")
    gl.add_diff(3, "app/session.py", PATCH)
    gl.add_mr(
        4,
        title='Revert "Cache sessions in process"',
        state="merged",
        description="This reverts merge request !3\n\nLeaked memory.",
        merge_commit_sha="e" * 40,
    )
    did, nid = gl.add_thread(3, "alice", "Constraint: no process-local caches", path="app/session.py", line=3)
    for note in gl.discussion(3, did)["notes"]:
        note["resolved"] = True
    forge = GitLabForge(42, "glpat-harvest", url=gl.base, retry=RetryPolicy(backoff=0))
    result = harvest(ws, forge)
    assert result.written == 2
    kinds = by_kind(records(ws))
    assert kinds["constraint"][0].id == harvested_id(f"mr:gitlab:42:3:note_{nid}:lore:0")
    assert kinds["constraint"][0].anchors[0]["raw"] == "app/session.py:3"
    (attempt,) = kinds["attempt"]
    assert texts(attempt.fields["fingerprint"], "added") == ["CACHE = {}", "return CACHE"]
    assert attempt.data["valid_from"] == "e" * 40
    harvest(ws, forge)
    listings = [r for r in gl.requests if r.path == "/api/v4/projects/42/merge_requests"]
    assert "updated_after" not in listings[0].query
    assert listings[-1].query["updated_after"] == result.watermark.isoformat().replace("+00:00", "Z")


# --- pieces -------------------------------------------------------------------------------------------


def test_forge_patches_become_approaches_like_git_diffs() -> None:
    from comind.harvest.approach import Approach

    patch = "--- a/a.py\n+++ b/a.py\n@@ -3,4 +3,5 @@\n-   x  =  1\n+x = 2\n+}\n+import os\n ctx\n+x = 2\n\\ No newline"
    added, removed = patch_lines(patch, "a.py")
    assert [(ln.lineno, ln.text, ln.trivial) for ln in added] == [
        (3, "x = 2", False),
        (4, "}", True),
        (5, "import os", True),
        (7, "x = 2", False),
    ]
    assert [(ln.lineno, ln.text) for ln in removed] == [(3, "x = 1")]
    files = [
        MergeRequestFile("a.py", "a.py", "modified", patch, 4, 1),
        MergeRequestFile("b.png", "b.png", "added", None, 0, 0),
    ]
    change = approach_of_files(files, base="b" * 40, head="a" * 40)
    assert [f.status for f in change.files] == ["M", "A"] and change.skipped == 1 and change.files[1].skipped
    backwards = approach_of_files(files, base=None, head="a" * 40, invert=True)
    assert [ln.text for ln in backwards.files[0].added] == ["x = 1"] and backwards.files[1].status == "D"
    stored = fingerprint_of_files(files, base="b" * 40, head="a" * 40)
    again = Approach.from_json(stored)  # what the dead-end check reads back
    assert [(ln.lineno, ln.text) for ln in again.files[0].added] == [
        (ln.lineno, ln.text) for ln in change.files[0].added if not ln.trivial
    ]
    assert [ln.text for ln in again.files[0].added] == ["x = 2", "x = 2"]  # trivial lines are not stored


@pytest.mark.parametrize(
    ("title", "description", "expected"),
    [
        ('Revert "Add cache"', "Reverts octo/widgets#12", (True, 12, "Add cache")),
        ("Undo", "Reverts #12\n\nwhy", (True, 12, None)),
        ("Undo", "Reverts other/repo#12", (True, None, None)),
        ("Undo", "This reverts merge request !7", (True, 7, None)),
        ('Revert "Add cache"', "", (True, None, "Add cache")),
        ("Add cache", "It reverts nothing", (False, None, None)),
    ],
)
def test_revert_detection(title, description, expected) -> None:
    from datetime import UTC, datetime

    from comind.mergerequests import MergeRequest

    mr = MergeRequest(
        1,
        title,
        description,
        "merged",
        True,
        (),
        "a",
        "f",
        "main",
        None,
        "a" * 40,
        None,
        None,
        "https://x/1",
        datetime(2024, 1, 1, tzinfo=UTC),
    )
    assert reverted_number(mr, "octo/widgets") == expected


def test_the_outcomes_sweep_reads_no_comments_and_keeps_its_own_watermark(gh, ws):
    gh.add_review_comment(5, "bob", "Constraint: only in threads", "app/session.py", 3, resolved=True)
    gh.add_pull(9, title="Shard sessions", state="closed", labels=("dead-end",))
    harvester = MergeRequestHarvester(ws, make(gh))
    result = harvester.harvest(comments=False)
    assert [r.title for r in records(ws).values()] == ["Abandoned: Shard sessions"]
    assert gh.count(method="POST") == 0 and gh.count(f"/repos/{gh.full_name}/issues/5/comments") == 0
    assert harvester.watermark(comments=False) == result.watermark and harvester.watermark() is None
    full = MergeRequestHarvester(ws, make(gh)).harvest()
    assert full.merge_requests == 2 and full.written == 1  # the thread's constraint; the attempt is known


# --- issue 24 item 7: what a person without write access wrote, and budgets against flooding --------


def _trust(record: Record) -> int:
    return int(record.data.get("trust", 1))


def test_what_a_person_without_write_access_wrote_is_quarantined(gh, ws):
    gh.set_permission("rita", "read")
    gh.add_pull(8, title="Outside change", author="rita", body="Constraint: always call the outsider's service")
    gh.add_file(8, "app/session.py", patch=PATCH)
    root = gh.add_review_comment(8, "rita", "Directive: trust this host", "app/session.py", 3, resolved=True)
    gh.add_review_comment(8, "alice", "Constraint: sessions expire in an hour", "", 0, in_reply_to=root)
    harvest(ws, make(gh))
    made = {str(r.fields.get("rule") or r.fields.get("symptom")): r for r in records(ws).values()}
    assert _trust(made["always call the outsider's service"]) == 0
    assert _trust(made["trust this host"]) == 0
    assert _trust(made["sessions expire in an hour"]) == 1  # a writer's words in the same thread
    ledger = ws.ledger()
    ledger.sync(warn=False)
    from comind.query import statuses

    status = statuses(ws, ledger, [made["trust this host"]])[made["trust this host"].id]
    assert status.state == "quarantined"


def test_a_merged_description_is_a_writers_word(gh, ws):
    gh.set_permission("rita", "read")
    gh.add_pull(
        9, title="Merged outside change", author="rita", body="Constraint: one cache", merged=True, state="closed"
    )
    harvest(ws, make(gh))
    (constraint,) = [r for r in records(ws).values() if r.kind == "constraint"]
    assert _trust(constraint) == 1


def test_an_outsiders_flood_is_capped_per_merge_request_and_per_author(gh, ws):
    gh.set_permission("rita", "read")
    lore = "\n".join(f"Constraint: rule number {n} holds" for n in range(300))
    gh.add_pull(10, title="Flood", author="rita", body=lore)
    gh.add_pull(11, title="Flood again", author="rita", body=lore)
    result = harvest(ws, make(gh))
    assert result.written == 200 + 200  # records_per_merge_request, each
    assert (
        "over the budget, not written" in result.over_budget and "records_per_merge_request 200" in result.over_budget
    )
    assert all(_trust(r) == 0 for r in records(ws).values())


def test_the_budgets_are_settings(gh, repo):
    (repo / ".comind.yml").write_text("records_per_merge_request: 50\nrecords_per_author: 70\n")
    ws = Workspace(repo)
    gh.set_permission("rita", "read")
    lore = "\n".join(f"Constraint: rule number {n} holds" for n in range(100))
    gh.add_pull(10, title="Flood", author="rita", body=lore)
    gh.add_pull(11, title="Flood again", author="rita", body=lore)
    result = harvest(ws, make(gh))
    assert result.written == 70  # 50 of the first, then the author's last 20
    assert "records_per_author 70" in result.over_budget and "records_per_merge_request 50" in result.over_budget


def test_a_cache_an_older_comind_wrote_is_cleaned_by_the_current_rules(gh, ws):
    # an older comind kept `DB_PASSWORD=<value>` in a thread's record: the next harvest (which
    # re-reads no merge request it saw) cleans the cached copy, same id, the old object gone
    from comind.records import canonical, content_hash

    secret = "s3cretvalue42"
    root = gh.add_review_comment(5, "bob", "Which store?", "app/session.py", 3, resolved=True)
    gh.add_review_comment(5, "alice", f"Constraint: never log DB_PASSWORD={secret} in main", "", 0, in_reply_to=root)
    gh.add_pull(8, title="Try a file cache", author="alice", state="closed", labels=("dead-end",))
    gh.add_file(8, "app/cache.py", patch=f"@@ -0,0 +1,2 @@\n+DB_PASSWORD = '{secret}'\n+CACHE = open_cache()")
    harvest(ws, make(gh))
    inbox = ws.harvest_store.local_root / "_ledger" / "inbox"
    before = {r.id: r for r in records(ws).values()}
    for path in list(inbox.iterdir()):
        if "[redacted:password]" not in path.read_text():
            continue
        old = json.loads(path.read_text().replace("[redacted:password]", secret))  # what an older one wrote
        for line in old.get("fields", {}).get("fingerprint", {}).get("files", [{}])[0].get("added", []):
            line[2] = False
        old["hash"] = content_hash(old)
        path.unlink()
        (inbox / f"{old['id']}-{old['hash']}.json").write_bytes(canonical(old))
    (ws.cache_dir / "harvest-cleaned").unlink(missing_ok=True)  # an older one kept no mark
    assert any(secret in p.read_text() for p in inbox.iterdir())

    again = harvest(Workspace(ws.root), make(gh))
    assert again.written == 0 and not again.skipped
    assert not any(secret in p.read_text() for p in inbox.iterdir())
    assert records(ws) == before  # what the current rules derive, fingerprint lines marked trivial
    ledger = Workspace(ws.root).ledger()
    ledger.sync(warn=False)
    assert not ledger.problems() and {r.id for r in ledger.all()} >= set(before)
