"""`comind check` end to end on real temporary repositories: dead ends, each constraint type,
stale records, formats, exit codes, bad input, and the GitHub Action's shell steps."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from gitrepo import GitRepo, cargo_lock, reverted_clap_bump

ROOT = Path(__file__).resolve().parents[2]
PERM = (
    "class Checker:\n    def check(self, user, perm):\n        if user.is_admin:\n            return True\n"
    "        grants = load_grants(user.id)\n        return perm in grants\n"
)
CACHED = (
    "import redis\n\n_cache = redis.Redis(host='localhost', port=6379)\n\n\nclass Checker:\n"
    "    def check(self, user, perm):\n        if user.is_admin:\n            return True\n"
    "        cached = _cache.get(f'grants:{user.id}')\n        if cached is None:\n"
    "            cached = load_grants(user.id)\n            _cache.set(f'grants:{user.id}', cached, ex=300)\n"
    "        return perm in cached\n"
)


@pytest.fixture
def reverted(tmp_path: Path) -> GitRepo:
    return _reverted(tmp_path)


def _reverted(tmp_path: Path) -> GitRepo:
    """main: a permission check, a Redis cache for it, and the revert of that cache with its reason."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache permission checks in Redis")
    repo.revert_head("Stale grants after role change: nothing invalidated the cache.")
    return repo


def check(cli, repo: GitRepo, *args: str) -> tuple[int, dict[str, Any], str]:  # type: ignore[no-untyped-def]
    result = cli(repo.path, "check", "--format", "json", *args)
    report = json.loads(result.out) if result.out.strip() else {}
    return result.code, report, result.err


def test_reproposed_dead_end_is_an_error_quoting_the_reason(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))
    reverted.commit("Speed up permission checks")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 1
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert dead["level"] == "error" and dead["path"] == "app/perm.py"
    assert "lines of" in dead["message"] and "“Cache permission checks in Redis”, reverted in" in dead["message"]
    reason, evidence = dead["message"].rsplit("\n", 1)
    assert reason.endswith("Stale grants after role change: nothing invalidated the cache.")
    assert evidence.startswith("Strongest evidence: the ")  # its heaviest line or introduced identifier
    assert any(e.get("role") == "revert" for e in dead["evidence"])
    text = cli(reverted.path, "check", "--base", "main")
    assert text.code == 1 and "Re-proposes a dead end" in text.out
    assert cli(reverted.path, "check", "--base", "main", "--fail-level", "none").code == 0


