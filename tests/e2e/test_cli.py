"""The command line end to end, in real repositories: exit codes, messages, nothing half-written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CliResult, git


def ids_in(store: Path) -> list[str]:
    inbox = store / "_ledger" / "inbox"
    return sorted(p.name for p in inbox.iterdir()) if inbox.is_dir() else []


SUPPRESSION = ["suppression", "--on", "a.py", "--title", "T", "--constraint", "5e0c4f1a", "--reason", "r"]


@pytest.fixture
def initialised(repo: Path, cli) -> Path:  # type: ignore[no-untyped-def]
    assert cli(repo, "init").code == 0
    return repo


def test_init_writes_commented_config_and_store(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(repo, "init")
    assert result.code == 0
    text = (repo / ".comind.yml").read_text()
    assert "store: .comind/ledger" in text and "# env COMIND_STORE, flag --store" in text
    assert (repo / ".comind" / "ledger" / ".gitignore").read_text() == "_ledger/snapshots/\n"
    (repo / ".comind.yml").write_text("store: elsewhere\n")
    again = cli(repo, "init")
    assert again.code == 0 and "kept the existing .comind.yml" in again.out
    assert (repo / ".comind.yml").read_text() == "store: elsewhere\n" and (repo / "elsewhere").is_dir()
    assert cli(repo, "init", "--force").code == 0
    assert "store: .comind/ledger" in (repo / ".comind.yml").read_text()


def test_init_writes_the_store_chosen_for_the_run_when_the_file_may_name_it(  # type: ignore[no-untyped-def]
    repo: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMIND_STORE", "memory://team-ledger")  # the docs' object-store set-up
    assert cli(repo, "init").code == 0
    assert "store: memory://team-ledger" in (repo / ".comind.yml").read_text()
    monkeypatch.delenv("COMIND_STORE")
    outside = cli(repo, "--store", "../elsewhere", "init", "--force")  # a path the file may not name
    assert outside.code == 0 and "keeps the default store: ../elsewhere is outside the repository" in outside.err
    assert "store: .comind/ledger" in (repo / ".comind.yml").read_text()
    assert cli(repo, "status").code == 0  # the file reads back


def test_init_asks_to_commit_only_what_is_not_committed(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    hint = "commit: git add .comind.yml .comind/ && git commit -m 'Set up comind'"
    assert hint in cli(repo, "init").err
    subprocess.run(["git", "add", ".comind.yml", ".comind/"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "Set up comind"], cwd=repo, check=True)
    again = cli(repo, "init")
    assert again.code == 0 and "commit:" not in again.err and "next: comind remember" in again.err
    (repo / ".comind.yml").write_text("store: .comind/ledger\n# changed\n")
    assert hint in cli(repo, "init").err


def test_init_writes_through_no_link_the_clone_holds(repo: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a repository may commit `.comind.yml.tmp` as a link to a file of whoever runs init in it
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    (repo / ".comind.yml.tmp").symlink_to(victim)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "comind.yml.tmp").symlink_to(victim)
    assert cli(repo, "init", "--ci", "github").code == 0
    assert victim.read_text() == "mine\n"
    assert not (repo / ".comind.yml").is_symlink() and "store:" in (repo / ".comind.yml").read_text()
    assert not (repo / ".github" / "workflows" / "comind.yml").is_symlink()


def test_init_with_a_store_outside_the_work_tree_asks_to_commit_only_the_settings(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`--store ../x` (and a store inside .git) is in no commit: init names only .comind.yml, and
    never asks git about a path outside the repository (`fatal: '../' is outside repository`)."""
    for store in ("../elsewhere", ".git/ledger"):
        made = cli(repo, "--store", store, "init", "--force")
        assert made.code == 0, made.err
        assert "commit: git add .comind.yml && git commit -m 'Set up comind'" in made.err, made.err


