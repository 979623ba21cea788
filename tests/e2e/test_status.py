"""`comind status` and `comind why` keep harvested history alive: it never goes dormant, never asks a
person to confirm it, and `why` shows dormant and stale records, labelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo

PERM = (
    "class Checker:\n    def check(self, user, perm):\n        if user.is_admin:\n            return True\n"
    "        grants = load_grants(user.id)\n        return perm in grants\n"
)
CACHED = PERM.replace(
    "        grants = load_grants(user.id)\n",
    "        grants = _cache.get(user.id)\n        if grants is None:\n            grants = load_grants(user.id)\n"
    "            _cache.set(user.id, grants)\n",
)
REWRITTEN = (
    "class Checker:\n    def check(self, user, perm):\n        allowed = set(fetch_all(user.id, scope='all'))\n"
    "        audit.log(user.id, perm, sorted(allowed))\n        return user.is_admin or perm in allowed\n"
)


@pytest.fixture
def old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A revert made in January 2024, a person's gotcha written then, and a clock two years on."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache permission checks")
    repo.revert_head()
    return repo


def _setup(cli, repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> str:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMIND_NOW", "2024-01-02T00:00:00Z")
    assert cli(repo.path, "harvest").code == 0
    made = cli(
        repo.path,
        "remember",
        "gotcha",
        "--on",
        "app/perm.py::Checker.check",
        "--title",
        "Admins skip the grant lookup",
        "--symptom",
        "admins see everything",
        "--cause",
        "the early return",
    )
    assert made.code == 0, made.err
    monkeypatch.setenv("COMIND_NOW", "2026-01-02T00:00:00Z")
    return made.out.strip().splitlines()[-1]


def test_harvested_history_never_goes_dormant_and_status_asks_nothing_of_it(  # type: ignore[no-untyped-def]
    cli, old: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    gotcha = _setup(cli, old, monkeypatch)
    rows = [json.loads(x) for x in cli(old.path, "log", "--json").out.splitlines()]
    attempt = next(r for r in rows if r["kind"] == "attempt")
    assert attempt["status"] != "dormant" and "not confirmed" not in attempt["status_reason"]
    assert next(r for r in rows if r["id"] == gotcha)["status"] == "dormant"  # a person's record does

    old.write("app/perm.py", REWRITTEN)
    old.commit("grants as a set")  # the code both records are about moves on
    text = cli(old.path, "status").out
    history = [ln for ln in text.splitlines() if ln.startswith("history:")]
    assert history and "(1 attempt)" in history[0] and "nothing to confirm" in history[0], text
    assert "\n  list them: comind log --status" in text, text
    assert attempt["id"][-8:] not in text  # history is counted, not listed as work for a person
    assert f"needs a person (1):\nstale        {gotcha[-8:]}" in text
    head, *listed = (json.loads(x) for x in cli(old.path, "status", "--json").out.splitlines())
    assert head["needs_person"] == 1 and [r["id"] for r in listed] == [gotcha]
    assert sum(head["history"].values()) == 1


def test_status_without_history_needing_a_person_prints_no_request(  # type: ignore[no-untyped-def]
    cli, old: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMIND_NOW", "2026-01-02T00:00:00Z")
    assert cli(old.path, "harvest").code == 0
    old.write("app/perm.py", REWRITTEN)
    old.commit("grants as a set")
    text = cli(old.path, "status").out
    assert "confirm or retract" not in text and "needs a person" not in text and "history: 1" in text


def test_status_says_the_counts_once_when_every_record_is_history(  # type: ignore[no-untyped-def]
    cli, old: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All harvested: the `history:` line has the counts, so no line of counts above it says them again."""
    assert cli(old.path, "harvest").code == 0
    old.write("app/perm.py", REWRITTEN)
    old.commit("grants as a set")
    lines = cli(old.path, "status").out.splitlines()
    assert lines[0].startswith("history: 1 harvested record (1 attempt), 0 active, 1 stale"), lines
    _setup(cli, old, monkeypatch)  # a person's record too: the first line counts them all
    lines = cli(old.path, "status").out.splitlines()
    assert lines[0] == "stale 1  dormant 1" and lines[1].startswith("history: 1 harvested record"), lines