def test_a_reason_of_several_paragraphs_is_one_line_of_the_message(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache permission checks in Redis")
    repo.revert_head("* Stale grants after a role change\n\nWe will bring it back with versioned grants.")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("app/perm.py", CACHED)
    repo.commit("Speed up permission checks")
    [dead] = [f for f in check(cli, repo, "--base", "main")[1]["findings"] if f["type"] == "dead_end"]
    reason, _evidence = dead["message"].split("\n")
    assert reason.endswith(": * Stale grants after a role change We will bring it back with versioned grants.")


def test_uncommitted_work_is_named_as_unchecked(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`check` reads commits: a re-proposal left in the work tree finds nothing there, and says where to look."""
    reverted.write("app/perm.py", CACHED)
    unchecked = cli(reverted.path, "check")
    assert unchecked.code == 0 and "`comind preflight --diff` reads them" in unchecked.err
    reverted.commit("Speed up permission checks")
    assert "preflight" not in cli(reverted.path, "check").err


def test_a_base_holding_the_head_says_nothing_was_checked(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`--base` and `--head` swapped (or a branch already merged) checked an empty range and said only
    "no findings", as if the re-proposal were clean."""
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Speed up permission checks")
    swapped = cli(reverted.path, "check", "--base", "feature", "--head", "main")
    assert swapped.code == 0 and "main has no commit that feature lacks: nothing was checked" in swapped.err
    checked = cli(reverted.path, "check", "--base", "main")
    assert checked.code == 1 and "nothing was checked" not in checked.err


def test_a_revert_naming_nothing_and_giving_no_reason_is_said_to_be_the_revert(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", CACHED)
    repo.commit("initial")
    repo.write("app/perm.py", PERM)
    repo.commit("revert the permission cache")
    assert cli(repo.path, "harvest").code == 0
    [attempt] = [json.loads(x) for x in cli(repo.path, "log", "--json", "--history").out.splitlines()]
    assert attempt["title"] == "What “revert the permission cache” took out"  # not the revert's subject: no attempt
    assert attempt["body"] == "The revert “revert the permission cache” gave no reason."


def test_a_revert_subject_is_quoted_as_text_not_as_a_repr(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A subject with an apostrophe or a backslash came out as Python's repr: `What "don't …" took
    out`, `'bump deps'`, doubled backslashes; it reads as written, inside “”, as findings quote it."""
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", CACHED)
    repo.commit("initial")
    repo.write("app/perm.py", PERM)
    repo.commit("revert the grants cache, don't keep C:\\grants")
    repo.write("app/other.py", "def other():\n    return 1\n")
    repo.commit("Cache grants in Redis")
    repo.git("revert", "--no-edit", "HEAD")
    assert cli(repo.path, "harvest").code == 0
    records = map(json.loads, cli(repo.path, "log", "--json", "--history").out.splitlines())
    said = {a["title"]: a["body"] for a in records}
    subject = "“revert the grants cache, don't keep C:\\grants”"
    assert said == {
        f"What {subject} took out": f"The revert {subject} gave no reason.",
        "Cache grants in Redis": "The revert gave no reason for taking out “Cache grants in Redis”.",
    }


def test_all_with_a_base_is_refused_not_a_dead_end_dropped(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`--all` checks head alone: with `--base` it ignored the base, matched no dead end and passed
    (exit 0) a change that `--base` alone fails."""
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))
    reverted.commit("Speed up permission checks")
    assert check(cli, reverted, "--base", "main")[0] == 1
    code, report, err = check(cli, reverted, "--base", "main", "--all")
    assert (code, report) == (2, {}) and err == (
        "comind: --all checks everything at head, not a change: --base main does not apply\n"
    )
    # --all alone on the branch reports head's code; it says the branch's change is not matched
    code, _, err = check(cli, reverted, "--all")
    assert code == 0 and "not this branch's change: `comind check` matches it against dead ends" in err, err
    reverted.checkout("main")
    assert "this branch's change" not in check(cli, reverted, "--all")[2]
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)  # staged, as the pre-commit hook checks it
    reverted.git("add", "app/perm.py")
    code, report, err = check(cli, reverted, "--staged", "--all")
    assert (code, report) == (2, {}) and err.endswith("not a change: --staged does not apply\n"), err


def test_a_dead_end_whose_revert_names_no_commit_is_told_by_the_revert(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """flask's `revert run debug docs` names nothing to find the reverted change by: the attempt is
    what its subject took out, and the message says so rather than "“revert run debug docs”, reverted in"."""
    repo = _named_no_commit(tmp_path)
    revert = repo.head()
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("app/perm.py", CACHED)
    repo.commit("Speed up permission checks")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    title = "What “revert the permission cache” took out"
    assert code == 1 and dead["title"] == f"Re-proposes a dead end (rule D1 share): {title}"
    assert f"lines of what {revert[:7]} “revert the permission cache” took out: Stale grants" in dead["message"]


def test_a_one_line_ci_change_made_again_alone_is_a_dead_end(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pnpm's `ci: test on Node.js 17`: a matrix entry too short to count as a line of an approach,
    reverted for a reason; a branch that makes that edit again, and nothing else, re-proposes it."""
    ci = "jobs:\n  test:\n    strategy:\n      matrix:\n        node:\n          - '16'\n"
    repo = GitRepo(tmp_path)
    repo.write(".github/workflows/ci.yml", ci)
    repo.commit("initial")
    repo.write(".github/workflows/ci.yml", ci + "          - '17'\n")
    tried = repo.commit("ci: test on Node.js 17")
    repo.revert_head("node-gyp fails to build on 17.")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write(".github/workflows/ci.yml", ci + "          - '17'\n")
    repo.commit("Test on Node 17")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1 and (dead["path"], dead["line"]) == (".github/workflows/ci.yml", 7)
    assert dead["message"].startswith(f"This makes again, alone, the 1-line edit of {tried[:7]} “ci: test on Node.js")
    assert dead["message"].endswith(
        "node-gyp fails to build on 17.\nStrongest evidence: it makes again, alone, the attempt's whole 1-line edit."
    )
    repo.write("README.md", "Node 17 is tested.\n")
    repo.commit("Say so")
    code, report, _ = check(cli, repo, "--base", "main")  # with more in the change, one line says too little
    assert code == 0 and not [f for f in report["findings"] if f["type"] == "dead_end"]


def test_a_dead_end_message_counts_lines_removed_again_apart_from_lines_re_added(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A one-line edit is a line added and a line removed: making it again re-adds one line and
    removes one again, not "re-adds 2 of 2 lines"."""
    repo = GitRepo(tmp_path)
    repo.write("app.py", "def lookup(key):\n    return load_from_disk(key)\n")
    repo.commit("initial")
    repo.write("app.py", "def lookup(key):\n    return load_from_cache(key)\n")
    tried = repo.commit("Read lookups from the cache")
    repo.revert_head("The cache served stale values.")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("app.py", "def lookup(key):\n    return load_from_cache(key)\n")
    repo.commit("Faster lookups")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1 and dead["message"].startswith(f"This re-adds 1 and re-removes 1 of 2 lines of {tried[:7]} ")


def _named_no_commit(tmp_path: Path) -> GitRepo:
    """main: the cache, then a revert of it that names no commit (read backwards from its own diff)."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", CACHED)
    repo.commit("initial")
    repo.write("app/perm.py", PERM)
    repo.commit("revert the permission cache\n\nStale grants after role change.")
    return repo


def _copied(cli, repo: GitRepo, name: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """The dead ends `check` finds on branch `name`, made from main by copying the cache into app/admin.py."""
    repo.git("checkout", "-q", "-b", name, "main")
    repo.write(
        "app/admin.py",
        CACHED.replace("import redis\n\n", "import redis  # shared\n\n").replace("class Checker", "class Admin"),
    )
    repo.commit("Admin permissions")
    repo.checkout("main")
    _, report, _ = check(cli, repo, "--base", "main", "--head", name)
    return [f for f in report["findings"] if f["type"] == "dead_end"]


@pytest.mark.parametrize("made", ["reverted", "named_no_commit"])
def test_copying_a_dead_end_the_base_holds_again_is_no_reproposal(cli, tmp_path: Path, made: str) -> None:  # type: ignore[no-untyped-def]
    """Rule D15: once the cache is back in app/perm.py under a title of its own, a change copying
    most of it elsewhere copies what the code has; before that, the same copy is a re-proposal.
    The same for a revert that names nothing: what its files held without the attempt is the revert."""
    reverted = _named_no_commit(tmp_path) if made == "named_no_commit" else _reverted(tmp_path)
    copied = partial(_copied, cli, reverted)

    assert copied("before")  # the dead end is still one
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Rework the permission checker")  # back, without saying so
    assert copied("after") == []


def test_copying_a_dead_end_a_landing_brought_back_is_no_reproposal(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Rule D17: once a landing brought the cache back under a title of its own, a copy of it is no
    retry, even after the code moved on and its files no longer hold it (D15 silent); before that
    landing the same copy is a re-proposal, and a landing that brought back little retires nothing."""
    copied = partial(_copied, cli, reverted)

    assert copied("before")
    reverted.write("app/perm.py", PERM + "\n\ndef cached(user):\n    return _cache.get(f'grants:{user.id}')\n")
    reverted.commit("Read cached grants")  # one line of it: not back
    assert copied("little")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Rework the permission checker")  # back, without saying so
    moved_on = CACHED.replace("host='localhost', port=6379", "host='cache', port=6380").replace("ex=300", "ex=60")
    reverted.write("app/perm.py", moved_on.replace("return perm in cached", "return perm in set(cached)"))
    reverted.commit("Cache settings from the environment")
    assert copied("after") == []


def test_a_landing_whose_message_names_an_unknown_encoding_is_read_all_the_same(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Rule D17 quotes the landing's subject: a commit whose `encoding` header Python does not know
    (git writes whatever `i18n.commitEncoding` says) is read as UTF-8, not an internal error (exit 2)."""
    reverted.write("app/perm.py", CACHED)
    reverted.git("add", "-A")
    reverted.git("-c", "i18n.commitEncoding=no-such-encoding", "commit", "-q", "-m", "Rework the permission checker")
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=60").replace("port=6379", "port=6380"))
    reverted.commit("Cache settings from the environment")
    reverted.git("checkout", "-q", "-b", "copy")
    reverted.write("app/admin.py", CACHED.replace("class Checker", "class Admin"))
    reverted.commit("Admin permissions")
    code, report, err = check(cli, reverted, "--base", "main")
    assert "internal error" not in err
    assert code == 0 and [f for f in report["findings"] if f["type"] == "dead_end"] == []  # (back since)


def test_a_landing_before_a_branch_s_revert_landed_brings_nothing_back(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Rule D17 reads the landings since the revert landed: a maintenance branch's cache merged into
    main, then reverted there and merged again, was never back; the first merge only brought it."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.branch("maint")
    repo.checkout("maint")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache permission checks in Redis")
    repo.checkout("main")
    repo.merge("maint", "Merge branch 'maint'")
    repo.checkout("maint")
    repo.revert_head("Stale grants after role change: nothing invalidated the cache.")
    repo.checkout("main")
    repo.merge("maint", "Merge branch 'maint' again")
    repo.git("checkout", "-q", "-b", "copy")
    repo.write("app/admin.py", CACHED.replace("class Checker", "class Admin"))
    repo.commit("Admin permissions")
    _, report, _ = check(cli, repo, "--base", "main")
    assert [f["title"] for f in report["findings"] if f["type"] == "dead_end"]


def test_a_dead_end_repeating_its_files_own_lines_is_not_back(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Rule D15 counts what the files hold beyond what they held without the attempt: a test written
    like the one beside it is not back because its neighbour's lines are there."""
    body = "".join(f'    assert payload["field_{i}"] == expected_value_{i}\n' for i in range(20))
    one = "def test_one(client):\n    payload = client.get_user_payload(42)\n" + body
    two = "def test_two(client):\n    payload = client.get_user_payload(42)\n" + body
    repo = GitRepo(tmp_path)
    repo.write("tests/test_users.py", one)
    repo.commit("initial")
    repo.write("tests/test_users.py", one + "\n\n" + two + '    assert payload["cache"] == "warm"\n')
    repo.commit("Test the warm user cache")
    repo.revert_head("Flaky.")
    repo.branch("again")
    repo.checkout("again")
    repo.write("tests/test_users.py", one + "\n\n" + two)  # all of it but its one new line
    repo.commit("Test the user cache")
    _, report, _ = check(cli, repo, "--base", "main")
    assert [f["title"] for f in report["findings"] if f["type"] == "dead_end"]


def test_a_reland_of_a_revert_that_gave_no_reason_names_no_failure(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A revert without a reason states no way it failed: the reland's note says to read the revert
    instead of asking to check that "it no longer fails that way"."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    tried = repo.commit("Cache permission checks in Redis")
    repo.git("revert", "--no-edit", tried)  # git's own message: no reason given
    repo.branch("reland")
    repo.checkout("reland")
    repo.git("revert", "--no-edit", "HEAD")
    reland = repo.head()
    code, report, _ = check(cli, repo, "--base", "main")
    [note] = [f for f in report["findings"] if f["type"] == "reland"]
    assert code == 0 and note["message"].startswith(f"{reland[:7]} relands ")
    assert "fails that way" not in note["message"]
    assert note["message"].endswith("Read the revert to learn why it was taken out.")


def test_a_branch_that_reverted_its_own_change_is_checked_against_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The check harvests the change's own commits first: a change the branch itself tried and
    reverted, with a reason, is a dead end to what the branch proposes at its head."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("app/perm.py", CACHED)
    cached = repo.commit("Cache permission checks in Redis")
    repo.git("revert", "--no-edit", "HEAD")
    repo.git("commit", "--amend", "-q", "-m", f"Revert cache\n\nThis reverts commit {cached}.\n\nStale grants.\n")
    code, report, _ = check(cli, repo, "--base", "main")
    assert code == 0 and report["findings"] == []  # a change and its revert propose nothing
    repo.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))
    repo.commit("Speed up permission checks")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 0 and dead["level"] == "warning"  # shown to the reviewer; the author knows
    first_line = dead["message"].split("\n")[0]
    assert first_line.endswith(": Stale grants. It was tried and reverted in this change's own commits.")


def test_a_branch_reverting_what_its_base_has_proposes_none_of_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A branch of reverts (a feature taken out before a release): one revert brings back the crate a
    later commit dropped, the other reverts the commit that added it, and the crate stays. The branch
    undoes that commit; it does not re-propose it."""
    toml = '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\ntime = "0.1"\n'
    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", toml)
    repo.write("Cargo.lock", cargo_lock(time="0.1.0"))
    repo.commit("initial")
    repo.write("Cargo.toml", toml + 'chrono = "0.2"\n')
    repo.write("Cargo.lock", cargo_lock(time="0.1.0", chrono="0.2.25"))
    repo.write("src/year.rs", "pub fn year() -> i32 { chrono::Local::now().year() }\n")
    added = repo.commit("Add year to the template variables")
    repo.write("Cargo.toml", toml)
    repo.write("Cargo.lock", cargo_lock(time="0.1.0"))
    dropped = repo.commit("Use time directly for the year")
    repo.branch("revert-template")
    repo.checkout("revert-template")
    repo.git("revert", "--no-edit", dropped)
    repo.git("revert", "--no-edit", added)
    repo.write("Cargo.toml", toml + 'chrono = "0.2"\n')
    repo.write("Cargo.lock", cargo_lock(time="0.1.0", chrono="0.2.25"))
    repo.commit("Clean up after the reverts")  # the crate stays: other code came to use it
    code, report, _ = check(cli, repo, "--base", "main")
    assert code == 0 and not [f for f in report["findings"] if f["type"] == "dead_end"]


def test_a_reland_on_another_branch_does_not_clear_the_dead_end_here(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """One clone (or one CI cache) sees many branches: a reland waiting on one branch retires the
    attempt there, and only there, while it is not merged."""
    reverted.branch("reland")
    reverted.checkout("reland")
    reverted.git("revert", "--no-edit", "HEAD")  # Revert "Revert "Cache permission checks in Redis""
    reland = reverted.head()
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 0 and not [f for f in report["findings"] if f["type"] == "dead_end"]
    [note] = [f for f in report["findings"] if f["type"] == "reland"]  # on purpose, and why it was reverted
    assert note["level"] == "note" and note["path"] == "app/perm.py"
    assert note["message"].startswith(f"{reland[:7]} relands ")
    assert note["message"].endswith("nothing invalidated the cache. Check that it no longer fails that way.")
    reverted.checkout("main")
    reverted.branch("speed-up")
    reverted.checkout("speed-up")
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))
    reverted.commit("Speed up permission checks")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 1 and [f["type"] for f in report["findings"]].count("dead_end") == 1
    assert not [f for f in report["findings"] if f["type"] == "reland"]
    reverted.checkout("reland")  # and back: the reland retires it again
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 0 and [f["type"] for f in report["findings"]].count("reland") == 1
    reverted.checkout("main")  # --head names the branch checked, whatever is checked out
    code, report, _ = check(cli, reverted, "--base", "main", "--head", "speed-up")
    assert code == 1 and [f["type"] for f in report["findings"]].count("dead_end") == 1
    code, report, _ = check(cli, reverted, "--base", "main", "--head", "reland")
    assert code == 0 and [f["type"] for f in report["findings"]].count("reland") == 1


def test_lore_on_the_touched_code_comes_back_as_context(
    cli,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMIND_NOW", "2024-01-02T00:00:00Z")  # a day after the commits: not dormant yet
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", PERM.replace("load_grants(user.id)", "load_grants(user.id, fresh=True)"))
    repo.commit(
        "Always load grants fresh\n\nConstraint: grants are read fresh on every check\n"
        "Rejected: memcached cache | stale grants after a role change\n"
    )
    repo.branch("feature")
    repo.checkout("feature")
    fresh = "load_grants(user.id, fresh=True)"
    repo.write("app/perm.py", PERM.replace("load_grants(user.id)", f"memcached_get(user.id) or {fresh}"))
    repo.commit("Put a memcached cache in front of the grants")
    code, report, _ = check(cli, repo, "--base", "main")
    notes = {f["title"]: f for f in report["findings"]}
    assert code == 0 and {f["level"] for f in report["findings"]} == {"note"}
    mention = notes["Mentions a rejected option: memcached cache"]
    assert mention["message"].endswith(
        "which the decision “Always load grants fresh” rejected: stale grants after a role change."
    )
    constraint = notes["constraint: grants are read fresh on every check"]  # said once, not twice
    assert constraint["message"].startswith(
        "This change touches code that a constraint is about: grants are read fresh on every check ("
    )
    attempt = notes["attempt: Rejected: memcached cache"]["message"]
    assert attempt.startswith("This change touches code that an attempt is about: Rejected: memcached cache (")


def test_a_harvested_attempt_on_the_touched_code_is_named_once(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", PERM.replace("return perm in grants", "return perm in set(grants)"))
    reverted.commit("Compare grants as a set")
    code, report, _ = check(cli, reverted, "--base", "main")
    [note] = [f for f in report["findings"] if f["type"] == "context"]
    assert code == 0 and note["message"].startswith(
        "This change touches code that an attempt is about: Cache permission checks in Redis (history"
    )


def test_a_reverted_lockfile_bump_made_again_is_a_dead_end(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # as in astral-sh/ruff: `Update Rust crate clap to v4.5.35` touched Cargo.lock only, was reverted, and came back
    repo = GitRepo(tmp_path)
    reverted_clap_bump(repo, anyhow=("1.0.1", "1.0.1"))
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.35", anyhow="1.0.2"))
    repo.write("a-web/package.json", '{"name": "web", "dependencies": {"react": "18.2.0"}}\n')
    repo.commit("Update dependencies")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1 and dead["path"] == "Cargo.lock"  # where the change moved it (Cargo.toml declares it)
    assert dead["message"].startswith("This moves clap to 4.5.35, inside =4.5.35, the range of ")
    assert "“Update Rust crate clap to v4.5.35”, reverted in" in dead["message"]


@pytest.mark.parametrize(("bumped", "flagged"), [(1, False), (3, True)])
def test_a_reverted_lockfile_refresh_is_matched_by_its_share_of_moves(
    cli,
    tmp_path: Path,
    bumped: int,  # type: ignore[no-untyped-def]
    flagged: bool,
) -> None:
    # cargo's `Revert Cargo.lock`: a later update that lands one of its crates on the same version is chance
    old = {"atty": "0.2.2", "libc": "0.2.1", "log": "0.4.1", "memchr": "2.0.1"}
    new = {"atty": "0.2.3", "libc": "0.2.2", "log": "0.4.2", "memchr": "2.0.2"}
    repo = GitRepo(tmp_path)
    declared = "".join(f'{name} = "{version[:3]}"\n' for name, version in old.items())
    repo.write("Cargo.toml", f'[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\n{declared}')
    repo.write("Cargo.lock", cargo_lock(**old))
    repo.commit("initial")
    repo.write("Cargo.lock", cargo_lock(**new))
    refresh = repo.commit("cargo update")
    repo.git("revert", "--no-edit", refresh)
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("Cargo.lock", cargo_lock(**{**old, **dict(list(new.items())[:bumped])}))
    repo.commit("Update some crates")
    code, report, _ = check(cli, repo, "--base", "main")
    assert bool([f for f in report["findings"] if f["type"] == "dead_end"]) is flagged and code == int(flagged)


CI = """\
name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 18
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm test
"""
PACKAGE = '{\n  "name": "web",\n  "packageManager": "pnpm@8.6.0",\n  "dependencies": {"lodash": "^4.17.0"}\n}\n'


def reverted_move(repo: GitRepo, files: dict[str, str], subject: str) -> None:
    """main: a web project on Node 18 and pnpm 8, then a commit writing `files` and its `git revert`."""
    start = {".nvmrc": "18\n", ".github/workflows/ci.yml": CI, "package.json": PACKAGE, "README.md": "# web\n"}
    for path, text in start.items():
        repo.write(path, text)
    repo.commit("initial")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit(subject)
    repo.git("revert", "--no-edit", "HEAD")
    repo.branch("feature")
    repo.checkout("feature")


def dead_ends(cli, repo: GitRepo) -> tuple[int, list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    code, report, _ = check(cli, repo, "--base", "main")
    return code, [f for f in report["findings"] if f["type"] == "dead_end"]


@pytest.mark.parametrize(
    ("attempt", "again", "path", "moves"),
    [
        # .nvmrc reverted from 20; the same move made in the CI workflow
        (
            {".nvmrc": "20\n"},
            {".github/workflows/ci.yml": CI.replace("node-version: 18", "node-version: 20")},
            ".github/workflows/ci.yml",
            "node to 20, inside =20",
        ),
        # written otherwise, alongside other work: `v20.11.1` is one of Node 20's releases
        (
            {".nvmrc": "20\n"},
            {".nvmrc": "v20.11.1\n", "README.md": "# web\n\nNode 20.\n"},
            ".nvmrc",
            "node to 20.11.1, inside =20",
        ),
        # corepack's packageManager: pnpm 8 to 9; again in the workflow's pnpm/action-setup
        (
            {"package.json": PACKAGE.replace("pnpm@8.6.0", "pnpm@9.1.0")},
            {
                ".github/workflows/ci.yml": CI.replace(
                    "pnpm/action-setup@v4\n", "pnpm/action-setup@v4\n        with:\n          version: 9.1.0\n"
                )
            },
            ".github/workflows/ci.yml",
            "pnpm to 9.1.0, inside =9.1.0",
        ),
        # an action's major bump, again in another workflow, pinned by commit with the version
        # Renovate comments after it
        (
            {".github/workflows/ci.yml": CI.replace("actions/checkout@v4", "actions/checkout@v5")},
            {
                ".github/workflows/lint.yml": "jobs:\n  lint:\n    steps:\n      - uses: actions/checkout@"
                "08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0\n      - run: pnpm lint\n"
            },
            ".github/workflows/lint.yml",
            "actions/checkout to 5.0.0, inside =5",
        ),
    ],
)
def test_a_reverted_toolchain_bump_made_again_is_a_dead_end(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, attempt: dict[str, str], again: dict[str, str], path: str, moves: str
) -> None:
    repo = GitRepo(tmp_path)
    reverted_move(repo, attempt, "Move to the next toolchain")
    for file, text in again.items():
        repo.write(file, text)
    repo.commit("Use the next toolchain")
    code, [dead] = dead_ends(cli, repo)
    assert code == 1 and "(rule D11 dependency-move)" in dead["title"] and dead["path"] == path
    assert dead["message"].startswith(f"This moves {moves}, the range of ")


def test_a_later_bump_past_a_reverted_one_is_no_dead_end(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    reverted_move(repo, {".nvmrc": "20\n"}, "Bump Node to 20")
    repo.write(".nvmrc", "22\n")
    repo.write(".github/workflows/ci.yml", CI.replace("node-version: 18", "node-version: 22"))
    repo.commit("Bump Node to 22")
    code, found = dead_ends(cli, repo)
    assert (code, found) == (0, [])
    attempt = json.loads(cli(repo.path, "log", "--kind", "attempt", "--json").out)
    assert [a["raw"] for a in attempt["anchors"] if a["scope"] == "dependency"] == ["dep:toolchain/node@=20"]
    notes = json.loads(cli(repo.path, "show", attempt["id"], "--json").out)["notes"]
    assert "retry condition met: node is now 22, outside =20" in notes


def test_unrelated_change_has_no_finding(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("docs/guide.md", "# Guide\n")
    reverted.write("app/util.py", "def slugify(text):\n    return '-'.join(text.lower().split())\n")
    reverted.commit("Add a slug helper")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert (code, report["findings"]) == (0, [])
    assert report["stats"]["files_changed"] == 2


def test_reland_after_retract_is_a_note_free_pass(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    cli(reverted.path, "harvest")
    attempt = json.loads(cli(reverted.path, "log", "--kind", "attempt", "--json").out)
    assert cli(reverted.path, "review", "retract", attempt["id"], "--reason", "invalidation added").code == 0
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Cache again, now with invalidation")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 0 and not [f for f in report["findings"] if f["type"] == "dead_end"]


def _constraint(cli, repo: GitRepo, anchor: str, spec: dict[str, Any], severity: str = "must") -> str:  # type: ignore[no-untyped-def]
    path = repo.path.parent / f"check-{len(spec)}-{abs(hash(json.dumps(spec, sort_keys=True)))}.yml"
    path.write_text(yaml.safe_dump(spec))
    result = cli(
        repo.path,
        "remember",
        "constraint",
        "--on",
        anchor,
        "--title",
        f"rule on {anchor}",
        "--rule",
        "keep it",
        "--severity",
        severity,
        "--check",
        str(path),
    )
    assert result.code == 0, result.err
    return str(result.out.strip())


@pytest.fixture
def app(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/db.py", "def raw_query(sql):\n    return sql\n")
    repo.write("app/handlers/__init__.py", "")
    repo.write("app/handlers/legacy.py", "from app.db import raw_query\n\n\ndef old():\n    return raw_query('x')\n")
    repo.write("app/calc.py", "def total(items):\n    return sum(items)\n")
    repo.write("tests/test_calc.py", "from app.calc import total\n\n\ndef test_total():\n    assert total([1]) == 1\n")
    repo.write("pyproject.toml", '[project]\nname = "app"\nversion = "1"\ndependencies = ["requests>=2"]\n')
    repo.write("uv.lock", 'version = 1\n\n[[package]]\nname = "requests"\nversion = "2.31.0"\n')
    repo.commit("initial")
    return repo


CHECKS = {
    "graph": (
        "app/db.py::raw_query",
        {"type": "graph", "from": ["app.handlers.*"], "forbid": ["app.db.raw_query"]},
        "app/handlers/items.py",
        "from app.db import raw_query\n\n\ndef get():\n    return raw_query('y')\n",
    ),
    "ast-grep": (
        "app/",
        {
            "type": "ast-grep",
            "language": "python",
            "files": ["app/**/*.py"],
            "rule": {"pattern": "eval($X)"},
            "message": "no eval",
        },
        "app/evil.py",
        "def run(code):\n    return eval(code)\n",
    ),
    "dependency": (
        "dep:pypi/requests",
        {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": ">=3"},
        "uv.lock",
        'version = 1\n\n[[package]]\nname = "requests"\nversion = "3.0.1"\n',
    ),
    "test": (
        "app/calc.py::total",
        {"type": "test", "test": "tests/test_calc.py::test_total"},
        "tests/test_calc.py",
        "from app.calc import total\n\n\ndef test_sum():\n    assert total([1]) == 1\n",
    ),
}


@pytest.mark.parametrize("kind", sorted(CHECKS))
def test_each_constraint_type_is_diff_aware(cli, app: GitRepo, kind: str) -> None:  # type: ignore[no-untyped-def]
    anchor, spec, path, text = CHECKS[kind]
    rid = _constraint(cli, app, anchor, spec)
    app.commit("record the constraint")
    app.branch("feature")
    app.checkout("feature")
    app.write(path, text)
    app.commit(f"violate {kind}")
    code, report, err = check(cli, app, "--base", "main")
    violations = [f for f in report["findings"] if f["type"] == "violation"]
    assert code == 1 and violations, (report, err)
    assert all(v["record_id"] == rid and v["level"] == "error" for v in violations)
    # merged into main, the violation is part of the baseline: a later unrelated change sees none
    app.checkout("main")
    app.merge("feature")
    app.branch("later")
    app.checkout("later")
    app.write("README.md", "more\n")
    app.commit("docs")
    code, report, _ = check(cli, app, "--base", "main")
    assert code == 0 and not [f for f in report["findings"] if f["type"] == "violation"]
    code, report, _ = check(cli, app, "--all")
    assert code == 1 and [f for f in report["findings"] if f["type"] == "violation"]


def test_passing_check_makes_the_constraint_enforced(cli, app: GitRepo) -> None:  # type: ignore[no-untyped-def]
    _constraint(
        cli, app, "app/db.py::raw_query", {"type": "graph", "from": ["app.calc"], "forbid": ["app.db.raw_query"]}
    )
    code, report, _ = check(cli, app, "--all")
    assert code == 0 and report["stats"]["constraints"]["passing"] == 1


def test_semgrep_missing_is_a_warning_not_a_pass(cli, app: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _constraint(
        cli,
        app,
        "app/",
        {
            "type": "semgrep",
            "rule": {
                "id": "no-eval",
                "pattern": "eval(...)",
                "languages": ["python"],
                "message": "no eval",
                "severity": "ERROR",
            },
        },
    )
    monkeypatch.setenv("COMIND_SEMGREP", str(app.path / "no-such-semgrep"))
    code, report, _ = check(cli, app, "--all")
    [not_run] = [f for f in report["findings"] if f["type"] == "not_run"]  # a must: an error, not a pass
    assert code == 1 and not_run["level"] == "error" and "semgrep is not installed" in not_run["message"], report
    sarif = json.loads(cli(app.path, "check", "--all", "--format", "sarif").out)
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    gitlab = json.loads(cli(app.path, "check", "--all", "--format", "gitlab").out)
    assert [i["check_name"] for i in gitlab] == ["comind/check-not-run"]
    headline = cli(app.path, "check", "--all", "--format", "markdown").out
    assert "no constraint broken" not in headline and "constraint not checked" in headline


def test_broken_check_is_exit_2_naming_the_record(cli, app: GitRepo) -> None:  # type: ignore[no-untyped-def]
    from comind.anchors import parse_anchor
    from comind.records import new_record
    from comind.store import Store

    record = new_record(
        "constraint",
        title="broken",
        anchors=[parse_anchor("app/db.py")],
        fields={"rule": "r", "severity": "must", "check": {"type": "graph", "from": 3}},
        provenance={"actor": "p-1", "author_kind": "human", "source": "cli"},
    )
    Store(str(app.path / ".comind" / "ledger")).put(record)
    result = cli(app.path, "check", "--all")
    assert (result.code == 2 and record.id[-8:] in result.err) or record.id in result.err


def _admins_gotcha(cli, repo: GitRepo, *anchors: str) -> str:  # type: ignore[no-untyped-def]
    """A person's gotcha on `anchors`; its id."""
    on = [arg for anchor in anchors for arg in ("--on", anchor)]
    made = cli(repo.path, "remember", "gotcha", *on, "--title", "Admins bypass grants",
               "--symptom", "admins see everything", "--cause", "is_admin short-circuit")  # fmt: skip
    assert made.code == 0, made.err
    return str(made.out.strip())


def test_stale_record_is_reported_with_commands(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = _admins_gotcha(cli, reverted, "app/perm.py::Checker.check")
    reverted.commit("record")
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write(
        "app/perm.py",
        "class Checker:\n    def check(self, user, perm):\n"
        "        return policy_engine.evaluate(user.roles, perm, context=request_context())\n",
    )
    reverted.commit("Delegate to the policy engine")
    code, report, _ = check(cli, reverted, "--base", "main")
    [stale] = [f for f in report["findings"] if f["type"] == "stale"]
    assert stale["record_id"] == rid and stale["level"] == "warning" and code == 0
    assert f"comind review confirm {rid[-8:]}" in stale["commands"]


def test_formats_and_outputs(cli, reverted: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import jsonschema

    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Cache again")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = cli(
        reverted.path,
        "check",
        "--base",
        "main",
        "--format",
        "github",
        "--output",
        f"sarif={tmp_path / 'out.sarif'}",
        "--output",
        f"gitlab={tmp_path / 'gl.json'}",
        "--output",
        f"json={tmp_path / 'r.json'}",
        "--output",
        f"markdown={tmp_path / 'c.md'}",
    )
    assert result.code == 1
    assert result.out.startswith("::error file=app/perm.py,line=")
    assert "dead end re-proposed" in summary.read_text()
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(json.loads((tmp_path / "out.sarif").read_text()), schema)
    issues = json.loads((tmp_path / "gl.json").read_text())
    assert {tuple(sorted(i)) for i in issues} == {("check_name", "description", "fingerprint", "location", "severity")}
    assert json.loads((tmp_path / "r.json").read_text())["findings"][0]["type"] == "dead_end"
    assert (tmp_path / "c.md").read_text().startswith("<!-- comind:report -->")


def test_an_unwritable_step_summary_is_one_warning_and_keeps_the_exit_code(  # type: ignore[no-untyped-def]
    cli, reverted: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unwritable $GITHUB_STEP_SUMMARY ended the check with an internal error (exit 2) instead
    of its findings' exit code: the summary is extra, so a bad path is a warning naming it."""
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Cache again")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (tmp_path / "a-folder").mkdir()
    unwritable = {
        tmp_path / "no" / "such" / "s.md": "No such file or directory",
        tmp_path / "a-folder": "Is a directory",
    }
    for path, why in unwritable.items():
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
        result = cli(reverted.path, "check", "--base", "main", "--format", "github")
        assert result.code == 1 and result.out.startswith("::error file=app/perm.py,line="), result.err
        assert [line for line in result.err.splitlines() if "warning" in line or "error" in line] == [
            f"comind: warning: the job summary was not written: $GITHUB_STEP_SUMMARY {str(path)!r}: {why}"
        ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-rev"], "--base 'no-such-rev': unknown revision"),
        (["--head", "nope"], "--head 'nope': unknown revision"),
        (["--format", "yaml"], "unknown format 'yaml'"),
        (["--output", "sarif"], "expected FORMAT=FILE"),
        (["--output", "json=app"], "app is a folder; name a file in it"),
        (["--fail-level", "fatal"], "--fail-level"),
    ],
)
def test_bad_input_is_exit_2(cli, reverted: GitRepo, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(reverted.path, "check", *args)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1


def test_staged_checks_the_index_without_a_git_identity(cli, reverted: GitRepo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The pre-commit hook's `check --staged` in a container with no user.name: it wrote its commit
    with `git commit-tree`, which asks for an identity, and failed with exit 2."""
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    reverted.git("config", "user.useConfigOnly", "true")  # git guesses no identity from the host name
    assert cli(reverted.path, "harvest").code == 0  # (--staged harvests nothing itself)
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))
    reverted.git("add", "app/perm.py")
    first = cli(reverted.path, "check", "--staged", "--format", "json")
    assert first.code == 1, first.err
    assert [f["type"] for f in json.loads(first.out)["findings"]] == ["dead_end"]
    again = cli(reverted.path, "check", "--staged", "--format", "json")  # the same index, the same commit
    assert json.loads(again.out)["head"] == json.loads(first.out)["head"]
    wrong = cli(reverted.path, "check", "--staged", "--head", "HEAD~1")  # was ignored without a word
    assert wrong.code == 2
    assert wrong.err == "comind: --staged checks the index against HEAD: --head HEAD~1 does not apply\n"


def test_staged_in_a_pre_commit_hook_reads_the_index_git_names(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`git commit -a` (or `git commit PATH`) stages into `index.lock` and names it in GIT_INDEX_FILE
    for its hooks: `check --staged` read `.git/index` instead, and git's write-tree failed on the lock."""
    assert cli(reverted.path, "harvest").code == 0
    comind = Path(sys.executable).parent / "comind"
    hook = reverted.write(".git/hooks/pre-commit", f"#!/bin/sh\nexec '{comind}' check --staged\n")
    hook.chmod(0o755)
    reverted.write("app/perm.py", CACHED.replace("ex=300", "ex=600"))  # not staged: `commit -a` stages it
    commit = ["git", "commit", "-a", "-m", "x"]
    done = subprocess.run(commit, cwd=reverted.path, env=reverted._env(), capture_output=True, text=True)
    assert done.returncode == 1 and "Re-proposes a dead end" in done.stderr, done.stderr  # (a hook prints there)


def test_shallow_clone_asks_for_full_history(cli, reverted: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    for n in range(3):
        reverted.write(f"f{n}.txt", str(n))
        reverted.commit(f"f{n}")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{reverted.path}", str(clone)], check=True
    )
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "feature"], check=True)
    result = cli(clone, "check", "--base", "origin/main")
    assert result.code == 2 and "fetch-depth: 0" in result.err


def test_shallow_clone_on_the_default_branch_warns_that_history_is_missing(
    cli,
    reverted: GitRepo,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{reverted.path}", str(clone)], check=True)
    result = cli(clone, "check", "--format", "json")
    assert result.code == 0 and [w for w in json.loads(result.out)["warnings"] if w.startswith("shallow clone:")]
    assert "fetch-depth: 0" in cli(clone, "check").out
    _, report, _ = check(cli, reverted)
    assert report["warnings"] == []


def test_no_default_branch_found_is_said(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.git("branch", "-m", "main", "develop")  # no origin, no main or master: HEAD stands for it
    _, report, _ = check(cli, reverted)
    assert [w for w in report["warnings"] if w.startswith("no default branch found")]
    _, report, _ = check(cli, reverted, "--default-branch", "develop")
    assert report["warnings"] == []


def test_a_default_branch_chosen_that_names_no_branch_is_an_error(  # type: ignore[no-untyped-def]
    cli, reverted: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo'd default branch made no commit evidence and every branch the default, silently:
    `check` reported everything at HEAD as if on it. Where the name came from is said."""
    assert cli(reverted.path, "harvest").code == 0
    (reverted.path / ".comind.yml").write_text("default_branch: mian\n")
    for command in (["check"], ["harvest"], ["status"]):
        result = cli(reverted.path, *command)
        assert result.code == 2, (command, result.out)
        assert result.err.startswith("comind: .comind.yml: default_branch: no branch 'mian' here"), result.err
    monkeypatch.setenv("COMIND_DEFAULT_BRANCH", "develop")
    assert cli(reverted.path, "check").err.startswith("comind: COMIND_DEFAULT_BRANCH: no branch 'develop' here")
    assert cli(reverted.path, "--default-branch", "main", "check").code == 0


def test_big_change_with_binaries_stays_bounded(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    for n in range(10_000):
        (reverted.path / "data" / f"{n // 1000}").mkdir(parents=True, exist_ok=True)
        (reverted.path / "data" / f"{n // 1000}" / f"{n}.txt").write_text(f"row {n}\n")
    reverted.write("img/logo.png", bytes(range(256)) * 40)
    reverted.commit("Import the data set")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert code == 0 and report["stats"]["files_changed"] == 10_001


def _action_step(name: str) -> str:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    return str(next(s for s in steps if s.get("name") == name)["run"])


def test_action_check_step_against_a_temporary_repository(reverted: GitRepo, tmp_path: Path) -> None:
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Cache again")
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")} | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "acme/app",
        "COMIND_BASE": "main",
        "COMIND_FAIL_LEVEL": "error",
        "COMIND_STORE_INPUT": "",
        "COMIND_SARIF": "comind.sarif",
        "COMIND_REPORT": "comind-report.json",
    }
    done = subprocess.run(
        ["bash", "-e", "-c", _action_step("comind check")], cwd=reverted.path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr  # findings fail a later step, after the bot and the upload
    assert "exit-code=1" in output.read_text()
    assert "::error file=app/perm.py" in done.stdout and "dead end re-proposed" in summary.read_text()
    assert json.loads((reverted.path / "comind-report.json").read_text())["findings"]
    assert (reverted.path / "comind.sarif").is_file()
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{reverted.path}", str(shallow)], check=True)
    done = subprocess.run(
        ["bash", "-e", "-c", _action_step("comind check")], cwd=shallow, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "fetch-depth: 0" in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the action's steps")
def test_action_fail_step_fails_only_on_findings(tmp_path: Path) -> None:
    script = _action_step("Fail on findings")
    assert subprocess.run(["bash", "-e", "-c", script], capture_output=True).returncode == 1


def test_reverted_dependency_bump_proposed_again(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    lock = 'version = 1\n\n[[package]]\nname = "lance"\nversion = "{}"\n'
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "1"\ndependencies = ["lance"]\n')
    repo.write("uv.lock", lock.format("0.7.3"))
    repo.commit("initial")
    repo.write("uv.lock", lock.format("0.8.0"))
    repo.commit("Bump lance to 0.8")
    repo.git("revert", "--no-edit", "HEAD")
    repo.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        'Revert "Bump lance to 0.8"\n\nThis reverts commit '
        + repo.git("rev-parse", "HEAD~1").strip()
        + ".\n\nlance 0.8 deadlocks the writer.\n",
    )
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("uv.lock", lock.format("0.8.0"))
    repo.commit("Upgrade dependencies")
    code, report, _ = check(cli, repo, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1 and "lance" in dead["message"] and "deadlocks the writer" in dead["message"]
    repo.checkout("main")
    repo.branch("later")
    repo.checkout("later")
    repo.write("uv.lock", lock.format("0.8.1"))  # a newer release is not the version that failed
    repo.commit("Upgrade lance to 0.8.1")
    code, report, _ = check(cli, repo, "--base", "main")
    assert not [f for f in report["findings"] if f["type"] == "dead_end" and f["level"] == "error"]


def test_attempt_pattern_recognises_a_new_proposal(cli, app: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pattern = tmp_path / "pattern.yml"
    pattern.write_text(yaml.safe_dump({"language": "python", "rule": {"pattern": "functools.lru_cache($$$)"}}))
    result = cli(
        app.path,
        "remember",
        "attempt",
        "--on",
        "app/calc.py::total",
        "--title",
        "Memoise totals",
        "--approach",
        "lru_cache on total",
        "--outcome",
        "failed",
        "--evidence",
        app.head(),
        "--reason",
        "totals change under the cache",
        "--pattern",
        str(pattern),
    )
    assert result.code == 0, result.err
    app.commit("record")
    app.branch("feature")
    app.checkout("feature")
    app.write(
        "app/calc.py",
        "import functools\n\n\n@functools.lru_cache(maxsize=None)\ndef total(items):\n    return sum(items)\n",
    )
    app.commit("Speed up totals")
    code, report, _ = check(cli, app, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1 and "matches the pattern" in dead["message"] and dead["line"] == 4
    bad = tmp_path / "bad.yml"
    bad.write_text(yaml.safe_dump({"type": "graph", "from": ["a"], "forbid": ["b"]}))
    wrong = cli(
        app.path,
        "remember",
        "attempt",
        "--on",
        "app/calc.py",
        "--title",
        "t",
        "--approach",
        "a",
        "--outcome",
        "failed",
        "--evidence",
        app.head(),
        "--pattern",
        str(bad),
    )
    assert wrong.code == 2 and "ast-grep rule" in wrong.err


def test_passing_check_shows_as_t4_afterwards(cli, app: GitRepo) -> None:  # type: ignore[no-untyped-def]
    rid = _constraint(
        cli, app, "app/db.py::raw_query", {"type": "graph", "from": ["app.calc"], "forbid": ["app.db.raw_query"]}
    )
    app.commit("record")
    before = json.loads(cli(app.path, "show", rid, "--json").out)
    assert before["trust"] == 3
    assert check(cli, app, "--all")[0] == 0
    after = json.loads(cli(app.path, "show", rid, "--json").out)
    assert after["trust"] == 4 and after["status_reason"].startswith("enforced")


def test_the_harvest_line_counts_relations_apart_from_records(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A reland's `retracts` relation is a new record too: the ledger's count says where it went."""
    reverted.git("revert", "--no-edit", "HEAD")  # Revert "Revert "…"": the attempt is retracted
    code, report, err = check(cli, reverted)
    assert code == 0 and (report["stats"]["records"], report["stats"]["relations"]) == (1, 1)
    assert "comind: harvested 4 new commits: 2 new records; 1 record in the ledger and 1 relation between them" in err
    assert "relations" not in check(cli, reverted)[2]  # nothing new harvested: no line at all


def test_a_revert_without_a_reason_says_so_once_naming_the_title_once(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.git("commit", "--amend", "-q", "-m", 'Revert "Cache permission checks in Redis"\n')
    revert = reverted.head()
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Speed up permission checks")
    code, report, _ = check(cli, reverted, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    assert code == 1
    said, evidence = dead["message"].rsplit("\n", 1)
    assert said.endswith(f"“Cache permission checks in Redis”, reverted in {revert[:7]} (no reason given)")
    assert said.count("Cache permission checks in Redis") == 1, said  # (the body's sentence would say it again)
    assert evidence.startswith("Strongest evidence: ")
    lines = dict((s["line"], s["text"]) for s in dead["snippet"])  # the code at head, numbered
    assert dead["line"] in lines and lines[dead["line"]] == CACHED.splitlines()[dead["line"] - 1]
    assert f"> {dead['line']} | " in cli(reverted.path, "check", "--base", "main").out


def test_a_reland_of_a_revert_without_a_reason_says_so_once(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.git("commit", "--amend", "-q", "-m", 'Revert "Cache permission checks in Redis"\n')
    revert = reverted.head()
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.git("revert", "--no-edit", "HEAD")  # Revert "Revert "…"": a reland on purpose
    _, report, _ = check(cli, reverted, "--base", "main")
    [note] = [f for f in report["findings"] if f["type"] == "reland"]
    assert f"“Cache permission checks in Redis”, reverted in {revert[:7]} (no reason given). " in note["message"]
    assert note["message"].count("Cache permission checks in Redis") == 1, note["message"]


def test_filter_modes_on_the_command_line(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Speed up permission checks")
    for mode in ("added", "diff-context", "file", "none"):
        code, report, _ = check(cli, reverted, "--base", "main", "--filter", mode)
        assert code == 1 and [f["type"] for f in report["findings"]].count("dead_end") == 1, mode
    assert cli(reverted.path, "check", "--filter", "nofilter").code == 2


def test_inline_suppressions_need_a_reason_and_work_in_any_comment_syntax(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    from comind.checks.inline import parse

    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.write("app/perm.py", CACHED)
    reverted.commit("Speed up permission checks")
    _, report, _ = check(cli, reverted, "--base", "main")
    [dead] = [f for f in report["findings"] if f["type"] == "dead_end"]
    lines = CACHED.splitlines()
    at = dead["line"] - 1
    silenced = [*lines[:at], f"# comind: ignore[{dead['record_id'][-8:]}] invalidated on role change now", *lines[at:]]
    reverted.write("app/perm.py", "\n".join(silenced) + "\n")
    reverted.commit("say why")
    code, report, _ = check(cli, reverted, "--base", "main")
    assert not [f for f in report["findings"] if f["type"] == "dead_end"], report
    assert report["stats"]["inline_suppressed"][0]["reason"] == "invalidated on role change now"
    bare = [*lines[:at], f"# comind: ignore[{dead['record_id'][-8:]}]", *lines[at:]]
    reverted.write("app/perm.py", "\n".join(bare) + "\n")
    reverted.commit("no reason")
    code, report, _ = check(cli, reverted, "--base", "main")
    types = [f["rule"] for f in report["findings"]]
    assert code == 1 and "comind/dead-end" in types and "comind/suppression-no-reason" in types
    for comment in (
        "// comind: ignore[abcd1234] why",
        "-- comind: ignore[abcd1234] why",
        "/* comind: ignore[abcd1234] why */",
        "<!-- comind: ignore[abcd1234] why -->",
    ):
        [mark] = parse("x", f"code {comment}\n")
        assert mark.names == ("abcd1234",) and mark.reason == "why", comment


def test_a_stale_record_is_shown_where_its_code_is_now(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """Its anchors' spans are where the code was when it was written; the note points at the
    definition as it is at head, on a file that is still there, not at whatever took the old line."""
    reverted.write("app/extra.py", "def helper(x):\n    return x * 2\n")
    reverted.commit("helper")
    rid = _admins_gotcha(cli, reverted, "app/extra.py::helper", "app/perm.py::Checker.check")
    reverted.commit("record")
    reverted.branch("feature")
    reverted.checkout("feature")
    reverted.rm("app/extra.py")
    reverted.write(
        "app/perm.py",
        "import policy_engine\n\n\n# Grants come from the policy engine now.\n\n\nclass Checker:\n"
        "    def check(self, user, perm):\n"
        "        return policy_engine.evaluate(user.roles, perm, context=request_context())\n",
    )
    reverted.commit("Delegate to the policy engine")
    code, report, _ = check(cli, reverted, "--base", "main")
    [stale] = [f for f in report["findings"] if f["record_id"] == rid]
    assert (stale["path"], stale["line"]) == ("app/perm.py", 8), stale
    assert code == 0  # a warning: the check passes


def test_a_stale_record_is_shown_at_the_anchor_its_status_names(cli, reverted: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """With no change to look at, every stale record is listed: each at the anchor that drifted, not
    at its first one (nor at the file holding it)."""
    reverted.write("app/extra.py", "def helper(x):\n    return x * 2\n")
    reverted.commit("helper")
    rid = _admins_gotcha(cli, reverted, "app/extra.py::helper", "app/perm.py", "app/perm.py::Checker.check")
    reverted.commit("record")
    reverted.write(
        "app/perm.py",
        "class Checker:\n    def check(self, user, perm):\n"
        "        return policy_engine.evaluate(user.roles, perm, context=request_context())\n",
    )
    reverted.commit("Delegate to the policy engine")
    _, report, _ = check(cli, reverted)
    [stale] = [f for f in report["findings"] if f["record_id"] == rid]
    assert stale["message"].startswith("Admins bypass grants — app/perm.py::Checker.check:"), stale["message"]
    assert (stale["path"], stale["line"]) == ("app/perm.py", 2), stale


def test_a_file_named_after_dash_c_is_read_from_that_folder(cli, reverted: GitRepo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`-C PATH` runs as if started in PATH, as git does: a relative --output lands there, not in the
    folder comind was started from (which is left as it was)."""
    started = Path.cwd()
    result = cli(reverted.path, "check", "--output", "json=report.json")
    assert result.code == 0, result.err
    assert json.loads((reverted.path / "report.json").read_text())["findings"] is not None
    assert Path.cwd() == started and not (started / "report.json").exists()


def test_a_change_whose_old_blob_the_clone_lacks_is_checked_without_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A damaged clone (a mirror missing one blob) made rename detection fail the whole check with an
    internal error; renames are found by object id then, and the file without its blob is skipped."""
    repo = GitRepo(tmp_path)
    text = "".join(f"line {i} of the settings\n" for i in range(20))
    repo.write("config/settings.txt", text)
    repo.commit("settings")
    lost = repo.git("rev-parse", "HEAD:config/settings.txt").strip()
    repo.rm("config/settings.txt")
    repo.write("config/options.txt", text.replace("line 3 ", "line three "))
    repo.commit("settings become options")
    loose = repo.path / ".git" / "objects" / lost[:2] / lost[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"not a zlib stream")  # unreadable
    result = cli(repo.path, "check", "--base", "HEAD~1")
    assert result.code == 0 and "internal error" not in result.err, result.err
    loose.unlink()  # missing
    result = cli(repo.path, "check", "--base", "HEAD~1")
    assert result.code == 0 and "internal error" not in result.err, result.err


def test_a_glob_naming_nothing_is_a_warning_at_remember_and_check(cli, app: GitRepo) -> None:  # type: ignore[no-untyped-def]
    wrong = app.path.parent / "wrong.yml"
    wrong.write_text(yaml.safe_dump({"type": "graph", "from": ["app.handlers.*"], "forbid": ["app.legacy.*"]}))
    right = app.path.parent / "right.yml"
    right.write_text(yaml.safe_dump({"type": "graph", "from": ["app.handlers.*"], "forbid": ["app.db.*"]}))
    made = {}
    for spec in (wrong, right):
        result = cli(app.path, "remember", "constraint", "--on", "app/db.py", "--title", spec.stem,
                     "--rule", "keep it", "--severity", "must", "--check", str(spec))  # fmt: skip
        assert result.code == 0, result.err
        made[spec.stem] = (result.out.strip()[-8:], result.err)
    rid, err = made["wrong"]
    said = f"constraint {rid} (graph): forbid glob 'app.legacy.*' matches no module, definition or import of this tree"
    assert [x for x in err.splitlines() if "warning" in x] == [
        f"comind: warning: at HEAD, {said}, so the check cannot fail"
    ]
    assert "warning" not in made["right"][1]
    # the right one already fails at HEAD: said, or `check` saying "no findings" would read as a pass
    already = [x for x in made["right"][1].splitlines() if "at HEAD" in x]
    assert len(already) == 1 and already[0].startswith(
        f"comind: note: constraint {made['right'][0]} (graph) finds 1 violation at HEAD already: app/handlers/"
    ), made["right"][1]
    assert "comind check reports only those a change adds (--all lists every one)" in already[0]
    assert not any("at HEAD" in x for x in made["wrong"][1].splitlines() if "note" in x)
    app.commit("record the constraints")
    result = cli(app.path, "check", "--all")
    assert result.code == 1  # the right glob finds app/handlers/legacy.py's import; the wrong one warns
    assert f"warning: {said}, so the check cannot fail" in result.out
    code, report, _ = check(cli, app, "--all")
    assert code == 1 and [w for w in report["warnings"] if "app.legacy" in w] == [f"{said}, so the check cannot fail"]


def test_remember_of_a_semgrep_check_semgrep_cannot_run_says_only_that(  # type: ignore[no-untyped-def]
    cli, app: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without semgrep, remember warned that the check's globs match nothing (so it cannot fail):
    beside the point for a check that cannot run at all, which `comind check` reports as not run."""
    monkeypatch.setenv("COMIND_SEMGREP", str(app.path / "no-such-semgrep"))
    spec = app.path.parent / "semgrep.yml"
    rule = {"id": "no-eval", "pattern": "eval(...)", "languages": ["python"], "message": "no eval"}
    spec.write_text(yaml.safe_dump({"type": "semgrep", "files": ["src/**"], "rule": rule}))
    result = cli(app.path, "remember", "constraint", "--on", "app/", "--title", "No eval",
                 "--rule", "keep it", "--severity", "must", "--check", str(spec))  # fmt: skip
    assert result.code == 0, result.err
    rid = result.out.strip()[-8:]
    assert [x for x in result.err.splitlines() if "warning" in x] == [
        f"comind: warning: constraint {rid} (semgrep) cannot be checked here: semgrep is not installed "
        "(install comind[semgrep], put semgrep on PATH or set COMIND_SEMGREP)"
    ]