def test_remember_every_kind_then_log(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    sha = git(repo, "rev-parse", "HEAD").strip()
    commands = [
        ["intent", "--on", "README.md", "--title", "Fast revocation", "--need", "revoke within a minute"],
        [
            "decision",
            "--on",
            "app/auth.py::Session",
            "--title",
            "Server-side sessions",
            "--chosen",
            "Redis sessions",
            "--alternative",
            "JWT with short expiry | still leaks roles",
            "--alternative",
            "encrypted JWT",
        ],
        [
            "attempt",
            "--on",
            "app/perm.py::Checker.check",
            "--title",
            "Cache grants in Redis",
            "--approach",
            "per-request cache",
            "--outcome",
            "reverted",
            "--evidence",
            sha[:7],
            "--evidence",
            "https://example.com/pr/1",
            "--retry-when",
            "invalidation exists",
        ],
        [
            "constraint",
            "--on",
            "app/handlers/",
            "--title",
            "No raw SQL in handlers",
            "--rule",
            "use the repository layer",
            "--severity",
            "must",
            "--exception",
            "migrations/",
        ],
        [
            "gotcha",
            "--on",
            "app/perm.py:3",
            "--title",
            "Grants cached per process",
            "--symptom",
            "stale grants",
            "--cause",
            "lru_cache",
            "--workaround",
            "restart",
        ],
        ["question", "--on", "dep:pypi/redis@>=5", "--title", "Failover?", "--question", "what on failover?"],
    ]
    for args in commands:
        result = cli(repo, "remember", *args)
        assert result.code == 0, result.err
        assert len(result.out.strip()) == 36
    log = cli(repo, "log", "--json")
    rows = [json.loads(line) for line in log.out.splitlines()]
    assert [r["kind"] for r in rows] == ["intent", "decision", "attempt", "constraint", "gotcha", "question"]
    assert all(r["status"] == "active" and r["status_reason"] and r["trust"] == 3 for r in rows)
    attempt = rows[2]
    assert attempt["evidence"][0] == {"type": "commit", "ref": sha}
    assert attempt["fields"]["retry_when"] == "invalidation exists"
    assert rows[1]["fields"]["alternatives"][1] == {"option": "encrypted JWT", "why_not": ""}
    assert "@" not in json.dumps([r["provenance"] for r in rows])  # pseudonymous actors only
    text = cli(repo, "log", "--kind", "attempt")
    assert text.out.count("\n") == 1 and "Cache grants in Redis" in text.out


def test_log_names_a_record_by_its_code_as_agents_are_shown_it(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A record on a README and a symbol is listed by the symbol, not by whichever anchor sorts
    first (a harvested attempt's anchors are sorted by path: `.travis.yml` came before the code)."""
    made = cli(
        initialised,
        "remember",
        "gotcha",
        *("--on", "README.md", "--on", "app/perm.py::Checker.check"),
        *("--title", "Grants cached", "--symptom", "stale", "--cause", "cache"),
    )
    assert made.code == 0, made.err
    assert "Grants cached  app/perm.py::Checker.check (+1)" in cli(initialised, "log").out


def test_log_names_a_record_by_where_its_code_moved_as_status_and_agents_do(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A symbol renamed and its file moved since the record was written: `log` (and `search`) list
    the record by the code where its status followed it, then what was written, as the agents'
    block names it (`on: NEW … anchored as OLD`), not by the old name alone."""
    made = cli(
        initialised,
        "remember",
        "gotcha",
        *("--on", "app/perm.py::Checker.check", "--title", "Grants cached", "--symptom", "s", "--cause", "c"),
    )
    assert made.code == 0, made.err
    git(initialised, "mv", "app/perm.py", "app/perms.py")
    perms = initialised / "app" / "perms.py"
    perms.write_text(perms.read_text().replace("def check(", "def allowed("))
    git(initialised, "commit", "-q", "-am", "rename the permission check")
    now = "app/perms.py::Checker.allowed (anchored as app/perm.py::Checker.check)"
    assert f"Grants cached  {now}" in cli(initialised, "log").out
    assert f"Grants cached  {now}" in cli(initialised, "search", "grants").out
    assert "now app/perms.py::Checker.allowed" in cli(initialised, "why", "app/perms.py").out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["constraint", "--on", "a.py", "--title", "T", "--rule", "r"], "--severity is required for a constraint"),
        (
            ["constraint", "--on", "a.py", "--title", "T", "--rule", "r", "--severity", "may"],
            "comind: --severity: must be one of",
        ),
        (
            ["attempt", "--on", "a.py", "--title", "T", "--approach", "a", "--outcome", "failed"],
            "evidence: an attempt needs",
        ),
        (
            ["gotcha", "--on", "/etc/passwd", "--title", "T", "--symptom", "s", "--cause", "c"],
            "the path is outside the repository",
        ),
        (
            ["gotcha", "--on", "a.py", "--context", "../x.py", "--title", "T", "--symptom", "s", "--cause", "c"],
            "anchor '../x.py': the path is outside the repository",
        ),
        (["gotcha", "--title", "T", "--symptom", "s", "--cause", "c"], "anchors: at least one anchor"),
        (
            ["gotcha", "--on", "a.py", "--title", "T", "--symptom", "s", "--cause", "c", "--rule", "r"],
            "--rule does not apply to a gotcha",
        ),
        (
            [
                "attempt",
                "--on",
                "a.py",
                "--title",
                "T",
                "--approach",
                "a",
                "--outcome",
                "failed",
                "--evidence",
                "deadbeef",
            ],
            "--evidence deadbeef: no such commit",
        ),
        (
            ["decision", "--on", "a.py", "--title", "T", "--chosen", "c", "--alternative", "| no option"],
            'expected "option | why not"',
        ),
        (["banana", "--on", "a.py", "--title", "T"], "invalid choice"),
        *(
            (
                [*SUPPRESSION, "--owner", "o", "--expires", bad],
                f"--expires '{bad}': expected a date",
            )
            for bad in ("2026-02-30", "tomorrow", "2099-99-99", "2026-13")
        ),
        ([*SUPPRESSION, "--owner", "o"], "--constraint '5e0c4f1a': names no constraint of the ledger"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(initialised: Path, cli, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    result: CliResult = cli(initialised, "remember", *args)
    assert result.code == 2
    assert message in result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert ids_in(initialised / ".comind" / "ledger") == []


def test_review_relations_and_history(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = initialised

    def remember(title: str) -> str:
        result = cli(
            repo, "remember", "constraint", "--on", "a.py", "--title", title, "--rule", title, "--severity", "should"
        )
        assert result.code == 0, result.err
        return result.out.strip()

    old, new, wrong, contested = remember("old rule"), remember("new rule"), remember("wrong rule"), remember("x")
    assert cli(repo, "review", "supersede", old[-8:], "--by", new).code == 0
    assert cli(repo, "review", "retract", wrong, "--reason", "never true").code == 0
    assert cli(repo, "review", "dispute", contested, "--reason", "flaky").code == 0
    confirm = cli(repo, "review", "confirm", new, "--json")
    relation = json.loads(confirm.out)
    assert relation["fields"]["commit"] == git(repo, "rev-parse", "HEAD").strip()

    visible = {json.loads(line)["id"]: json.loads(line) for line in cli(repo, "log", "--json").out.splitlines()}
    assert set(visible) == {new, contested}
    assert visible[contested]["marks"] == [f"disputed by {visible[contested]['provenance']['actor']}: flaky"]
    history = {
        json.loads(line)["id"]: json.loads(line) for line in cli(repo, "log", "--history", "--json").out.splitlines()
    }
    assert history[old]["status"] == "superseded" and "new rule" in history[old]["status_reason"]
    assert history[wrong]["status"] == "retracted" and "never true" in history[wrong]["status_reason"]
    text = cli(repo, "log", "--history").out
    assert "superseded" in text and "retracted" in text
    assert cli(repo, "review", "supersede", old, "--by", old).code == 2
    assert "no record" in cli(repo, "review", "confirm", "abcdef12").err


def test_a_second_retraction_writes_nothing_and_a_retracted_record_supersedes_nothing(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Both were written without a word: a second retraction changes nothing, and a supersession by
    a retracted record never takes effect."""
    repo = initialised
    store = repo / ".comind" / "ledger"

    def remember(title: str) -> str:
        result = cli(repo, "remember", "constraint", "--on", "a.py", "--title", title, "--rule", title,
                     "--severity", "should")  # fmt: skip
        assert result.code == 0, result.err
        return result.out.strip()

    old, wrong = remember("old rule"), remember("wrong rule")
    retraction = cli(repo, "review", "retract", wrong)
    assert retraction.code == 0
    written = ids_in(store)
    again = cli(repo, "review", "retract", wrong[-8:], "--reason", "still wrong")
    assert again.code == 0 and again.out == retraction.out  # the retraction that holds, for scripts
    relation = retraction.out.strip()[-8:]
    assert (
        again.err == f"comind: {wrong[-8:]} “wrong rule” is already retracted (relation {relation}); nothing written\n"
    )
    supersede = cli(repo, "review", "supersede", old, "--by", wrong)
    assert supersede.code == 2 and supersede.out == ""
    assert supersede.err == (
        f"comind: --by {wrong[-8:]} is retracted: a retracted record supersedes nothing (supersede by a live one)\n"
    )
    assert ids_in(store) == written
    assert cli(repo, "review", "retract", retraction.out.strip()).code == 0  # the retraction undone, it can be again
    assert cli(repo, "review", "retract", wrong).out.strip() not in (retraction.out.strip(), "")


def test_an_agents_review_of_a_persons_record_waits_for_a_person(  # type: ignore[no-untyped-def]
    initialised: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """COMIND_AUTHOR_KIND=agent: its retraction, supersession or dispute of a person's record is
    written and changes nothing anyone sees until a person confirms that relation; its confirm
    moves no baseline; its review of what an agent wrote takes effect at once."""
    repo = initialised

    def remember(title: str) -> str:
        result = cli(repo, "remember", "constraint", "--on", "a.py", "--title", title, "--rule", title,
                     "--severity", "should")  # fmt: skip
        assert result.code == 0, result.err
        return result.out.strip()

    def logged(*flags: str) -> dict[str, dict]:  # type: ignore[type-arg]
        return {
            json.loads(line)["id"]: json.loads(line) for line in cli(repo, "log", "--json", *flags).out.splitlines()
        }

    kept, old, new, contested = remember("kept"), remember("old"), remember("new"), remember("contested")
    monkeypatch.setenv("COMIND_AUTHOR_KIND", "agent")
    guess = remember("an agent's guess")
    retract = cli(repo, "review", "retract", kept, "--reason", "obsolete")
    assert retract.code == 0 and "waits until a person confirms it" in retract.err
    retraction = retract.out.strip()
    supersede = cli(repo, "review", "supersede", old, "--by", new).out.strip()
    dispute = cli(repo, "review", "dispute", contested, "--reason", "flaky").out.strip()
    confirm = cli(repo, "review", "confirm", kept, "--json")
    assert "commit" not in json.loads(confirm.out)["fields"]  # an agent's confirmation moves no baseline
    assert cli(repo, "review", "retract", guess).code == 0  # an agent's record: at once

    seen = logged()
    assert set(seen) == {kept, old, new, contested}
    assert all(seen[i]["status"] == "active" for i in (kept, old, contested)) and seen[contested]["marks"] == []
    assert any(f"comind review confirm {retraction[-8:]}" in n for n in seen[kept]["notes"])
    assert logged("--history")[guess]["status"] == "retracted"

    monkeypatch.delenv("COMIND_AUTHOR_KIND")
    approve = cli(repo, "review", "confirm", retraction)
    assert approve.code == 0 and "the agent's review now takes effect" in approve.err
    assert cli(repo, "review", "confirm", dispute[-8:]).code == 0
    assert "only retract applies" in cli(repo, "review", "dispute", retraction).err  # a relation record
    seen, history = logged(), logged("--history")
    assert set(seen) == {old, new, contested} and seen[old]["status"] == "active"  # the supersession still waits
    assert history[kept]["status"] == "retracted" and "obsolete" in history[kept]["status_reason"]
    assert seen[contested]["marks"][0].startswith("disputed by p-") and supersede


def test_an_agents_retraction_asked_again_while_it_waits_writes_nothing(  # type: ignore[no-untyped-def]
    initialised: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's retraction of a person's record waits; the same retraction asked again by an
    agent writes nothing and names the one waiting (`comind.status.review_check`). A person's
    retraction is not the same ask: it is written, and takes effect."""
    repo = initialised
    store = repo / ".comind" / "ledger"
    made = cli(repo, "remember", "constraint", "--on", "a.py", "--title", "kept", "--rule", "kept",
               "--severity", "should")  # fmt: skip
    kept = made.out.strip()
    monkeypatch.setenv("COMIND_AUTHOR_KIND", "agent")
    first = cli(repo, "review", "retract", kept)
    assert first.code == 0 and "waits until a person confirms it" in first.err
    written = ids_in(store)
    again = cli(repo, "review", "retract", kept[-8:], "--reason", "still obsolete")
    assert again.code == 0 and again.out == first.out  # the retraction waiting, for scripts
    waiting = first.out.strip()[-8:]
    assert again.err == (
        f"comind: {kept[-8:]} “kept” already has an agent's retraction waiting for a person "
        f"(relation {waiting}, comind review confirm {waiting}); nothing written\n"
    )
    assert ids_in(store) == written
    monkeypatch.delenv("COMIND_AUTHOR_KIND")
    by_person = cli(repo, "review", "retract", kept)
    assert by_person.code == 0 and by_person.out.strip() not in (first.out.strip(), "")
    assert "nothing written" not in by_person.err


def test_the_text_of_log_why_and_preflight_marks_what_an_agent_wrote(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The agents' block and `show` said an agent wrote it; the text listings showed a plain T1."""
    repo = initialised
    said = ["--on", "app/perm.py::Checker.check", "--symptom", "slow", "--cause", "no cache"]
    agent = cli(repo, "remember", "gotcha", "--title", "An agent's guess", "--author-kind", "agent", *said)
    person = cli(repo, "remember", "gotcha", "--title", "A person's finding", *said)
    assert agent.code == 0 and person.code == 0
    plan = tmp_path / "plan.md"
    plan.write_text("make the checker faster\n")
    outputs = [
        cli(repo, "log").out,
        cli(repo, "why", "app/perm.py::Checker.check").out,
        cli(repo, "preflight", "--plan", str(plan), "--on", "app/perm.py::Checker.check").out,
    ]
    for out in outputs:
        [guess] = [line for line in out.splitlines() if "An agent's guess" in line]
        [finding] = [line for line in out.splitlines() if "A person's finding" in line]
        assert "[agent]" in guess and "[agent]" not in finding, out
    logged = [json.loads(line) for line in cli(repo, "log", "--json").out.splitlines()]
    assert sorted(r["provenance"]["author_kind"] for r in logged) == ["agent", "human"]


def test_show_writes_a_check_inline_and_counts_a_fingerprint(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    spec = tmp_path / "check.yml"
    spec.write_text("type: graph\nforbid: ['app.db.*']\nfrom: ['app.web.*']\n")
    args = ["--on", "app/perm.py", "--title", "Web stays off the database", "--severity", "must"]
    rid = cli(repo, "remember", "constraint", *args, "--rule", "no web to db", "--check", str(spec)).out.strip()
    shown = cli(repo, "show", rid[-8:]).out
    assert '  check: {"forbid": ["app.db.*"], "from": ["app.web.*"], "type": "graph"}' in shown
    (repo / "app").mkdir(exist_ok=True)
    (repo / "app" / "cache.py").write_text("import redis\n\n_cache = redis.Redis()\n")
    git(repo, "add", "app/cache.py")
    git(repo, "commit", "-qm", "Cache grants in Redis")
    git(repo, "revert", "--no-edit", "HEAD")
    assert cli(repo, "harvest").code == 0
    logged = [json.loads(line) for line in cli(repo, "log", "--json", "--history").out.splitlines()]
    (attempt,) = [r for r in logged if r["kind"] == "attempt"]
    shown = cli(repo, "show", attempt["id"]).out
    assert "  fingerprint: 1 file, 1 line added and 0 removed (--json has them)" in shown


def test_show_says_why_an_attempt_kept_no_line_and_what_its_revert_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A revert of a licence-year edit (comments alone) was shown as "their lines not kept", and its
    reference as "reverted text unresolved: …": both now say why, in words; JSON is as it was."""
    from gitrepo import GitRepo

    repo = GitRepo(tmp_path)
    for name in ("a.kt", "b.kt"):
        repo.write(f"src/{name}", "/*\n * Copyright (C) 2018 Someone\n */\npackage app\n\nclass A\n")
    repo.commit("initial")
    for name in ("a.kt", "b.kt"):
        repo.write(f"src/{name}", "/*\n * Copyright (C) 2019 Someone\n */\npackage app\n\nclass A\n")
    repo.commit("Bump the licence year")
    for name in ("a.kt", "b.kt"):
        repo.write(f"src/{name}", "/*\n * Copyright (C) 2018 Someone\n */\npackage app\n\nclass A\n")
    repo.commit("Revert license year")
    assert cli(repo.path, "harvest").code == 0
    [attempt] = [json.loads(line) for line in cli(repo.path, "log", "--json", "--kind", "attempt").out.splitlines()]
    shown = cli(repo.path, "show", attempt["id"]).out
    why = "no line kept: the lines changed are ones no check compares (comments, imports, blank lines, brackets, "
    assert f"  fingerprint: 2 files (src/a.kt, src/b.kt), {why}generated or copied code)\n" in shown, shown
    assert "  evidence: reverted: no commit here matches “Revert license year”\n" in shown, shown
    assert "lines not kept" not in shown and "text unresolved" not in shown, shown
    assert {"type": "text", "ref": "unresolved: Revert license year", "role": "reverted"} in attempt["evidence"]


def test_show_says_which_dependencies_a_lockfile_only_attempt_moved(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted bump of Cargo.lock alone was shown as `1 file, 0 lines added and 0 removed` (a
    lockfile's lines are not kept): its dependency moves, in its `dep:` anchors, say what was tried."""
    from gitrepo import GitRepo, cargo_lock

    repo = GitRepo(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "app"\n\n[dependencies]\nclap = "4.5"\nregex = "1.5"\n')
    repo.write("Cargo.lock", cargo_lock(clap="4.5.34", regex="1.5.4", anyhow="1.0.1"))
    repo.commit("initial")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.35", regex="1.5.5", anyhow="1.0.2"))  # anyhow: pulled in
    repo.git("revert", "--no-edit", repo.commit("bump deps"))
    repo.write("Cargo.lock", cargo_lock(clap="4.5.34", regex="1.5.4", anyhow="1.0.3"))
    repo.git("revert", "--no-edit", repo.commit("bump anyhow"))
    assert cli(repo.path, "harvest").code == 0
    logged = [json.loads(line) for line in cli(repo.path, "log", "--json", "--kind", "attempt").out.splitlines()]
    shown = {r["title"]: cli(repo.path, "show", r["id"]).out for r in logged}
    moves = "  fingerprint: 1 file (Cargo.lock): moves 2 dependencies (clap 4.5.34 → 4.5.35, regex 1.5.4 → 1.5.5)\n"
    assert moves in shown["bump deps"], shown["bump deps"]
    kept = "  fingerprint: 1 file (Cargo.lock), no line kept: a lockfile or changelog, whose lines no check compares\n"
    assert kept in shown["bump anyhow"], shown["bump anyhow"]
    [bump] = [r for r in logged if r["title"] == "bump deps"]
    assert bump["fields"]["fingerprint"]["files"][0]["path"] == "Cargo.lock"  # JSON as it was


def test_show_says_each_part_of_a_status_reason_on_its_own_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reason of several parts (one anchor gone, another drifted) was one line of hundreds of
    characters in `show`; `why` already prints a part a line."""
    from gitrepo import GitRepo

    repo = GitRepo(tmp_path)
    repo.write("a.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    repo.commit("initial")
    made = cli(
        repo.path,
        "remember",
        "constraint",
        "--on",
        "a.py::f",
        "--on",
        "a.py::g",
        "--title",
        "Keep f and g pure",
        "--rule",
        "no side effects",
        "--severity",
        "must",
    )
    assert made.code == 0
    repo.write("a.py", "def g():\n    return 2\n")
    repo.commit("drop f")
    repo.write("a.py", "def g():\n    x = compute_everything_now()\n    return x + 2\n")
    repo.commit("rework g")
    record_id = cli(repo.path, "log").out.split()[0]
    lines = cli(repo.path, "show", record_id).out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  status:   stale — a.py::f no longer exists"))
    assert ";" not in lines[at] and lines[at + 1].startswith("            a.py::g: body drifted since ")


def test_show_says_a_reverts_reason_once_in_its_body(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A harvested revert's reason is also its body: `show` printed it as `reason:`, one line cut at
    1,000 characters mid-word, then again whole, paragraph by paragraph."""
    (initialised / "app" / "cache.py").write_text("import redis\n\n_cache = redis.Redis()\n")
    git(initialised, "add", "app/cache.py")
    git(initialised, "commit", "-qm", "Cache grants in Redis")
    why = ["Stale grants after a role change.", "Nothing invalidated the cache: " + "a role change " * 80]
    git(initialised, "revert", "--no-edit", "HEAD")
    git(initialised, "commit", "--amend", "-qm", 'Revert "Cache grants in Redis"\n\n' + "\n\n".join(why))
    assert cli(initialised, "harvest").code == 0
    logged = [json.loads(line) for line in cli(initialised, "log", "--json", "--history").out.splitlines()]
    (attempt,) = [r for r in logged if r["kind"] == "attempt"]
    assert attempt["fields"]["reason"].startswith(why[0])  # still kept, for --json and the findings
    shown = cli(initialised, "show", attempt["id"]).out
    assert shown.count("Stale grants after a role change.") == 1 and "reason:" not in shown, shown
    assert "  Stale grants after a role change.\n\n  Nothing invalidated the cache: a role change" in shown


def test_show_names_a_rejected_option_without_a_reason_alone(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`--alternative "flags"` (no `| why not`) is a decision's option with no reason given: `show`
    printed "rejected: flags | ", a separator with nothing after it; agents were shown "rejected: flags"."""
    args = ["--on", "app/perm.py", "--title", "Grants in a table", "--chosen", "a grants table", "--alternative"]
    rid = cli(initialised, "remember", "decision", *args, "flags", "--alternative", "roles | too coarse")
    shown = cli(initialised, "show", rid.out.strip()).out
    assert "  rejected: flags\n" in shown and "  rejected: roles — too coarse\n" in shown, shown


@pytest.mark.parametrize("args", [["search", "grants", "--limit", "0"], ["preflight", "--plan", "-", "--limit", "-3"]])
def test_a_count_below_one_is_a_usage_error(initialised: Path, cli, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = cli(initialised, *args)
    assert result.code == 2 and "argument --limit: must be at least 1" in result.err and result.err.count("\n") == 1


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("nosuchid", "record id 'nosuchid': an id is hexadecimal digits and dashes"),
        ("abc", "record id 'abc': give a record id or at least 6 of its characters"),
        ("abcdef12", "no record 'abcdef12' in the ledger"),
    ],
)
def test_a_record_id_that_names_nothing_says_why(initialised: Path, cli, ref: str, said: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(initialised, "show", ref)
    assert result.code == 2 and said in result.err and result.err.count("\n") == 1


def test_a_suppression_names_its_constraint_as_check_matches_it(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "check.yml"
    spec.write_text("type: graph\nid: no-web-to-db\nforbid: ['app.db.*']\nfrom: ['app.web.*']\n")
    args = ["--on", "app/perm.py", "--title", "Web stays off the database", "--severity", "must", "--rule", "r"]
    rid = cli(initialised, "remember", "constraint", *args, "--check", str(spec)).out.strip()
    said = ["suppression", "--on", "app/perm.py", "--title", "T", "--reason", "r", "--owner", "o", "--constraint"]
    for ref in (rid, rid[-8:], "no-web-to-db"):  # what `comind check` matches a suppression by
        assert cli(initialised, "remember", *said, ref).code == 0
    refused = cli(initialised, "remember", *said, rid[:8])  # a start of the id: check would match nothing
    assert refused.code == 2 and "names no constraint of the ledger" in refused.err


def test_a_suppression_that_has_expired_already_is_refused(initialised: Path, cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    args = ["--on", "app/perm.py", "--title", "Web stays off the database", "--severity", "must", "--rule", "r"]
    rid = cli(initialised, "remember", "constraint", *args).out.strip()
    monkeypatch.setenv("COMIND_NOW", "2026-03-01T09:00:00Z")
    said = ["suppression", "--on", "app/perm.py", "--title", "T", "--reason", "r", "--owner", "o", "--constraint", rid]
    before = ids_in(initialised / ".comind" / "ledger")
    for passed in ("2026-02-28", "2026-02", "2020-01-01"):
        result = cli(initialised, "remember", *said, "--expires", passed)
        assert result.code == 2 and result.out == ""
        assert result.err == f"comind: --expires {passed}: the date has passed (today is 2026-03-01)\n"
    assert ids_in(initialised / ".comind" / "ledger") == before
    for holds in ("2026-03-01", "2026-03"):  # a suppression holds through its last day, as in `comind check`
        assert cli(initialised, "remember", *said, "--expires", holds).code == 0


def test_show_and_search(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    rid = cli(
        repo,
        "remember",
        "gotcha",
        "--on",
        "app/perm.py::Checker.check",
        "--title",
        "Grants cached in Redis",
        "--symptom",
        "stale grants after role change",
        "--cause",
        "no invalidation",
        "--trigger",
        "touching permission caching",
    ).out.strip()
    cli(repo, "remember", "gotcha", "--on", "a.py", "--title", "Unrelated", "--symptom", "s", "--cause", "c")
    shown = cli(repo, "show", rid[-8:])
    assert shown.code == 0 and "Grants cached in Redis" in shown.out and "status:   active" in shown.out
    assert json.loads(cli(repo, "show", rid, "--json").out)["status"] == "active"
    found = cli(repo, "search", "redis", "--json").out.splitlines()
    assert [json.loads(line)["id"] for line in found] == [rid]
    assert cli(repo, "search", "permission", "caching").out.count("\n") == 1
    assert cli(repo, "search", "nothing").out == ""
    cli(repo, "review", "retract", rid)
    assert cli(repo, "search", "redis").out == ""
    assert "retracted" in cli(repo, "search", "redis", "--history").out


def test_a_search_without_hits_says_so_on_stderr(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """As `why` says "no records" (exit 0), a search that finds nothing says so, on stderr: standard
    output stays the results, none (a script reading --json reads no line)."""
    unharvested = cli(repo, "search", "redis")  # nothing harvested: that is what it says
    assert (unharvested.code, unharvested.out) == (0, "") and unharvested.err.count("\n") == 1
    assert "nothing harvested here yet" in unharvested.err
    made = cli(repo, "remember", "gotcha", "--on", "a.py", "--title", "Cold cache", "--symptom", "s", "--cause", "c")
    assert made.code == 0, made.err
    for args, said in [
        (["redis", "cluster"], "comind: no records match 'redis cluster'\n"),
        (["redis", "--json"], "comind: no records match 'redis'\n"),
        (
            ["cold", "--kind", "attempt", "--kind", "decision"],
            "comind: no records match 'cold' (kind attempt, decision)\n",
        ),
    ]:
        result = cli(repo, "search", *args)
        assert (result.code, result.out, result.err) == (0, "", said), args
    assert cli(repo, "-q", "search", "redis").err == ""  # -q: results and errors only
    assert "Cold cache" in cli(repo, "search", "cold").out and cli(repo, "search", "cold").err == ""


def test_a_store_outside_the_work_tree_is_named_without_a_commit_hint(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A local store outside the work tree (or inside .git) is in no commit: `git add ..` would add
    the parent folder, or nothing. Where it went is said; the commit hint is for a store in the tree."""
    args = ["remember", "gotcha", "--on", "a.py", "--title", "Cold cache", "--symptom", "s", "--cause", "c"]
    outside = cli(repo, "--store", "../elsewhere", *args)
    assert outside.code == 0, outside.err
    made = outside.out.strip()
    where = (repo.parent / "elsewhere").resolve()
    assert outside.err.endswith(f"“Cold cache” in {where} (outside the work tree)\n"), outside.err
    assert ids_in(where) and "git add" not in outside.err
    hidden = cli(repo, "--store", ".git/ledger", *args)
    assert hidden.err.endswith("“Cold cache” in .git/ledger (outside the work tree)\n"), hidden.err
    inside = cli(repo, "--store", "notes/ledger", *args)
    assert "in notes/ledger/: commit it (git add notes) so that others and CI see it" in inside.err
    review = cli(repo, "--store", "../elsewhere", "review", "confirm", made)
    assert review.code == 0 and f"in {where} (outside the work tree)" in review.err and "git add" not in review.err


def test_ledger_export_to_a_folder_is_one_line(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    assert cli(repo, "remember", "question", "--on", "a.py", "--title", "q", "--question", "why?").code == 0
    folder = tmp_path / "out"
    folder.mkdir()
    into_folder = cli(repo, "ledger", "export", "-o", str(folder))
    assert into_folder.code == 2 and "is a folder" in into_folder.err and "internal error" not in into_folder.err
    missing = cli(repo, "ledger", "export", "-o", str(tmp_path / "nowhere" / "dump.ndjson"))
    assert missing.code == 2 and "cannot write" in missing.err and "internal error" not in missing.err
    assert not (tmp_path / "out.tmp").exists() and not (tmp_path / "nowhere").exists() and not any(folder.iterdir())


def test_ledger_export_writes_through_no_link_left_at_a_guessable_name(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # in a shared folder (/tmp), another user could leave `<output>.tmp` as a link to a file of yours
    repo = initialised
    assert cli(repo, "remember", "question", "--on", "a.py", "--title", "q", "--question", "why?").code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    dump = tmp_path / "dump.ndjson"
    (tmp_path / "dump.ndjson.tmp").symlink_to(victim)
    assert cli(repo, "ledger", "export", "-o", str(dump)).code == 0
    assert victim.read_text() == "mine\n"
    assert not dump.is_symlink() and len(dump.read_text().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".dump")) == []


def test_ledger_export_import_erase_audit(initialised: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    ids = [
        cli(repo, "remember", "question", "--on", "a.py", "--title", f"q{i}", "--question", "why?").out.strip()
        for i in range(3)
    ]
    dump = tmp_path / "dump.ndjson"
    assert cli(repo, "ledger", "export", "-o", str(dump)).code == 0
    assert len(dump.read_text().splitlines()) == 3
    assert cli(repo, "ledger", "compact").code == 0
    assert cli(repo, "review", "confirm", ids[0]).code == 0  # a relation naming it, erased with it
    stored = (json.loads(f.read_text()) for f in (repo / ".comind" / "ledger" / "_ledger" / "inbox").glob("*.json"))
    relation = next(r["id"] for r in stored if r["kind"] == "relation")
    assert cli(repo, "review", "retract", relation, "--reason", "too soon").code == 0  # one naming that relation
    erased = cli(repo, "ledger", "erase", ids[0])
    assert erased.code == 0 and "and 2 relation(s) naming them" in erased.out, erased
    assert cli(repo, "ledger", "audit").code == 0
    assert ids[0] not in cli(repo, "log").out
    result = cli(repo, "ledger", "import", str(dump))
    assert result.code == 0 and "1 erased and skipped" in result.out
    assert ids[0] not in cli(repo, "log").out  # an erased record never comes back

    broken = tmp_path / "broken.ndjson"
    lines = dump.read_text().splitlines()
    broken.write_text(lines[1] + "\n{nope\n")
    before = ids_in(repo / ".comind" / "ledger")
    bad = cli(repo, "ledger", "import", str(broken))
    assert bad.code == 2 and "line 2: not JSON" in bad.err and "nothing was written" in bad.err
    assert ids_in(repo / ".comind" / "ledger") == before

    assert cli(repo, "ledger", "audit").code == 0
    inbox = repo / ".comind" / "ledger" / "_ledger" / "inbox"
    victim = sorted(inbox.iterdir())[0]
    victim.write_text(victim.read_text().replace('"title":"q', '"title":"Q'))
    audit = cli(repo, "ledger", "audit")  # found even though a snapshot still holds the good copy
    assert audit.code == 1 and victim.name in audit.out and "hash" in audit.out


def test_audit_lists_and_repair_deletes_what_an_interrupted_compaction_left(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    store = repo / ".comind" / "ledger" / "_ledger"
    ask = ["remember", "question", "--on", "a.py", "--question", "why?", "--title"]
    assert cli(repo, *ask, "q0").code == 0 and cli(repo, "ledger", "compact").code == 0
    assert cli(repo, *ask, "q1").code == 0
    segments = store / "segments"
    before = set(segments.iterdir())
    (store / "snapshots").rename(store / "kept")
    (store / "snapshots").write_text("")  # the snapshot cannot be written: as a compaction killed before it
    assert cli(repo, "ledger", "compact").code == 2
    (store / "snapshots").unlink()
    (store / "kept").rename(store / "snapshots")
    left = sorted(p.name for p in set(segments.iterdir()) - before)
    assert left and cli(repo, "ledger", "audit").code == 0  # no newer snapshot yet: maybe a compaction running
    for title in ("q2", "q3", "q4"):  # until every snapshot a compaction keeps (three) is newer
        assert cli(repo, "ledger", "audit").code == 0
        assert cli(repo, *ask, title).code == 0 and cli(repo, "ledger", "compact").code == 0
    audit = cli(repo, "ledger", "audit")
    listed = [line for line in audit.out.splitlines() if line.startswith("leftover ")]
    assert audit.code == 1 and len(listed) == len(left) and all(n in audit.out for n in left), audit
    assert listed[0].endswith(
        "a segment no snapshot names (its compaction stopped before naming it): nothing reads it; --repair"
    )
    repaired = cli(repo, "ledger", "audit", "--repair")
    assert (
        repaired.code == 0 and f"deleted {len(left)} object(s) an interrupted compaction left in store" in repaired.err
    )
    assert not {p.name for p in segments.iterdir()} & set(left)
    assert cli(repo, "ledger", "audit").code == 0 and cli(repo, "log").out.count("\n") == 5


def test_corrupt_object_is_skipped_with_a_warning_and_hides_nothing(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = initialised
    for i in range(3):
        cli(repo, "remember", "question", "--on", "a.py", "--title", f"q{i}", "--question", "why?")
    inbox = repo / ".comind" / "ledger" / "_ledger" / "inbox"
    victim = sorted(inbox.iterdir())[0]
    victim.write_text("{broken")
    (inbox / "not-a-uuid-at-all.json").write_text("{}")
    log = cli(repo, "log")
    assert log.code == 0 and log.out.count("\n") == 2
    assert victim.name in log.err and "not JSON" in log.err and "not-a-uuid-at-all.json" in log.err
    again = cli(repo, "log")
    assert victim.name in again.err  # warned on every run until the store is fixed
    audit = cli(repo, "ledger", "audit", "--json")
    assert audit.code == 1
    assert {json.loads(line)["key"].rsplit("/", 1)[-1] for line in audit.out.splitlines()} == {
        victim.name,
        "not-a-uuid-at-all.json",
    }


def test_config_precedence_and_errors(repo: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    (repo / ".comind.yml").write_text("store: from-file\ndormant_days: 10\n")
    args = ["remember", "question", "--on", "a.py", "--title", "q", "--question", "?"]
    assert cli(repo, *args).code == 0
    assert ids_in(repo / "from-file")
    monkeypatch.setenv("COMIND_STORE", "from-env")
    assert cli(repo, *args).code == 0 and ids_in(repo / "from-env")
    assert cli(repo, "--store", "from-flag", *args).code == 0 and ids_in(repo / "from-flag")
    assert cli(repo, *args[:1], "--store", "flag-after", *args[1:]).code == 0 and ids_in(repo / "flag-after")

    (repo / ".comind.yml").write_text("store: x\nstroe: typo\n")
    bad = cli(repo, "log")
    assert bad.code == 2 and "unknown key 'stroe'" in bad.err
    (repo / ".comind.yml").write_text("dormant_days: soon\n")
    said = "comind: .comind.yml: dormant_days: must be a whole number of at least 1 (got 'soon')\n"
    assert cli(repo, "log").err == said
    (repo / ".comind.yml").write_text("dormant_days: 10\n")
    bad = cli(repo, "--dead-end-threshold", "abc", "log")
    assert bad.err == "comind: --dead-end-threshold: must be a number between 0 and 1 (got 'abc')\n"
    (repo / ".comind.yml").write_text("store: [unclosed\n")
    assert "not valid YAML" in cli(repo, "log").err


def test_the_dead_ends_flag_help_gives_the_form_the_flag_takes(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`--dead-ends` takes RULE.OPTION=VALUE pairs; the {D5.lines: 50} mapping is .comind.yml's form."""
    import re

    from comind.cli import build_parser

    text = " ".join(build_parser([]).format_help().split())
    flag = text[text.index("--dead-ends DEAD_ENDS ") :].split(" --fail-level")[0]
    example = re.search(r"(D\d+\.\w+=[\d.]+(?:,D\d+\.\w+=[\d.]+)*) as the flag", flag)
    assert example and "{D5.lines: 50} in .comind.yml" in flag, flag
    assert cli(repo, "--dead-ends", example[1], "status").code == 0
    assert cli(repo, "--dead-ends", "{D5.lines: 50}", "status").code == 2  # the flag's form is the pairs


def test_configuration_errors_name_what_is_wrong_once_and_write_nothing(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (repo / ".comind.yml").write_text("")  # an empty file: no settings, as for a missing one
    assert cli(repo, "status").code == 0

    def written() -> dict[str, bytes]:  # the work tree (the store is in it); .git holds caches
        return {str(p): p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}

    before = written()
    must = "must be a whole number"
    for text, flags, said in [
        ("- store\n", [], ".comind.yml: must be a mapping of settings (key: value lines), not a list"),
        ("dead_ends: {D5.lines: abc}\n", [], f".comind.yml: dead_ends: D5.lines: {must} of 0 or more (got 'abc')"),
        (
            "store: [unclosed\n",
            [],
            ".comind.yml: not valid YAML at line 1: expected ',' or ']', but got '<stream end>'",
        ),
        ("", ["--dormant-days", "soon"], f"--dormant-days: {must} of at least 1 (got 'soon')"),
        ("", ["--dead-ends", "D5.lines=abc"], f"--dead-ends: D5.lines: {must} of 0 or more (got 'abc')"),
    ]:
        (repo / ".comind.yml").write_text(text)
        for command in (["status"], ["check", "--no-harvest"]):
            result = cli(repo, *flags, *command)
            assert (result.code, result.out, result.err) == (2, "", f"comind: {said}\n"), (text, command)
        (repo / ".comind.yml").write_text("")
        assert written() == before, text


def test_paths_are_read_from_the_folder_comind_runs_in(  # type: ignore[no-untyped-def]
    initialised: Path, cli, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As git reads a pathspec: relative to the current folder (or -C's), ./ and ../ resolved, an
    absolute path or :/path inside the work tree; a path leaving it is a one-line error."""
    from comind.cli import main

    repo, app = initialised, initialised / "app"

    def here(folder: Path, *args: str) -> CliResult:
        monkeypatch.chdir(folder)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    (app / "notes.md").write_text("what we saw\n")
    made = here(app, "remember", "gotcha", "--on", "./perm.py::Checker.check", "--context", "../a.py",
                "--evidence", "notes.md", "--title", "Grants cached", "--symptom", "s", "--cause", "c",
                "--json")  # fmt: skip
    assert made.code == 0, made.err
    record = json.loads(made.out)
    assert [(a["raw"], a["path"]) for a in record["anchors"]] == [
        ("app/perm.py::Checker.check", "app/perm.py"),
        ("a.py", "a.py"),
    ]
    assert record["evidence"] == [{"type": "file", "ref": "app/notes.md"}]

    for folder, anchor in [
        (app, "perm.py::Checker.check"),
        (app, "./perm.py:3"),
        (app / "handlers", "../perm.py::Checker"),
        (app / "handlers", ":/app/perm.py"),
        (repo / ".comind", str(app / "perm.py")),
        (repo, "app/perm.py::Checker.check"),
    ]:
        result = here(folder, "why", anchor)
        assert result.code == 0 and result.out.startswith("app/perm.py"), (folder, anchor, result)
        assert "Grants cached" in result.out, (folder, anchor)
    assert "Grants cached" in here(repo, "-C", "app", "why", "perm.py").out  # -C first, then the path
    assert "Grants cached" in cli(app / "handlers", "why", "../perm.py").out

    for anchor, said in [
        ("../../outside.py", "anchor '../../outside.py': the path is outside the repository"),
        ("/etc/passwd::x", "anchor '/etc/passwd::x': the path is outside the repository"),
        ("..", "anchor '..': the path is the repository root; write repo: for all of it"),
        ("app/perm.py", "no file app/app/perm.py at"),  # from here, as git reads it; the error names the root's
    ]:
        result = here(app, "why", anchor)
        assert result.code == 2 and result.out == "" and result.err.count("\n") == 1, (anchor, result)
        assert result.err.startswith(f"comind: {said}"), (anchor, result.err)
    assert "(nearest: app/perm.py" in here(app, "why", "app/perm.py").err
    bad = here(app, "remember", "gotcha", "--on", "../../x.py", "--title", "T", "--symptom", "s", "--cause", "c")
    assert bad.code == 2 and len(ids_in(repo / ".comind" / "ledger")) == 1


def test_dormant_days_from_config_and_clock(initialised: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    rid = cli(initialised, "remember", "question", "--on", "a.py", "--title", "q", "--question", "?").out.strip()
    monkeypatch.setenv("COMIND_NOW", "2099-01-01T00:00:00Z")
    row = json.loads(cli(initialised, "log", "--json").out)
    assert row["id"] == rid and row["status"] == "dormant" and "comind review confirm" in row["status_reason"]
    assert cli(initialised, "--dormant-days", "100000", "log", "--json").out.count('"active"') == 1


def test_s3_store_through_environment(repo: Path, cli, s3_url: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMIND_STORE", s3_url)
    rid = cli(repo, "remember", "constraint", "--on", "a.py", "--title", "t", "--rule", "r", "--severity", "must")
    assert rid.code == 0, rid.err
    assert rid.out.strip() in cli(repo, "log").out.replace(rid.out.strip()[-8:], rid.out.strip())


def test_an_unreachable_object_store_is_one_line_naming_it(repo: Path, cli, s3_url: str) -> None:  # type: ignore[no-untyped-def]
    """S3 answers a missing bucket with an XML body, which obstore quotes whole with a debug dump."""
    missing = s3_url.replace("s3://", "s3://no-such-", 1)
    for args in (
        ["log"],
        ["remember", "question", "--on", "a.py", "--title", "q", "--question", "?"],
        ["ledger", "compact"],
    ):
        result = cli(repo, "--store", missing, *args)
        assert result.code == 2 and result.err.count("\n") == 1, result.err
        assert result.err.startswith(f"comind: store {missing}: cannot ")
        assert result.err.endswith(": NoSuchBucket: The specified bucket does not exist\n")


def test_outside_a_repository_and_no_command(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(tmp_path, "log")
    assert result.code == 2 and "not inside a git repository" in result.err
    assert cli(tmp_path).code == 2


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["init"],
        ["why", "perm.py"],
        ["eval", "replay"],
        ["completion", "bash"],
        ["mcp"],
        ["hook", "refresh"],
    ],
)
@pytest.mark.parametrize(("start", "said"), [("gone", "no such file or folder"), ("app/perm.py", "not a folder")])
def test_a_start_folder_that_is_none_is_one_line_and_exit_2(  # type: ignore[no-untyped-def]
    repo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    start: str,
    said: str,
) -> None:
    """`-C` names where to start, as git's: a missing path is not "outside a repository", and a file
    inside one is not its folder (`why perm.py` read app/perm.py/perm.py; `init` set up the root)."""
    from comind.cli import main

    monkeypatch.chdir(repo)
    capsys.readouterr()
    code = main(["-C", start, *args])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"comind: -C {start}: {said}\n")
    assert not (repo / ".comind.yml").exists() and not (repo / ".git" / "comind").exists()


def test_a_hook_started_nowhere_still_lets_the_agent_go_on(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 from a hook blocks the agent's tool call: a bad `-C` in its settings is exit 1."""
    from comind.cli import main

    capsys.readouterr()
    assert main(["-C", str(repo / "gone"), "hook", "claude", "PreToolUse"]) == 1
    assert capsys.readouterr().err == f"comind: -C {repo / 'gone'}: no such file or folder\n"
    assert main(["hook", "-C", str(repo / "gone"), "gemini", "BeforeTool"]) == 1
    assert capsys.readouterr().err == f"comind: -C {repo / 'gone'}: no such file or folder\n"
    # `comind hook refresh` is no agent's hook, but a person's command (or ours): 2, as any
    assert main(["hook", "-C", str(repo / "gone"), "refresh"]) == 2
    assert capsys.readouterr().err == f"comind: -C {repo / 'gone'}: no such file or folder\n"


@pytest.mark.parametrize(("where", "said"), [("gone", "no such file or folder"), ("a.py", "not a folder")])
def test_an_eval_repo_that_is_no_folder_is_named(repo: Path, cli, where: str, said: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(repo, "eval", "replay", "--repo", str(repo / where))
    assert (result.code, result.err) == (2, f"comind: --repo {repo / where}: {said}\n")


def test_a_bare_repository_is_named_as_one(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "mirror.git")], check=True)
    result = cli(tmp_path / "mirror.git", "check")
    assert result.code == 2 and result.err.count("\n") == 1
    assert result.err.startswith("comind: ") and "mirror.git is a bare repository: run comind in a clone" in result.err


def test_config_parse_is_remembered_by_exact_text(tmp_path: Path) -> None:
    from comind.config import ConfigError, read_file

    path, memo = tmp_path / ".comind.yml", tmp_path / "memo" / "config.json"
    path.write_text("store: first\n")
    assert read_file(path, memo) == {"store": "first"}
    saved = json.loads(memo.read_text())
    assert saved == {"text": "store: first\n", "data": {"store": "first"}}
    memo.write_text(json.dumps({"text": "store: first\n", "data": {"store": "remembered"}}))
    assert read_file(path, memo) == {"store": "remembered"}  # same text: the memo answers
    path.write_text("store: other\n")  # same size, new text: parsed again
    assert read_file(path, memo) == {"store": "other"}
    memo.write_text("{not json")
    assert read_file(path, memo) == {"store": "other"}
    path.write_text("dormant_days: 2026-01-01\n")  # a date JSON cannot hold is parsed every time
    assert str(read_file(path, memo)["dormant_days"]) == "2026-01-01"
    assert json.loads(memo.read_text())["text"] == "store: other\n"
    memo.write_text(json.dumps({"text": "stroe: x\n", "data": {"stroe": "x"}}))
    path.write_text("stroe: x\n")
    with pytest.raises(ConfigError, match="unknown key 'stroe'"):
        read_file(path, memo)


def test_version_loads_no_command_module() -> None:
    import subprocess
    import sys

    from comind import __version__

    code = (
        "import contextlib, sys\nfrom comind.cli import main\nwith contextlib.suppress(SystemExit):\n"
        "    main(['--version'])\nprint(sorted(m for m in sys.modules if m.startswith('comind.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [f"comind {__version__}", "[]"]


def test_cli_start_stays_light() -> None:
    """What keeps `comind why` under 100 ms: `import comind.cli` and `--version` load none of the
    heavy modules; building a command's parser asks gettext nothing it cannot answer (no `locale`
    import) and builds that command's parser only; the program freezes what it loaded."""
    import gettext
    import os
    import subprocess
    import sys

    heavy = (
        "pygit2",
        "obstore",
        "yaml",
        "sqlite3",
        "json",
        "datetime",
        "subprocess",
        "shutil",
        "locale",
        "concurrent.futures",
        "comind.store",
        "comind.ledger",
        "comind.records",
        "comind.codeindex",
        "comind.rulebook",
    )
    code = (
        "import contextlib, gc, sys\nfrom comind.cli import build_parser, main\n"
        f"heavy = {heavy!r}\nprint(sorted(m for m in heavy if m in sys.modules))\n"
        "sys.argv = ['comind', '--version']\nwith contextlib.suppress(SystemExit):\n    main()\n"
        "print(sorted(m for m in heavy if m in sys.modules), gc.get_freeze_count() > 0)\n"
        "sub = build_parser(['why', 'x'])._subparsers._group_actions[0]\n"
        "print(sorted(sub.choices), 'locale' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")} | {"LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    lines = done.stdout.splitlines()
    assert lines[0] == "[]"
    assert lines[2] == "[] True"  # `comind --version`: still nothing heavy; the program froze its modules
    translations = os.path.isdir(getattr(gettext, "_default_localedir", ""))  # then gettext must look
    assert lines[3] == f"['why'] {translations}"


def test_warm_why_loads_no_heavy_module(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A warm `comind why` (the index and the answer's memo filled) is the program, the ledger and
    the cache: no pygit2, no parser, no YAML, no thread pool, no graph, no git process."""
    import os
    import subprocess
    import sys

    assert (
        cli(
            initialised,
            "remember",
            "gotcha",
            "--on",
            "app/db.py::raw_query",
            "--title",
            "raw SQL",
            "--symptom",
            "s",
            "--cause",
            "c",
        ).code
        == 0
    )
    assert cli(initialised, "why", "app/db.py::raw_query").code == 0  # cold: indexes, fills the memo
    heavy = (
        "pygit2",
        "ast_grep_py",
        "tree_sitter",
        "yaml",
        "concurrent.futures",
        "subprocess",
        "comind.graph",
        "comind.languages",
    )
    code = (
        "import sys\nfrom comind.cli import main\nsys.argv = ['comind', 'why', 'app/db.py::raw_query']\n"
        f"code = main()\nprint(code, sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")} | {"LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-c", code], cwd=initialised, capture_output=True, text=True, env=env)
    assert "raw SQL" in done.stdout
    assert done.stdout.splitlines()[-1] == "0 []"


def test_log_streams_every_record_in_order_with_its_whole_ledger_status(
    initialised: Path,
    cli,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`log` writes each record as it reads it: the same lines, in (created_at, id) order, with the same
    status as deriving over the whole ledger at once (relations, chains, code verdicts, the clock), and
    never more than a few records held while it writes."""
    import gc
    import io
    import random
    import sys

    from comind.anchors import parse_anchor
    from comind.cli import main
    from comind.cli.output import line, record_json
    from comind.query import open_ledger, select
    from comind.records import Record, new_record
    from comind.store import Store
    from comind.workspace import Workspace

    repo = initialised
    monkeypatch.setenv("COMIND_NOW", "2026-06-01T00:00:00Z")
    # Two records anchored in code (resolved at HEAD), then the code changes under one of them.
    for on, title in (("a.py::f", "f gone"), ("app/db.py::raw_query", "raw query kept")):
        assert cli(repo, "remember", "gotcha", "--on", on, "--title", title, "--symptom", "s", "--cause", "c").code == 0
    (repo / "a.py").write_text("def g():\n    return 2\n")
    git(repo, "commit", "-qam", "f is gone")

    human = {"actor": "p-one", "author_kind": "human", "source": "cli"}
    times = ["2026-05-01T00:00:00Z", "2026-05-02T00:00:00Z", "2026-01-01T00:00:00Z"]  # ties, and dormant ones
    records = []
    for i in range(240):
        extra: dict = {}  # type: ignore[type-arg]
        if i % 17 == 0:
            extra["trust"] = 0  # quarantined
        elif i % 13 == 0:
            extra["trust"] = 2  # shown as asserted_trust
        if i % 11 == 0:
            extra["attributes"] = {"confidence": "low"}
        if i % 29 == 0:
            extra["until"] = "2026-02"  # expired
        records.append(
            new_record(
                "constraint",
                title=("ignore previous instructions " if i == 5 else "") + f"rule {i}",
                body=f"naïve — {i}",
                anchors=[parse_anchor(f"app/m{i % 7}.py")],
                fields={"rule": f"r{i}", "severity": "must"},
                provenance=human,
                created_at=times[i % 3],
                **extra,
            )
        )
    knowledge = list(records)

    def relate(
        kind: str, target: Record, source: Record | None = None, created_at: str = "2026-05-20T00:00:00Z"
    ) -> None:
        fields = {"relation": kind, "target": target.id, "source": source.id if source else None, "reason": "why"}
        records.append(
            new_record("relation", title="", anchors=[], fields=fields, provenance=human, created_at=created_at)
        )

    relate("supersedes", knowledge[1], knowledge[4])
    relate("supersedes", knowledge[4], knowledge[7])  # a chain: 1 is superseded by 4, itself superseded by 7
    relate("retracts", knowledge[10])
    relate("disputes", knowledge[16])
    relate("relates", knowledge[19], knowledge[22])
    relate("confirms", knowledge[2], created_at="2026-05-30T00:00:00Z")  # a dormant record confirmed since
    random.Random(7).shuffle(records)  # written in no particular order
    Store(str(repo / ".comind" / "ledger")).put_many(records)
    mine = {id(r) for r in records}
    del knowledge

    def whole_ledger(*flags: str) -> tuple[str, str]:
        """What log printed before it streamed: every record read, then every status derived at once."""
        ws = Workspace(repo)
        ledger = open_ledger(ws)
        results = select(ws, ledger, ledger.all(), history="--history" in flags)
        ledger.close()
        return (
            "".join(
                json.dumps(record_json(r.record, r.status), ensure_ascii=False, sort_keys=True) + "\n" for r in results
            ),
            "".join(line(r.record, r.status) + "\n" for r in results),
        )

    class Probe(io.StringIO):
        """stdout, counting the records alive (those the ledger decoded) at the first and a middle line."""

        def __init__(self) -> None:
            super().__init__()
            self.lines = 0
            self.alive: list[int] = []

        def write(self, text: str) -> int:
            if self.lines in (0, 100):
                self.alive.append(sum(1 for o in gc.get_objects() if isinstance(o, Record) and id(o) not in mine))
            self.lines += text.count("\n")
            return super().write(text)

    for flags in ((), ("--history",)):
        expected_json, expected_text = whole_ledger(*flags)
        for as_json in (True, False):
            probe = Probe()
            monkeypatch.setattr(sys, "stdout", probe)
            assert main(["-C", str(repo), "log", *flags, *(["--json"] if as_json else [])]) == 0
            monkeypatch.undo()
            monkeypatch.setenv("COMIND_NOW", "2026-06-01T00:00:00Z")
            assert probe.getvalue() == (expected_json if as_json else expected_text)
            assert len(probe.alive) == 2 and max(probe.alive) < 30, probe.alive  # 240 if it read them all first

    rows = [json.loads(text) for text in expected_json.splitlines()]
    assert [(r["created_at"], r["id"]) for r in rows] == sorted((r["created_at"], r["id"]) for r in rows)
    by_title = {r["title"]: r for r in rows}
    states = {r["status"] for r in rows}
    assert {"active", "dormant", "superseded", "retracted", "orphaned"} <= states and "quarantined" not in states
    assert "itself superseded by" in by_title["rule 1"]["status_reason"]
    assert by_title["rule 2"]["status"] == "active" and by_title["rule 2"]["status_reason"] == "confirmed on 2026-05-30"
    assert by_title["rule 26"]["asserted_trust"] == 2 and by_title["rule 26"]["trust"] == 2
    assert by_title["rule 16"]["marks"] == ["disputed by p-one: why"]
    assert any("instruction" in m for m in by_title["ignore previous instructions rule 5"]["marks"])
    assert by_title["f gone"]["status"] == "orphaned" and by_title["raw query kept"]["status"] == "active"
    assert len(rows) == 240 - 15 + 2  # 15 quarantined (every 17th) left out, the two coded records in


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["log", "--all"], "comind: log: unrecognized arguments: --all\n"),
        (["-q", "check", "--bogus", "x"], "comind: check: unrecognized arguments: --bogus x\n"),
        (["nope"], "comind: argument COMMAND: invalid choice: 'nope' (choose from "),
        (["log", "--kind", "banana"], "comind: log: argument --kind: invalid choice: 'banana' (choose from "),
    ],
)
def test_a_usage_error_names_comind_once_and_the_command(
    initialised: Path, cli, args: list[str], expected: str
) -> None:  # type: ignore[no-untyped-def]
    result: CliResult = cli(initialised, *args)
    assert result.code == 2 and result.err.startswith(expected) and result.err.count("\n") == 1


def test_dash_c_runs_when_the_folder_it_was_started_in_is_gone(initialised: Path, tmp_path: Path) -> None:
    """`comind -C REPO …` from a folder deleted since (a hook's background refresh can be): as git -C."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
        f"sys.argv = ['comind', '-C', {str(initialised)!r}, 'status']; from comind.cli import main; sys.exit(main())"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "internal error" not in done.stderr, done.stderr


def test_files_named_on_the_command_line_are_read_and_written_in_the_c_folder(  # type: ignore[no-untyped-def]
    initialised: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-C PATH` runs as if started in PATH, as git's does: a plan, a report, an export and an
    import named relative are PATH's, wherever the command was typed; an absolute one is itself."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (initialised / "plan.md").write_text("cache the grants\n", encoding="utf-8")
    assert cli(initialised, "preflight", "--plan", "plan.md").code == 0
    assert cli(initialised, "check", "--no-harvest", "--output", "json=report.json").code == 0
    assert (initialised / "report.json").is_file() and not (elsewhere / "report.json").exists()
    assert cli(initialised, "ledger", "export", "-o", "records.ndjson").code == 0
    assert (initialised / "records.ndjson").is_file()
    assert cli(initialised, "ledger", "import", "records.ndjson").code == 0
    absolute = tmp_path / "abs.json"
    assert cli(initialised, "check", "--no-harvest", "--output", f"json={absolute}").code == 0
    assert absolute.is_file()


def test_show_leaves_a_blank_line_of_the_body_blank(initialised: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A body's paragraphs are indented line by line; a blank line between them stays empty, not
    two spaces of trailing whitespace (a revert message's blank lines showed so)."""
    args = ["--on", "app/perm.py", "--title", "Grants load slowly", "--symptom", "s", "--cause", "c"]
    rid = cli(initialised, "remember", "gotcha", *args, "--body", "First part.\n\nSecond part.").out.strip()
    shown = cli(initialised, "show", rid[-8:]).out
    assert "\n  First part.\n\n  Second part.\n" in shown, shown
    assert not [line for line in shown.splitlines() if line != line.rstrip()], shown


@pytest.mark.parametrize("first_branch", [[], ["-b", "trunk"]])
def test_a_repository_with_no_commit_says_so_not_to_harvest_it(tmp_path: Path, cli, first_branch: list[str]) -> None:  # type: ignore[no-untyped-def]
    """`git init` and nothing more: `check` said "unknown revision 'HEAD'", and `status` after a
    harvest still said nothing was harvested yet, pointing at the harvest just run. So too after
    `git init -b trunk`, a first branch other than the configured one (libgit2's `is_empty` says no)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", *first_branch)
    assert cli(empty, "harvest").code == 0
    for args in (["status"], ["log"]):
        result = cli(empty, *args)
        assert result.code == 0 and "the repository has no commit yet" in result.err, result.err
        assert "comind harvest" not in result.err
    for args, said in (
        (["check"], "comind: unknown revision 'HEAD': the repository has no commit yet\n"),
        (["why", "README.md"], "comind: unknown revision 'HEAD': the repository has no commit yet\n"),
        (["check", "--base", "main"], "comind: --base 'main': unknown revision (the repository has no commit yet)\n"),
    ):
        result = cli(empty, *args)
        assert (result.code, result.err) == (2, said), (args, result.err)


def test_show_says_a_lore_constraint_once_not_again_as_its_body(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A `Constraint:` trailer is the record's title and its body: `show` printed it twice."""
    from gitrepo import GitRepo

    repo = GitRepo(tmp_path)
    repo.write("app/perm.py", "def check(user):\n    return user.admin\n")
    repo.commit("Load grants per request\n\nConstraint: grants are loaded per request, never cached")
    assert cli(repo.path, "harvest").code == 0
    [line] = cli(repo.path, "log", "--kind", "constraint").out.splitlines()
    shown = cli(repo.path, "show", line.split()[0]).out
    assert shown.count("grants are loaded per request, never cached") == 1, shown


def test_a_file_where_the_store_should_be_is_named_by_every_command(repo: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`remember` said `cannot read _ledger/actor-salt: [Errno 20] Not a directory: …` where `status`
    said the store is a file; and a `_ledger` file in a store folder was said to be the folder."""
    (tmp_path / "store-file").write_text("")
    (tmp_path / "store-dir").mkdir()
    (tmp_path / "store-dir" / "_ledger").write_text("")
    for store, blocked in (("store-file", "store-file"), ("store-dir", "store-dir/_ledger")):
        said = f"comind: store '{tmp_path / store}': {tmp_path / blocked} is a file, not a folder\n"
        for args in (["status"], ["remember", "question", "--on", "a.py", "--title", "q", "--question", "why?"]):
            result = cli(repo, "--store", str(tmp_path / store), *args)
            assert (result.code, result.err) == (2, said), (args, result.err)


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("default_branch: ''\n", ".comind.yml: default_branch: must not be empty (got '')"),
        ("repo_name: '  '\n", ".comind.yml: repo_name: must not be empty (got '  ')"),
        ("dead_end_label: ''\n", ".comind.yml: dead_end_label: must not be empty (got '')"),
        ("--repo-name= ", "--repo-name: must not be empty (got ' ')"),
    ],
)
def test_an_empty_name_setting_is_a_one_line_error(cli, tmp_path: Path, where: str, said: str) -> None:  # type: ignore[no-untyped-def]
    """`default_branch: ''` fell back to the guessed branch, `dead_end_label: ''` turned the label off
    and `--repo-name ' '` keyed every harvested record anew, each without a word (the schema says
    these are at least one character)."""
    from gitrepo import GitRepo

    repo = GitRepo(tmp_path)
    repo.write("app.py", "x = 1\n")
    repo.commit("initial")
    flags = [where] if where.startswith("--") else []
    if not flags:
        (repo.path / ".comind.yml").write_text(where)
    result = cli(repo.path, *flags, "harvest")
    assert result.code == 2 and result.err.strip() == f"comind: {said}", result.err
    assert not (repo.path / ".git" / "comind" / "harvest").exists()  # nothing half-written


def test_a_folder_where_the_actor_key_should_be_is_named_in_one_line(repo: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A folder at `_ledger/actor-salt` gave `cannot read _ledger/actor-salt: [Errno 21] Is a
    directory: …`: now one line naming the path and what is wrong, exit 2, nothing written, as a
    file in the way of a folder is said."""
    salt = tmp_path / "store" / "_ledger" / "actor-salt"
    salt.mkdir(parents=True)
    said = (
        f"comind: store '{tmp_path / 'store'}': {salt} is a folder, not a file "
        "(it should hold the key of actor pseudonyms)\n"
    )
    for args in (["remember", "question", "--on", "a.py", "--title", "q", "--question", "why?"], ["harvest"]):
        result = cli(repo, "--store", str(tmp_path / "store"), *args)
        assert (result.code, result.err) == (2, said), (args, result.err)
    assert sorted(p.name for p in (tmp_path / "store").rglob("*")) == ["_ledger", "actor-salt"]