def test_why_shows_the_dormant_and_stale_records_on_the_symbol_labelled(  # type: ignore[no-untyped-def]
    cli, old: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    gotcha = _setup(cli, old, monkeypatch)
    rows = [json.loads(x) for x in cli(old.path, "why", "app/perm.py::Checker.check", "--json").out.splitlines()]
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["gotcha"]["id"] == gotcha and by_kind["gotcha"]["status"] == "dormant"
    assert by_kind["attempt"]["status"] in ("active", "stale", "orphaned")  # the attempt on this very symbol
    text = cli(old.path, "why", "app/perm.py::Checker.check").out
    assert "dormant" in text and "[history]" in text and "Cache permission checks" in text


def test_check_tells_a_stale_lore_record_as_history_not_a_request(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.commit("Check grants on every call\n\nConstraint: grants are loaded on every call, never cached\n")
    repo.branch("feature")
    repo.checkout("feature")
    repo.write("app/perm.py", REWRITTEN)
    repo.commit("Rewrite the check")
    result = cli(repo.path, "check", "--base", "main", "--format", "json")
    stale = [f for f in json.loads(result.out)["findings"] if f["type"] in ("stale", "orphaned")]
    assert stale, result.out
    assert all(f["level"] == "note" and not any("confirm" in c for c in f["commands"]) for f in stale)
    assert all("It is history (harvested)" in f["message"] for f in stale)


def test_a_repository_never_harvested_says_so_where_an_answer_is_empty(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """status, why, log and search read records; before the first harvest there are none, and each
    says what fills them (on stderr: their output stays what it is)."""
    hint = "nothing harvested here yet: `comind harvest`"
    for command in (["status"], ["why", "app/perm.py"], ["log"], ["search", "cache"]):
        result = cli(old.path, *command)
        assert result.code == 0 and hint in result.err and hint not in result.out, command
    assert not (old.path / ".comind").exists()  # reading made no store in the work tree
    assert cli(old.path, "harvest").code == 0
    assert all(hint not in cli(old.path, *c).err for c in (["status"], ["why", "app/perm.py"], ["log"]))


def test_status_of_written_records_only_says_the_history_is_not_read_yet(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A team's own records before the first harvest: status counts them, and still says that the
    history (its reverts, trailers, threads) is not in them yet."""
    made = cli(
        old.path, "remember", "gotcha", "--on", "app/perm.py", "--title", "Grants load slowly",
        "--symptom", "slow admin pages", "--cause", "no index on grants.user_id",
    )  # fmt: skip
    assert made.code == 0, made.err
    result = cli(old.path, "status")
    assert "active 1" in result.out and "nothing harvested here yet" in result.err
    assert cli(old.path, "harvest").code == 0
    assert "nothing harvested here yet" not in cli(old.path, "status").err


def test_why_of_a_name_answers_for_each_of_its_namesakes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two definitions of one name in a file are `render#1` and `render`: a record on the first is an
    answer to `why app/view.py::render`, and `render#1` asks for that one alone."""
    repo = GitRepo(tmp_path)
    first, second = "def render(page):\n    return page.html\n", "def render(page, theme):\n    return theme(page)\n"
    repo.write("app/view.py", f"{first}\n\n{second}")
    repo.commit("views")
    made = cli(
        repo.path, "remember", "gotcha", "--on", "app/view.py::render#1", "--title", "The first render is dead code",
        "--symptom", "edits to it do nothing", "--cause", "redefined below",
    )  # fmt: skip
    assert made.code == 0, made.err
    for anchor in ("app/view.py::render", "app/view.py::render#1"):
        assert "The first render is dead code" in cli(repo.path, "why", anchor).out, anchor


def test_evidence_too_long_for_a_file_name_is_text(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    said = "word " * 60  # 300 characters, no slash: no file system takes it as a name
    made = cli(
        old.path, "remember", "gotcha", "--on", "app/perm.py", "--title", "T", "--symptom", "s", "--cause", "c",
        "--evidence", said, "--json",
    )  # fmt: skip
    assert made.code == 0, made.err
    assert json.loads(made.out)["evidence"] == [{"type": "text", "ref": said.strip()}]


def test_why_says_first_what_concerns_the_code_asked_about(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record on three files: asked about one, `why` leads its reason with that file's part and
    counts the notes on the record's other code instead of listing them."""
    body = "".join(f"    total += item.price_{i} * item.count_{i}\n" for i in range(12))
    repo = GitRepo(tmp_path)
    repo.write("app/gone.py", "def old_path(x):\n    return x + 1\n")
    repo.write("app/moved.py", "def helper(y):\n    return y * 2\n")
    repo.write("app/cart.py", "def total(item):\n    total = 0\n" + body + "    return total\n")
    repo.commit("cart")
    made = cli(
        repo.path, "remember", "gotcha", "--on", "app/gone.py::old_path", "--on", "app/moved.py::helper",
        "--on", "app/cart.py::total", "--title", "Totals round twice", "--symptom", "cents off", "--cause", "float",
    )  # fmt: skip
    assert made.code == 0, made.err
    repo.git("rm", "-q", "app/gone.py")
    repo.git("mv", "app/moved.py", "app/helpers.py")
    repo.write("app/cart.py", "def total(item):\n    return sum(p.amount() for p in item.parts)\n")
    repo.commit("rework the cart")
    out = cli(repo.path, "why", "app/cart.py::total").out
    reason = out.splitlines()[2].strip()
    assert reason.startswith("app/cart.py::total"), out
    assert "note: app/moved.py" not in out and "1 note on its other code" in out, out


def test_why_of_a_folder_answers_for_what_is_in_it(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """`why app/` is asked of everything in app/, as `git log app/` is: a record on a symbol of a file
    in it answers; one on another folder does not."""
    old.write("lib/util.py", "def helper():\n    return 1\n")
    old.commit("lib")
    for anchor, title in (("app/perm.py::Checker.check", "Admins skip grants"), ("lib/util.py", "Util is shared")):
        made = cli(old.path, "remember", "gotcha", "--on", anchor, "--title", title, "--symptom", "s", "--cause", "c")
        assert made.code == 0, made.err
    answer = cli(old.path, "why", "app/").out
    assert "Admins skip grants" in answer and "Util is shared" not in answer, answer


def test_why_of_a_folder_the_tree_lacks_is_an_error_as_a_file_is(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    """A typo'd folder answered "no records", as if none were kept; a file's typo is an error, and so
    is a folder's, in the CLI and in MCP's `why` alike (as of the revision asked)."""
    made = cli(old.path, "remember", "gotcha", "--on", "app/", "--title", "T", "--symptom", "s", "--cause", "c")
    assert made.code == 0, made.err
    typo = cli(old.path, "why", "apps/")
    assert typo.code == 2 and typo.err.endswith("no folder apps/ at " + old.head()[:10] + "\n"), typo.err
    assert "T" in cli(old.path, "why", "app/").out
    first = old.git("rev-list", "--max-parents=0", "HEAD").strip()
    old.write("lib/util.py", "def helper():\n    return 1\n")
    old.commit("lib")
    assert cli(old.path, "why", "lib/").code == 0
    assert cli(old.path, "why", "lib/", "--at", first).code == 2


def test_why_of_a_file_or_folder_finds_the_records_whose_code_moved_in_since(cli, old: GitRepo) -> None:  # type: ignore[no-untyped-def]
    for anchor, title in (("app/perm.py::Checker.check", "Admins skip grants"), ("app/perm.py", "Perm is hot")):
        made = cli(old.path, "remember", "gotcha", "--on", anchor, "--title", title, "--symptom", "s", "--cause", "c")
        assert made.code == 0, made.err
    old.git("add", "-A")
    old.commit("records")
    old.git("mv", "app", "access")
    old.commit("app is access now")
    for asked in ("access/perm.py", "access/"):
        answer = cli(old.path, "why", asked).out
        assert "Admins skip grants" in answer and "Perm is hot" in answer, answer
    old.write("access/perm.py", (old.path / "access/perm.py").read_text().replace("return", "return  ", 1))
    touched = cli(old.path, "preflight", "--diff").out  # a change of the symbol, where it is now
    assert "on access/perm.py::Checker.check, which the change touches" in touched, touched
    assert "on access/perm.py, which the change edits" in touched, touched  # a record on the file, too


def test_a_commit_this_clone_lacks_is_explained_by_what_the_clone_is(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A shallow clone lacks history (fetch it); a full clone lacks a commit written elsewhere."""
    import subprocess

    origin = GitRepo(tmp_path / "origin")
    origin.write("app/perm.py", PERM)
    origin.commit("perm")
    assert cli(origin.path, "init").code == 0
    made = cli(origin.path, "remember", "gotcha", "--on", "app/perm.py::Checker.check", "--title", "Admins skip",
               "--symptom", "s", "--cause", "c")  # fmt: skip
    assert made.code == 0, made.err
    origin.commit("record it")
    origin.write("app/other.py", "X = 1\n")
    origin.commit("later")

    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin.path}", str(shallow)], check=True)
    [row] = [json.loads(x) for x in cli(shallow, "log", "--json").out.splitlines()]
    assert row["status"] == "unverifiable" and "a shallow clone: fetch the full history" in row["status_reason"]

    elsewhere = GitRepo(tmp_path / "elsewhere")
    elsewhere.write("app/perm.py", PERM)
    elsewhere.commit("perm, written again")
    dump = tmp_path / "dump.ndjson"
    assert cli(origin.path, "ledger", "export", "-o", str(dump)).code == 0
    assert cli(elsewhere.path, "ledger", "import", str(dump)).code == 0
    [row] = [json.loads(x) for x in cli(elsewhere.path, "log", "--json").out.splitlines()]
    assert row["status"] == "unverifiable" and "written in another clone" in row["status_reason"], row


def test_status_lists_what_an_agent_wrote_or_reviewed_until_a_person_confirms_it(  # type: ignore[no-untyped-def]
    cli, old: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's record stays T1 and an agent's review of a person's record waits, both until a
    person confirms them: `status` is where a person finds that work ("nothing to confirm" hid it)."""
    gotcha = _setup(cli, old, monkeypatch)
    monkeypatch.setenv("COMIND_NOW", "2024-01-03T00:00:00Z")  # the person's gotcha is fresh, not dormant
    monkeypatch.setenv("COMIND_AUTHOR_KIND", "agent")
    made = cli(
        old.path, "remember", "gotcha", "--on", "app/perm.py", "--title", "Grants load on every call",
        "--symptom", "slow checks", "--cause", "no cache",
    )  # fmt: skip
    assert made.code == 0, made.err
    agents = made.out.strip().splitlines()[-1]
    review = cli(old.path, "review", "retract", gotcha, "--reason", "admins go through grants now")
    assert review.code == 0, review.err
    relation = review.out.strip().splitlines()[-1]
    monkeypatch.delenv("COMIND_AUTHOR_KIND")
    text = cli(old.path, "status").out
    assert "needs a person (2):" in text, text
    assert f"{agents[-8:]}  Grants load on every call\n             written by an agent" in text, text
    waits = f"an agent's review that retracts it (relation {relation[-8:]}) waits for a person"
    assert f"{gotcha[-8:]}  Admins skip the grant lookup\n             {waits}" in text, text
    head, *listed = (json.loads(x) for x in cli(old.path, "status", "--json").out.splitlines())
    assert head["needs_person"] == 2 and {r["id"] for r in listed} == {agents, gotcha}
    for confirmed in (agents, relation):
        assert cli(old.path, "review", "confirm", confirmed).code == 0
    after = cli(old.path, "status").out
    assert "needs a person" not in after, after  # the agent's record confirmed, its review now counts


def test_why_of_a_moved_file_says_the_move_once_and_its_reason_a_part_a_line(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path
) -> None:
    """A record on four symbols of a file moved since: `why` says the move in one note, not one per
    symbol, and each part of a long reason on a line of its own."""
    repo = GitRepo(tmp_path)
    names = ("load", "save", "merge", "prune")
    repo.write(
        "ignore/dir.py",
        "".join(f"def {n}(tree, path, flags):\n    return tree.{n}(path, flags, 1)\n\n\n" for n in names),
    )
    repo.commit("dir walking")
    on = [a for n in names for a in ("--on", f"ignore/dir.py::{n}")]
    made = cli(repo.path, "remember", "gotcha", *on, "--title", "Walks twice", "--symptom", "slow", "--cause", "c")
    assert made.code == 0, made.err
    rid = made.out.strip().splitlines()[-1]
    repo.git("mv", "ignore", "crates")
    text = (repo.path / "crates/dir.py").read_text()
    for n in ("load", "save"):  # rewritten: their bodies drift
        text = text.replace(
            f"    return tree.{n}(path, flags, 1)\n", f"    seen = set()\n    return [x for x in walk_{n}(seen)]\n"
        )
    repo.write("crates/dir.py", text)
    repo.commit("move and rework")
    out = cli(repo.path, "why", "crates/dir.py").out
    assert "note: file renamed: ignore/dir.py → crates/dir.py (4 symbols)\n" in out, out
    assert out.count("file renamed") == 1, out
    reasons = [ln.strip() for ln in out.splitlines() if "body drifted" in ln]
    assert [r.split(":")[2] for r in reasons] == ["load", "save"] and all(r.count("drifted") == 1 for r in reasons), out
    said = json.loads(cli(repo.path, "show", rid, "--json").out)["notes"]
    assert sum("file renamed: now crates/dir.py::" in n for n in said) == 4  # --json keeps each note


def test_preflight_gives_a_record_found_at_its_new_place_the_status_why_gives(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A record whose file moved since is found by preflight at the new place; its status there is
    the one `why` and `log` derive (stale: its other file is gone), not the ledger's alone (active)."""
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", PERM)
    repo.write("app/gone.py", "def old_path(x):\n    return x + 1\n")
    repo.commit("perm")
    made = cli(repo.path, "remember", "gotcha", "--on", "app/perm.py", "--on", "app/gone.py", "--title", "Perm is hot",
               "--symptom", "s", "--cause", "c")  # fmt: skip
    assert made.code == 0, made.err
    repo.git("add", "-A")
    repo.commit("record it")
    repo.git("rm", "-q", "app/gone.py")
    repo.git("mv", "app", "access")
    repo.commit("app is access now")
    [asked] = [json.loads(x) for x in cli(repo.path, "why", "access/perm.py", "--json").out.splitlines()]
    assert asked["status"] == "stale", asked
    repo.write("access/perm.py", PERM.replace("return True", "return  True"))
    [item] = json.loads(cli(repo.path, "preflight", "--diff", "--format", "json").out)["items"]
    assert item["title"] == "Perm is hot" and item["status"] == "stale", item
    assert "stale" in cli(repo.path, "preflight", "--diff").out


def test_a_stale_reason_names_no_commit_of_the_dead_end_itself(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pytest 6c89f9261c deleted a file its revert brought back; the file went for good years later.
    The status said "its file deleted in 6c89f9261c" (the reverted change itself: the search for the
    landing fell between the change and its revert), which tells a reader nothing they did not know."""
    repo = GitRepo(tmp_path)
    repo.write("app/main.py", "def run(path):\n    return check(path)\n")
    repo.write("app/compat.py", "def check(path):\n    return str(path)\n")
    repo.commit("Add the path check")
    repo.write("app/main.py", "def run(path):\n    return path\n")
    repo.rm("app/compat.py")
    reverted = repo.commit("Remove the path check")
    revert = repo.revert_head()
    repo.rm("app/compat.py")
    removed = repo.commit("Drop the compat module")
    assert cli(repo.path, "harvest").code == 0
    [attempt] = [
        json.loads(line)
        for line in cli(repo.path, "log", "--history", "--json").out.splitlines()
        if json.loads(line)["kind"] == "attempt"
    ]
    reason = attempt["status_reason"]
    assert reverted[:10] not in reason and revert[:10] not in reason, reason
    assert f"its file deleted in {removed[:10]} “Drop the compat module”" in reason, reason


def test_a_stale_reason_says_which_commit_of_the_dead_end_it_counts_from(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """composer 6f7389e911, a revert naming nothing it reverts: its attempt is anchored at the revert
    itself, and "body drifted since 6f7389e911" named a commit the reader had no way to place."""
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", CACHED)
    repo.commit("initial")
    repo.write("app/perm.py", PERM)
    revert = repo.commit("Revert the grants cache")
    repo.write("app/perm.py", REWRITTEN)
    repo.commit("Rewrite the checker")
    assert cli(repo.path, "harvest").code == 0
    [attempt] = [
        json.loads(line)
        for line in cli(repo.path, "log", "--history", "--json").out.splitlines()
        if json.loads(line)["kind"] == "attempt"
    ]
    assert f"body drifted since the revert {revert[:10]}: " in attempt["status_reason"], attempt["status_reason"]


def test_history_says_only_of_stale_records_that_the_code_moved_on(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A relanded attempt is retracted, not moved on from, and no longer matched: the history line
    said `1 retracted (the code moved on since; still matched)` and `list them: comind log ` with
    nothing to list."""
    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", "def check(user):\n    return user.admin\n")
    repo.commit("initial")
    repo.write("app/perm.py", "def check(user):\n    return user.admin or user.staff\n")
    repo.commit("Let staff through")
    repo.revert_head("Staff saw the billing pages.")
    repo.git("revert", "--no-edit", "HEAD")  # Revert "Revert …": a reland, which retracts the attempt
    assert cli(repo.path, "harvest").code == 0
    lines = cli(repo.path, "status").out.splitlines()
    assert lines == ["history: 1 harvested record (1 attempt), 0 active, 1 retracted; nothing to confirm"], lines
