"""comind eval on generated histories: relands in every form are flagged, ordinary commits are not,
bare repositories are read without writing, and the harvest coverage counts what it should."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo, cargo_lock
from replay_repo import feature, reland, replay, revert, started, stream

from comind.eval.replay import reland_of


@pytest.fixture
def history(tmp_path: Path) -> dict[str, Any]:
    """Four changes, each reverted, an unrelated stream, then each relanded in another form."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("README.md", "demo\n")
    repo.commit("initial")
    reverts = {}
    for name in ("alpha", "beta", "gamma", "delta"):
        repo.write(f"app/{name}.py", feature(name))
        original = repo.commit(f"Add {name} client")
        reverts[name] = revert(repo, original)
        stream(repo, name)
    relands = {
        "alpha": reland(repo, "alpha", f'Reapply "Add alpha client"\n\nThis reverts commit {reverts["alpha"]}.\n'),
        "beta": reland(repo, "beta", f'Revert "Revert "Add beta client""\n\nThis reverts commit {reverts["beta"]}.\n'),
    }
    stream(repo, "middle")
    relands["gamma"] = reland(repo, "gamma", "Reland: Add gamma client (#41)")
    relands["delta"] = reland(repo, "delta", "Add delta client")
    stream(repo, "late")
    return {"repo": repo, "reverts": reverts, "relands": relands}


def test_every_reland_form_is_flagged_and_nothing_else(cli, history: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    repo: GitRepo = history["repo"]
    data = replay(cli, repo.path)
    for key in (
        "commits_scanned",
        "relands",
        "relands_flagged",
        "recall",
        "false_flags",
        "false_flags_per_1000",
        "flags",
        "missed",
    ):
        assert key in data
    assert data["relands"] == 4
    assert data["relands_by_form"] == {"reapply": 1, "reland": 1, "revert-of-revert": 1, "same-subject": 1}
    assert data["relands_flagged"] == 4 and data["recall"] == 1.0
    assert data["false_flags"] == 0 and data["false_flags_per_1000"] == 0.0
    assert data["missed"] == []
    assert data["commits_scanned"] == data["commits_walked"]  # a linear history: every commit lands
    flagged = {f["commit"]: f for f in data["flags"]}
    assert set(flagged) == set(history["relands"].values())
    gamma = flagged[history["relands"]["gamma"]]
    match = gamma["matches"][0]
    assert (match["matched"], match["total"], match["expected"]) == (8, 8, True)
    assert match["revert"] == history["reverts"]["gamma"]
    assert match["title"] == "Add gamma client"


def test_text_output_lists_flags_with_evidence(cli, history: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    result = cli(history["repo"].path, "eval", "replay")
    assert result.code == 0, result.err
    assert "relands: 4 found, 4 flagged, recall 1.00" in result.out
    assert "false flags: 0 (0.00 per 1,000)" in result.out
    assert f"re-adds 8 of 8 lines of “Add gamma client”, reverted in {history['reverts']['gamma'][:12]}" in result.out


def test_boilerplate_is_not_a_dead_end(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/a.py", "")
    repo.commit("initial")
    boiler = "logger = logging.getLogger(__name__)\nif __name__ == '__main__':\n"
    repo.write("app/a.py", boiler + feature("alpha"))
    original = repo.commit("Add alpha client with logging")
    revert(repo, original)
    repo.write("app/b.py", boiler + "    run_everything_now(sys.argv)\n")
    ordinary = repo.commit("Add a b entry point")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["false_flags"] == 0, data["flags"]
    assert ordinary not in {f["commit"] for f in data["flags"]}


def test_a_merged_branch_lands_once(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reland made on a branch and merged is one landing: the merge, flagged as a reland."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    original = repo.commit("Add alpha client")
    reverted = revert(repo, original)
    repo.branch("redo")
    repo.checkout("redo")
    reland(repo, "alpha", f'Reapply "Add alpha client"\n\nThis reverts commit {reverted}.\n')
    repo.write("docs/alpha.md", "alpha\n")
    repo.commit("Document alpha")
    repo.checkout("main")
    stream(repo, "main")
    merge = repo.merge("redo", "Merge pull request #7 from someone/redo\n\nBring alpha back")
    data = replay(cli, repo.path)
    assert data["merges_scanned"] == 1
    assert data["relands"] == 1 and data["recall"] == 1.0 and data["false_flags"] == 0
    assert data["flags"][0]["commit"] == merge
    assert data["flags"][0]["reland_subject"] == 'Reapply "Add alpha client"'


def test_a_bors_ng_merge_is_read_by_the_request_it_landed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """bors-ng writes `Merge #N` and the request as `N: title r=x a=y` in the body: its title announces."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    original = repo.commit("Add alpha client")
    revert(repo, original)
    repo.branch("redo")
    repo.checkout("redo")
    reland(repo, "alpha", "Add the alpha client with its retries\n")
    repo.checkout("main")
    stream(repo, "main")
    merge = repo.merge("redo", "Merge #9\n\n9: Reland alpha client r=ada a=bob\n\nCo-authored-by: Bob <b@x.example>")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1, data
    assert data["flags"][0]["commit"] == merge
    assert data["flags"][0]["reland_subject"] == "Reland alpha client"


def test_a_reverted_merge_is_named_by_the_request_it_landed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted forge merge tried what its request's title says: a reland naming that title relands it."""
    repo = started(tmp_path)
    repo.branch("alpha")
    repo.checkout("alpha")
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit("Write the client")
    repo.checkout("main")
    stream(repo, "main")
    merge = repo.merge("alpha", "Merge pull request #7 from someone/alpha\n\nAdd alpha client")
    repo.tick()
    repo.git("revert", "--no-edit", "-m", "1", merge)
    repo.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Merge pull request #7 from someone/alpha"\n\nThis reverts commit {merge}.\n',
    )
    stream(repo, "later")
    back = reland(repo, "alpha", 'Reapply "Add alpha client"\n')
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1, data
    assert data["flags"][0]["commit"] == back and data["flags"][0]["expected"], data["flags"]


def test_bare_repository_is_read_without_writing(cli, history: dict[str, Any], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(history["repo"].path), str(bare)], check=True)
    before = sorted(str(p.relative_to(bare)) for p in bare.rglob("*"))
    data = replay(cli, tmp_path, "--repo", str(bare))
    assert (data["relands"], data["relands_flagged"], data["false_flags"]) == (4, 4, 0)
    coverage = cli(tmp_path, "eval", "harvest", "--repo", str(bare), "--json")
    assert coverage.code == 0, coverage.err
    assert sorted(str(p.relative_to(bare)) for p in bare.rglob("*")) == before
    assert not (history["repo"].path / ".git" / "comind").exists()


def test_since_scans_only_later_landings(cli, history: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    repo: GitRepo = history["repo"]
    data = replay(cli, repo.path, "--since", history["relands"]["beta"])
    assert data["relands"] == 2 and data["recall"] == 1.0  # gamma and delta; their attempts come from before
    assert {f["commit"] for f in data["flags"]} == {history["relands"]["gamma"], history["relands"]["delta"]}
    later = int(repo.git("rev-list", "--count", f"{history['relands']['beta']}..HEAD"))
    assert data["commits_scanned"] == later
    for rev in ("no-such-rev", "2020-01"):  # git log's --since takes a date; this one a revision
        bad = cli(repo.path, "eval", "replay", "--since", rev)
        assert (bad.code, bad.out) == (2, "") and bad.err == (
            f"comind: --since '{rev}': not a revision; it takes a commit, branch or tag (e.g. v1.2, HEAD~50), "
            "not a date\n"
        )


def test_a_lower_threshold_is_taken_from_the_settings(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client"))
    half = "".join(feature("alpha").splitlines(keepends=True)[:4])  # half of it, and as much that is new
    repo.write("app/alpha2.py", half + feature("omega").split("def omega_step_2")[0])
    half = repo.commit("Bring back part of alpha")
    assert replay(cli, repo.path)["false_flags"] == 0
    data = replay(cli, repo.path, "--dead-end-threshold", "0.5")
    assert data["dead_end_threshold"] == 0.5 and [f["commit"] for f in data["flags"]] == [half]


@pytest.mark.parametrize(
    ("subject", "form", "relanded"),
    [
        ('Reapply "Add alpha client"', "reapply", "add alpha client"),
        ('Revert "Revert "Add alpha client""', "revert-of-revert", "add alpha client"),
        ('Revert^2 "Add alpha client"', "revert-of-revert", "add alpha client"),
        ('Reland "fix(core): Add alpha client (#12)" (#15)', "reland", "add alpha client"),
        ("Reland: Add alpha client (#15)", "reland", "add alpha client"),
        ("Re-land Add alpha client", "reland", "add alpha client"),
        ("fix(ext/http): reland add alpha client (#15)", "reland", "add alpha client"),
        ('reland: "Add alpha client"', "reland", "add alpha client"),
        ('Redo "Add alpha client"', "redo", "add alpha client"),
        ('fix: restore, "fix: add alpha client (fix: #3) (#12)" (#13)', "restore", "add alpha client"),
        ('Revert "Revert add alpha client"', "revert-of-revert", "revert add alpha client"),
        ("Auto merge of #5874 - japaric:revert-revert-gh5606, r=alexcrichton", "revert-of-revert", ""),
        ("Merge pull request #12 from o/revert-11-revert-9-alpha", "revert-of-revert", ""),
        ("Merge pull request #12 from o/revert-11-alpha", None, None),
        ('Revert "Reapply "Add alpha client""', None, None),
        ('Revert "Add alpha client"', None, None),
        ("Relax the alpha timeout", None, None),
        ("Add alpha client", None, None),
    ],
)
def test_reland_subjects(subject: str, form: str | None, relanded: str | None) -> None:
    found = reland_of(subject)
    assert (found.form if found else None, found.relanded if found else None) == (form, relanded)
    assert found is None or found.named


def test_redo_and_restore_count_only_when_they_name_a_reverted_subject() -> None:
    redo = reland_of("Redo directive parsing")
    assert redo is not None and (redo.form, redo.named) == ("redo", False)
    restore = reland_of("Restore the default timeout")
    assert restore is not None and (restore.form, restore.named) == ("restore", False)


@pytest.mark.parametrize(
    ("subject", "form", "relanded"),
    [
        ("chore(ws): readd Add alpha client (#18903)", "re-add", "add add alpha client"),
        ("re-fix permissions for dial and listen (#2400)", "re-verb", "fix permissions for dial and listen"),
        ("chore: re-enable alpha client", "re-enable", "enable alpha client"),
        ("chore(node): bring back changes to the alpha client (#19509)", "bring-back", "changes to the alpha client"),
        ("Add alpha client again", "again", "add alpha client"),
        ("refactor: Add alpha, take 2 (#2533)", "again", "add alpha"),
    ],
)
def test_words_that_reland_only_what_they_name(subject: str, form: str, relanded: str) -> None:
    found = reland_of(subject)
    assert found is not None and (found.form, found.relanded, found.named) == (form, relanded, False)


def test_relands_in_words_are_flagged_and_retire_their_attempt(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`x, take 2` (x starting one reverted subject) and the same subject after earlier reverted
    landings of it are relands; each is flagged although the harvester retires the attempt at that
    very commit, and a later re-add of the same lines is not flagged again."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Refactor alpha dispatch handling (#10)"))
    stream(repo, "a")
    take2 = reland(repo, "alpha", "Refactor alpha dispatch, take 2 (#20)")
    repo.write("app/beta.py", feature("beta"))
    revert(repo, repo.commit("Share the beta server between tests (#30)"))
    repo.write("app/beta.py", feature("beta"))
    second = repo.commit("Share the beta server between tests (#40)")  # a reland of #30, reverted too
    revert(repo, second)
    stream(repo, "b")
    again = reland(repo, "beta", "Share the beta server between tests (#50)")
    stream(repo, "c")
    repo.rm("app/alpha.py", "app/beta.py")
    repo.commit("Drop alpha and beta")
    repo.write("app/alpha.py", feature("alpha"))
    repo.write("app/beta.py", feature("beta"))
    later = repo.commit("Bring alpha and beta back later")
    data = replay(cli, repo.path)
    assert data["relands_by_form"] == {"again": 1, "same-subject": 2}
    assert data["relands_flagged"] == 3 and data["recall"] == 1.0
    assert {f["commit"] for f in data["flags"]} == {take2, second, again}
    assert later not in {f["commit"] for f in data["flags"]} and data["false_flags"] == 0


# -- eval harvest ------------------------------------------------------------------------------


def test_harvest_coverage_counts_markers_lore_misses_and_prose(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/a.py", "x = 1\n")
    repo.commit("initial")
    repo.write("app/alpha.py", feature("alpha"))
    alpha = repo.commit("Add alpha client")
    alpha_revert = revert(repo, alpha)  # this-reverts-commit + subject-revert-quoted
    repo.write("app/beta.py", feature("beta"))
    repo.commit("Add beta client (#12)")
    repo.write("app/beta.py", "")
    repo.commit('Revert "Add beta client (#12)" (#13)\n\nReverts acme/app#12\n')  # github-reverts-pr
    repo.write("app/gamma.py", feature("gamma"))
    repo.commit("fix: gamma retries")
    repo.write("app/gamma.py", "")
    repo.commit("revert: fix: gamma retries")  # conventional-revert
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit(f'Reapply "Add alpha client"\n\nThis reverts commit {alpha_revert}.\n')
    repo.write("app/delta.py", "y = 2\n")
    unresolved = repo.commit(
        'Revert "Something that never landed here"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n'
    )
    repo.write("app/session.py", "z = 3\n")
    repo.commit(
        "Keep sessions server-side\n\nLore-id: a1b2c3d4\nConstraint: sessions must be revocable\n"
        "Rejected: JWT with short expiry | still leaks roles\n"
    )
    repo.write("app/notes.py", "w = 4\n")
    repo.write("app/co.py", "v = 5\n")
    co = repo.commit("Pair on the parser\n\nCo-authored-by: Ada Lovelace <ada@corp.example>\n\nMore.\n")
    prose = repo.commit(
        "Explain the cache\n\nNote: the cache was wrong here and it took a long\n"
        "time to find because the logs were silent and nobody\nlooked at them for a week or so.\n"
        "More prose follows here to make it a paragraph.\n"
    )
    result = cli(repo.path, "eval", "harvest", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    markers = data["markers"]
    for kind in (
        "this-reverts-commit",
        "subject-revert-quoted",
        "github-reverts-pr",
        "conventional-revert",
        "revert-of-revert",
    ):
        assert markers[kind]["count"] >= 1, kind
        assert markers[kind]["examples"][0].split(" ", 1)[1], kind  # sha and the marker's line
    assert markers["github-reverts-pr"]["examples"][0].endswith("Reverts acme/app#12")
    assert data["lore_keys"]["Constraint"]["count"] == 1
    assert data["lore_keys"]["Rejected"]["examples"][0].endswith("Rejected: JWT with short expiry | still leaks roles")
    assert data["unresolved"]["reverts:unresolved"]["count"] == 1
    assert data["unresolved"]["reverts:unresolved"]["examples"][0].startswith(unresolved[:12])
    assert data["ambiguous"]["count"] == 0
    note = data["trailer_like_not_taken"]["Note"]
    assert note["count"] == 1
    assert note["examples"] == [f"{prose[:12]} Note: the cache was wrong here and it took a long"]
    assert "Constraint" not in data["trailer_like_not_taken"]  # taken by the Lore parser
    assert data["trailer_like_not_taken"]["Co-authored-by"]["examples"] == [
        f"{co[:12]} Co-authored-by: Ada Lovelace <email>"
    ]  # a report may end up in a CI log
    assert data["records"]["attempt"] >= 4
    text = cli(repo.path, "eval", "harvest")
    assert text.code == 0 and "trailer-like lines not taken:" in text.out and "Note: 1" in text.out


def test_a_one_line_attempt_counts_only_in_its_own_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/encoding.py", "def default_encoding(headers):\n    return headers.charset\n")
    repo.commit("initial")
    repo.write("app/encoding.py", "def default_encoding(headers):\n    return 'utf-8'\n")
    revert(repo, repo.commit("Use utf-8 as the default encoding"))
    repo.write("app/other.py", "def guess(text):\n    return 'utf-8'\n")
    elsewhere = repo.commit("Guess text encodings")
    repo.write("app/encoding.py", "def default_encoding(headers):\n    return 'utf-8'\n")
    again = repo.commit("Default to utf-8 after all")
    flagged = [f["commit"] for f in replay(cli, repo.path)["flags"]]
    assert elsewhere not in flagged and flagged == [again]


def test_moved_lines_are_not_re_added(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Lines a change only moves (here: out of a module into a package) re-propose nothing."""
    repo = GitRepo(tmp_path)
    repo.write("app/beta.py", feature("beta"))
    repo.commit("initial")
    repo.write("app/alpha.py", feature("alpha"))
    original = repo.commit("Add alpha client")
    revert(repo, original)
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit("Bring alpha back without saying so")  # flagged: the same lines again
    repo.rm("app/alpha.py")
    repo.write("app/clients/alpha_impl.py", feature("alpha"))
    moved = repo.commit("Move the alpha client into a package")
    data = replay(cli, repo.path)
    assert moved not in {f["commit"] for f in data["flags"]}
    assert data["false_flags"] == 1  # the unannounced re-add, which a person would call a reland


def test_reapplying_a_change_that_was_removed_but_never_reverted_is_no_reland(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit("Add alpha client (#5)")
    repo.rm("app/alpha.py")
    repo.commit("Remove deprecated clients for 3.0 (#6)")  # removed, not reverted
    repo.write("app/alpha.py", feature("alpha"))
    again = repo.commit("chore: reapply #5 (#7)")
    repo.write("app/beta.py", feature("beta"))
    beta = repo.commit("Add beta client (#8)")
    revert(repo, beta)
    repo.write("app/beta.py", feature("beta"))
    beta_again = repo.commit("Reland the beta client work (#9)")  # names it in other words: still a reland
    data = replay(cli, repo.path)
    assert [r["commit"] for r in data["relands_of_nothing_reverted"]] == [again]
    assert data["relands"] == 1 and data["relands_flagged"] == 1 and data["false_flags"] == 0
    assert [f["commit"] for f in data["flags"]] == [beta_again]


def test_squash_merge_bullets_carry_the_subjects_of_what_was_squashed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("add configs to validate_arguments (#10)"))
    stream(repo, "x")
    repo.write("app/alpha.py", feature("alpha"))
    squash = repo.commit("Validate arguments config (#12)\n\n* add configs to validate_arguments\n\n* reformat code\n")
    repo.write("app/beta.py", feature("beta"))
    cycle = repo.commit(
        'Make the timeout work (#13)\n\n* Skip flaky tests\n\n* Revert "Skip flaky tests"\n\n'
        '* Revert "Revert "Skip flaky tests""\n'
    )  # the whole cycle inside one squashed change
    data = replay(cli, repo.path)
    assert [r["commit"] for r in data["relands_skipped"]] == [cycle]
    assert data["relands"] == 1 and data["false_flags"] == 0
    assert data["flags"][0]["commit"] == squash and data["flags"][0]["kind"] == "reland"


def test_harvest_coverage_shows_each_marker_of_a_commit_that_reverts_several(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("app/a.py", "x = 1\n")
    repo.commit("initial")
    shas = []
    for name in ("alpha", "beta"):
        repo.write(f"app/{name}.py", feature(name))
        shas.append(repo.commit(f"Add {name} client"))
    repo.rm("app/alpha.py", "app/beta.py")
    repo.commit("Back out the clients\n\n" + "".join(f"This reverts commit {sha}.\n" for sha in shas))
    result = cli(repo.path, "eval", "harvest", "--json")
    assert result.code == 0, result.err
    marker = json.loads(result.out)["markers"]["this-reverts-commit"]
    assert marker["count"] == 2
    assert [ex.split(" ", 1)[1] for ex in marker["examples"]] == [f"This reverts commit {sha}." for sha in shas]


def test_a_one_word_subject_again_is_no_reland(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    fmt = repo.commit("fmt")
    revert(repo, fmt)
    repo.write("app/beta.py", feature("beta"))
    repo.commit("fmt")  # another formatting pass: the word names no change
    repo.write("app/gamma.py", feature("gamma"))
    gamma = repo.commit("Add gamma client")
    revert(repo, gamma)
    repo.write("app/gamma.py", feature("gamma"))
    again = repo.commit("Add gamma client")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1 and data["false_flags"] == 0
    assert [f["commit"] for f in data["flags"]] == [again]


def test_relands_said_only_in_the_body_are_positives(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # golang/tools' "gopls/internal/settings: use gopls import source" / "This reverts CL 682715" form.
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    alpha = repo.commit("Add alpha client")
    stream(repo, "early")
    undone = revert(repo, alpha)
    stream(repo, "middle")
    repo.write("app/alpha.py", feature("alpha"))
    again = repo.commit(f"Use the alpha client\n\nThis reverts commit {undone}. Second attempt.\n")
    repo.write("app/beta.py", feature("beta"))
    beta = repo.commit("Add beta client (#7)")
    revert(repo, beta)
    stream(repo, "late")
    repo.write("app/beta.py", feature("beta"))
    by_reference = repo.commit("Use the beta client everywhere\n\nReland of #7, with the timeout fixed.\n")
    data = replay(cli, repo.path)
    assert data["relands_by_form"] == {"in-body": 2}
    assert data["relands_flagged"] == 2 and data["false_flags"] == 0
    assert [f["commit"] for f in data["flags"]] == [again, by_reference]
    # the subject-only reading counts them as ordinary commits, flagged: false flags
    assert data["by_subject"] == {
        "relands": 0,
        "relands_flagged": 0,
        "recall": None,
        "false_flags": 2,
        "false_flags_per_1000": round(2000 / (data["ordinary_commits"] + 2), 3),
    }
    text = cli(repo.path, "eval", "replay").out
    assert "by subject alone (relands said in the body only count as ordinary): 0 relands, recall -, 2 false" in text


@pytest.mark.parametrize("then", ["undone in the run", "kept in the run", "undone a minute later"])
def test_commits_landed_in_one_run_are_one_change(cli, tmp_path: Path, then: str) -> None:  # type: ignore[no-untyped-def]
    """mypy's typeshed syncs: a vendored copy brings back what was reverted, and the next commit of
    the same rebase-and-merge (one committer, one second) reverts it again. A merge request saw the
    two as one change that re-adds nothing; pushed a minute apart, the sync alone re-adds it."""
    repo = started(tmp_path)
    repo.write("vendor/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Use the alpha client"))
    stream(repo, "between")
    repo.write("vendor/alpha.py", feature("alpha"))
    sync = repo.commit("Sync vendored code")
    same_second = None if then == "undone a minute later" else repo.git("log", "-1", "--format=@%ct +0000").strip()
    if then == "kept in the run":
        repo.write("vendor/other.py", "OTHER = 1\n")
    else:
        repo.rm("vendor/alpha.py")
    last = repo.commit("Follow-up", date=same_second)
    data = replay(cli, repo.path)
    flags = {f["commit"]: f for f in data["flags"]}
    if then == "undone in the run":
        assert flags == {} and data["commits_scanned"] == data["commits_walked"] - 1
    elif then == "kept in the run":
        assert list(flags) == [last] and flags[last]["landed_with"] == [sync]
    else:
        assert list(flags) == [sync] and "landed_with" not in flags[sync]


def redone_on_a_branch(repo: GitRepo, branch: str) -> None:
    """`Add alpha client (#5)` landed and reverted on main; `branch`, forked before, checked out with
    the alpha client written again (to commit)."""
    repo.branch(branch)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    repo.checkout(branch)
    repo.write("app/alpha.py", feature("alpha"))


def test_near_misses_list_every_pair_sharing_lines_flagged_or_not(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COMIND_DEAD_ENDS", "D14.names=0")  # by lines only: it keeps alpha's names
    repo = started(tmp_path / "r")
    head = "ALPHA_NAME = configured_name('alpha')\n"  # (a file created again alone would be a match by files)
    repo.write("app/alpha.py", head)
    repo.commit("Name the alpha client")
    repo.write("app/alpha.py", head + feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    lines = feature("alpha").splitlines(keepends=True)
    repo.write("app/alpha.py", head + "".join(lines[:3]) + feature("beta"))  # 3 of its 8 lines, among 11: no match
    near = repo.commit("Start an alpha client")
    repo.write("app/alpha.py", head + feature("alpha"))
    flagged = repo.commit("Alpha client, complete")
    out = tmp_path / "near.jsonl"
    data = replay(cli, repo.path, "--near-misses", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["commit"], r["kind"], r["matched"], r["total"]) for r in rows] == [
        (near, None, 3, 8),
        (flagged, "lines", 5, 8),
    ]  # 5: the three it had are no longer re-added
    assert [f["commit"] for f in data["flags"]] == [flagged]
    bad = cli(repo.path, "eval", "replay", "--near-misses", str(tmp_path / "no" / "such" / "near.jsonl"))
    assert bad.code == 2 and "cannot write" in bad.err and len(bad.err.strip().splitlines()) == 1


def test_a_backport_and_its_revert_merged_together_announce_no_reland(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """aiohttp's `Merge branch '3.9'`: the release branch carries a backport of a change reverted on
    main, and the backport's own revert. The merge brings neither: it relands nothing."""
    repo = started(tmp_path)
    redone_on_a_branch(repo, "3.9")
    revert(repo, repo.commit("Add alpha client (#5)"))
    repo.checkout("main")
    repo.merge("3.9", "Merge branch '3.9'")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["missed"] == [] and data["false_flags"] == 0


def test_a_merge_that_does_not_bring_its_side_commits_reland_is_no_positive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """aiohttp's `Merge CHANGES from 3.8.0/3.8.1 releases`: the release branch redid a bump reverted on
    master, by the same subject; the merge brought only the changelog."""
    repo = started(tmp_path)
    redone_on_a_branch(repo, "3.8")
    redo = repo.commit("Add alpha client (#5)")
    repo.write("CHANGES.rst", "3.8.1: the alpha client\n")
    repo.commit("Release 3.8.1")
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "--no-commit", "3.8")
    repo.git("rm", "-q", "-f", "app/alpha.py")  # master keeps its revert: only CHANGES comes in
    repo.git("commit", "-q", "-m", "Merge CHANGES from 3.8.0/3.8.1 releases")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["missed"] == [] and data["false_flags"] == 0
    (skipped,) = data["relands_skipped"]
    assert f"does not bring {redo[:10]}" in skipped["note"]


def test_a_merge_whose_side_reland_the_branch_already_had_is_no_positive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """flask's `Merge branch '2.2.x'`: the release branch relands docs reverted there (`Reverts commit
    4d69165`), but main had already written them again (`new run debug docs`, flagged). The merge
    touches a file of the same name for another line: it relands nothing the tree lacked."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    repo.branch("2.2.x")
    repo.checkout("2.2.x")
    repo.write("app/alpha.py", feature("alpha"))
    undone = repo.git("rev-parse", "HEAD~6").strip()  # the revert, before the stream
    reland = repo.commit(f"Show the alpha client again\n\nThis reverts commit {undone}.")
    repo.checkout("main")
    repo.write("app/alpha.py", feature("alpha"))
    redo = repo.commit("New alpha client")
    repo.checkout("2.2.x")
    repo.write("tools/alpha.py", "ALPHA_TIMEOUT = configured_timeout('alpha')\n")  # a file of the same name
    repo.commit("Alpha timeout")
    repo.checkout("main")
    repo.merge("2.2.x", "Merge branch '2.2.x'")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["missed"] == []
    (skipped,) = data["relands_skipped"]
    assert skipped["commit"] != reland and "the tree had 100% of what it relands already" in skipped["note"]
    assert [f["commit"] for f in data["flags"]] == [redo]  # the reland main made, under its own title


def test_a_reland_by_subject_of_what_the_tree_has_again_is_no_positive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A change brought back under a title of its own (flagged), then a commit titled like the
    reverted one that only tunes it: the second is no reland, the tree had the change already."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    repo.write("app/alpha.py", feature("alpha"))
    redo = repo.commit("New alpha client")
    stream(repo, "more")
    repo.write("app/alpha.py", feature("alpha") + "ALPHA_TIMEOUT = configured_timeout('alpha')\n")
    repo.commit("Add alpha client (#7)")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and [f["commit"] for f in data["flags"]] == [redo]
    assert "the tree had 100% of what it relands already" in data["relands_skipped"][0]["note"]


def test_a_merge_bringing_its_side_reland_rewritten_is_still_a_reland(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """cargo's `Auto merge of #4680`: the pull request's first commit relands a reverted change, later
    ones rewrite much of it. The merge brings few of the reland commit's lines as written, and
    still brings the reland: the branch did not have them (it was a miss, 29 of 187 lines; and
    poetry's `Merge pull request #2706`, flagged, would have been lost)."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    undo = revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    repo.branch("login")
    repo.checkout("login")
    repo.git("revert", "--no-edit", undo)  # Revert "Revert "Add alpha client (#5)""
    repo.write("app/alpha.py", feature("alpha").replace("session.post", "session.put").replace("payload", "body"))
    repo.commit("Use PUT for the alpha client")
    repo.checkout("main")
    merge = repo.merge("login", "Merge pull request #9 from someone/login")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_skipped"] == []
    assert [f["commit"] for f in data["flags"]] == [merge]  # it creates the attempt's one file again


def test_a_merge_relanding_what_its_own_branch_reverted_is_checked(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A branch lands a change, reverts it and relands it rewritten; the merge carries all three. A
    check of the branch harvests its own commits first, so it sees the revert: the merge is a reland
    a check could see, and the matcher flags it. A merge of a change and its revert only is no reland
    and no flag; one that reverts a change of its base and relands it brings nothing back."""
    repo = started(tmp_path)
    stream(repo, "main")
    repo.branch("pool")
    repo.checkout("pool")
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client"))
    repo.write("app/alpha.py", feature("alpha").replace("payload", "body"))
    repo.commit('Reapply "Add alpha client"')
    repo.checkout("main")
    merge = repo.merge("pool", "Merge branch 'pool'")
    stream(repo, "more")
    repo.branch("beta")
    repo.checkout("beta")
    repo.write("app/beta.py", feature("beta"))
    revert(repo, repo.commit("Add beta client"))
    repo.checkout("main")
    repo.merge("beta", "Merge branch 'beta'")
    repo.write("app/gamma.py", feature("gamma"))
    gamma = repo.commit("Add gamma client")
    stream(repo, "late")
    repo.branch("gamma")
    repo.checkout("gamma")
    undo = revert(repo, gamma)
    repo.git("revert", "--no-edit", undo)  # a change of the base, reverted and relanded: nothing comes back
    repo.checkout("main")
    repo.merge("gamma", "Merge branch 'gamma'")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and [f["commit"] for f in data["flags"]] == [merge] and data["missed"] == []
    (skipped,) = data["relands_skipped"]
    assert "of a commit the base had: nothing is brought back" in skipped["note"]


def test_a_reland_before_its_revert_reached_the_branch_is_no_positive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """poetry: `master` lands a fix and reverts it; `develop` redoes the fix by the same subject, and
    only later merges `master` in. Its checks never saw the attempt before the redo."""
    repo = started(tmp_path)
    repo.branch("master")
    repo.checkout("master")
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Fix transitive extras being removed"))
    repo.checkout("main")
    stream(repo, "develop")
    repo.write("app/alpha.py", feature("alpha"))
    redo = repo.commit("Fix transitive extras being removed")
    repo.merge("master", "Merge branch 'master' into develop")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["missed"] == []
    (skipped,) = data["relands_skipped"]
    assert skipped["commit"] == redo and "landed later, from another branch" in skipped["note"]


def test_a_revert_revert_branch_counts_only_as_the_landing_merge(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """cargo's `Auto merge of #5874 - japaric:revert-revert-gh5606` relands; a merge of such a branch
    inside another merged history (cargo importing rustfix's) names nothing here."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client"))
    stream(repo, "early")
    repo.branch("revert-revert-alpha")
    repo.checkout("revert-revert-alpha")
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit("Use the alpha client")
    repo.checkout("main")
    merge = repo.merge("revert-revert-alpha", "Auto merge of #9 - o:revert-revert-alpha, r=x")
    repo.branch("imported")
    repo.checkout("imported")
    repo.write("lib/beta.py", feature("beta"))
    repo.commit("Add beta")
    repo.branch("revert-revert-beta")
    repo.checkout("revert-revert-beta")
    repo.write("lib/gamma.py", feature("gamma"))
    repo.commit("Add gamma")
    repo.checkout("imported")
    repo.merge("revert-revert-beta", "Merge pull request #3 from o/revert-revert-beta")
    repo.checkout("main")
    repo.merge("imported", "Merge the imported library")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1 and data["missed"] == []
    assert [f["commit"] for f in data["flags"]] == [merge]


def test_a_dependency_move_made_again_is_flagged_as_check_flags_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """astral-sh/ruff: `Update Rust crate clap to v4.5.35` (Cargo.lock only, no informative line)
    reverted, then the same subject again: `comind check` flags the move back into 4.5.35, and so
    does the replay; a later bump of another crate is not flagged."""
    repo = started(tmp_path)
    repo.write("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nclap = "4.5"\n')
    repo.write("Cargo.lock", cargo_lock(clap="4.5.34", anyhow="1.0.1"))
    repo.commit("Add the crate")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.35", anyhow="1.0.1"))
    revert(repo, repo.commit("Update Rust crate clap to v4.5.35 (#17245)"))
    stream(repo, "middle")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.34", anyhow="1.0.2"))
    other = repo.commit("Update Rust crate anyhow to v1.0.2 (#17250)")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.35", anyhow="1.0.2"))
    again = repo.commit("Update Rust crate clap to v4.5.35 (#17273)")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1 and data["false_flags"] == 0
    (flag,) = data["flags"]
    assert flag["commit"] == again and flag["matches"][0]["how"] == "dependency"
    assert flag["matches"][0]["moved"] == "clap 4.5.34 -> 4.5.35" and other != again
    text = cli(repo.path, "eval", "replay").out
    assert "moves clap 4.5.34 -> 4.5.35, the dependency move of “Update Rust crate clap to v4.5.35" in text


def test_a_major_moved_again_at_one_of_its_releases_is_flagged_as_check_flags_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A reverted bump of an action to `@v6`, made again pinned by commit at `# v6.0.8`: `=6` holds
    6.0.8, so the replay reads the patch and flags it, as `comind check` does."""
    workflow = "jobs:\n  ci:\n    steps:\n      - uses: pnpm/action-setup@{}\n      - run: pnpm test\n"
    repo = started(tmp_path)
    repo.write(".github/workflows/ci.yml", workflow.format("v5"))
    repo.commit("Add CI")
    repo.write(".github/workflows/ci.yml", workflow.format("v6"))
    revert(repo, repo.commit("Update pnpm/action-setup action to v6 (#1)"))
    stream(repo, "middle")
    repo.write(".github/workflows/lint.yml", workflow.format("0e279bb959325dab635dd2c09392533439d90093 # v6.0.8"))
    again = repo.commit("Update pnpm/action-setup action to v6 (#2)")  # in another workflow: no line comes back
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1
    (flag,) = data["flags"]
    assert flag["commit"] == again and flag["matches"][0]["moved"] == "pnpm/action-setup 5 -> 6.0.8"


def test_a_major_moved_again_in_a_version_file_is_flagged_as_check_flags_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`.nvmrc`'s `20`, a major written with no dot: the replay reads the patch, as check flags it."""
    repo = started(tmp_path)
    repo.write(".nvmrc", "18\n")
    repo.commit("Pin Node")
    repo.write(".nvmrc", "20\n")
    revert(repo, repo.commit("Move to Node 20 (#1)"))
    stream(repo, "middle")
    repo.write(".tool-versions", "nodejs 20\n")
    again = repo.commit("Use asdf's Node 20 (#2)")
    data = replay(cli, repo.path)
    (flag,) = data["flags"]
    assert flag["commit"] == again and flag["matches"][0]["moved"] == "node 18 -> 20"


def test_an_older_toolchain_showing_through_is_no_move(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A workflow's `node-version: 22` turned into an expression: the newest literal Node is now
    another, untouched workflow's 20. The change wrote no 20: no move into a reverted `=20`."""
    workflow = (
        "jobs:\n  {0}:\n    steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: {1}\n"
    )
    repo = started(tmp_path)
    repo.write(".nvmrc", "18\n")
    repo.commit("Pin Node")
    repo.write(".nvmrc", "20\n")
    revert(repo, repo.commit("Move to Node 20 (#1)"))
    stream(repo, "middle")
    repo.write(".github/workflows/ci.yml", workflow.format("ci", "22"))
    repo.write(".github/workflows/lint.yml", workflow.format("lint", "20"))
    repo.commit("Add CI on Node 22, lint on 20")
    repo.write(".github/workflows/ci.yml", workflow.format("ci", "${{ inputs.node || '22' }}"))
    repo.commit("Make CI reusable")
    data = replay(cli, repo.path)
    assert data["flags"] == []


def test_a_reland_of_what_was_relanded_already_is_no_positive(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """mypy's `sync typeshed again` long after a sync was reverted and redone: nothing is reverted then."""
    repo = started(tmp_path)
    repo.write("vendor/types.py", feature("alpha"))
    revert(repo, repo.commit("Sync typeshed"))
    repo.write("vendor/types.py", feature("alpha"))
    redo = repo.commit('Reapply "Sync typeshed"')
    stream(repo, "between")
    repo.write("vendor/types.py", feature("beta"))
    again = repo.commit("Sync typeshed again")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["recall"] == 1.0 and data["missed"] == []
    assert [r["commit"] for r in data["relands_skipped"]] == [again] and redo != again


def test_text_output_tells_a_revert_naming_no_commit_by_the_revert(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """flask's `revert run debug docs` names no commit: the flag says which change the revert took
    out, not "“revert run debug docs”, reverted in 4d69165", which reads as if the revert was reverted."""
    repo = GitRepo(tmp_path)
    docs = "".join(f"Run the debug server with option number {i} enabled\n" for i in range(8))
    repo.write("docs/cli.rst", "Command line\n" + docs)
    repo.commit("initial")
    repo.write("docs/cli.rst", "Command line\n")
    revert = repo.commit("revert run debug docs")
    repo.write("docs/cli.rst", "Command line\n" + docs)
    repo.commit("new run debug docs")
    result = cli(repo.path, "eval", "replay")
    assert result.code == 0, result.err
    assert f"re-adds 8 of 8 lines of what {revert[:12]} “revert run debug docs” took out" in result.out


def test_the_first_landing_to_carry_a_reverted_subject_again_is_the_reland(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """astro: `Unflag hybrid output (#7260)` relanded the reverted `feat(hybrid): unflag hybrid output`;
    years later a merge imported a history holding that pull request's first commit, older than the
    reland and titled as the reverted change. The reland is the landing that carried the subject first,
    not the commit written first."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("feat(alpha): add alpha client (#5)"))
    repo.branch("imported")
    repo.checkout("imported")
    repo.write("app/alpha.py", feature("alpha"))
    repo.commit("feat(alpha): add alpha client")  # written first, landed last
    repo.checkout("main")
    stream(repo, "main")
    repo.write("app/alpha.py", feature("alpha"))
    first = repo.commit("Add alpha client (#7)")
    stream(repo, "more")
    repo.merge("imported", "Merge pull request #9 from someone/imported")
    data = replay(cli, repo.path)
    assert data["relands"] == 1 and data["relands_flagged"] == 1 and data["missed"] == []
    assert [(f["commit"], f["kind"]) for f in data["flags"]] == [(first, "reland")]


def test_a_merged_copy_of_a_commit_the_branch_has_announces_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """astro's `move-netlify` merge imported the adapter's history, split off with astro's own past: copies
    of astro's commits (same author, author time and subject), each keeping only the adapter's part,
    one naming a revert that astro's own commit had not named. A copy lands nothing new: it announces
    no reland (it was counted as one, and missed, since main had reworked what it names meanwhile)."""
    repo = started(tmp_path)
    repo.write("app/alpha.py", feature("alpha"))
    undo = revert(repo, repo.commit("Add alpha client (#5)"))
    repo.branch("imported")
    stream(repo, "main")
    adapter = "NETLIFY_TIMEOUT = configured_timeout('netlify')\n"
    repo.write("app/alpha.py", feature("alpha"))
    repo.write("adapter/netlify.py", adapter)
    when = "@1700000000 +0000"
    original = repo.commit("New alpha client (#7)", date=when)
    repo.write("app/alpha.py", feature("alpha").replace("session.post", "session.put").replace("payload", "body"))
    repo.commit("Use PUT for the alpha client")
    repo.checkout("imported")
    repo.write("adapter/netlify.py", adapter)  # the adapter's part of the commit, its message rewritten
    repo.commit(f"New alpha client (#7)\n\nThis reverts commit {undo}.\n", date=when)
    repo.write("adapter/edge/netlify.py", "NETLIFY_EDGE = configured_edge('netlify')\n")
    repo.commit("Netlify edge functions")
    repo.checkout("main")
    repo.merge("imported", "Merge pull request #13 from someone/move-netlify")
    data = replay(cli, repo.path)
    assert data["relands"] == 0 and data["missed"] == [] and data["relands_skipped"] == []
    assert [f["commit"] for f in data["flags"]] == [original]  # the change made again, under its own title


def test_a_one_line_edit_made_again_alone_is_flagged(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pnpm's `ci: test on Node.js 17` and setuptools' `blank_issues_enabled: false`: attempts with no
    informative line, relanded by the same edit alone. The replay finds them as check does; the
    same line inside an ordinary change is no flag."""
    ci = "jobs:\n  test:\n    strategy:\n      matrix:\n        node:\n          - '16'\n"
    repo = started(tmp_path)
    repo.write(".github/workflows/ci.yml", ci)
    repo.commit("CI")
    repo.write(".github/workflows/ci.yml", ci + "          - '17'\n")
    revert(repo, repo.commit("ci: test on Node.js 17"))
    stream(repo, "main")
    repo.write(".github/workflows/ci.yml", ci + "          - '17'\n")
    reland = repo.commit('Reapply "ci: test on Node.js 17"')
    stream(repo, "late")
    repo.write(".github/workflows/ci.yml", ci + "          - '17'\n          - '18'\n")
    repo.commit("ci: test on Node.js 18")
    data = replay(cli, repo.path)
    assert (data["relands"], data["relands_flagged"], data["false_flags"]) == (1, 1, 0)
    [flag] = data["flags"]
    assert flag["commit"] == reland and [m["how"] for m in flag["matches"]] == ["edit"]


_CASES = "".join(
    f"    response = client.post('/alpha/run/{i}', json=payload)\n"
    f"    assert response.json()['state_{i}'] == expected_state\n"
    for i in range(6)
)
_FIRST = f"def test_alpha_runs(client, payload, expected_state):\n{_CASES}"
_SECOND = f"{_FIRST}\n\ndef test_alpha_retries(client, payload, expected_state):\n{_CASES}"


def test_an_exact_reapply_is_a_positive_whatever_the_tree_held(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Rule E6: a test written like the one beside it, reverted, then re-applied as it was. The tree
    before the reapply holds 92% of its lines (the other test's), which E5 alone reads as "the
    tree had it already"; the reapply re-adds every informative line of the attempt: a positive."""
    repo = started(tmp_path)
    repo.write("tests/test_alpha.py", _FIRST)
    repo.commit("Test the alpha runs")
    stream(repo, "a")
    repo.write("tests/test_alpha.py", _SECOND)
    revert(repo, repo.commit("Retry alpha runs (#5)"))
    stream(repo, "b")
    repo.write("tests/test_alpha.py", _SECOND)
    again = repo.commit('Reapply "Retry alpha runs (#5)"')
    data = replay(cli, repo.path)
    assert data["relands_skipped"] == [] and data["relands"] == 1 and data["relands_flagged"] == 1
    assert [f["commit"] for f in data["flags"]] == [again]


def test_with_d14_on_a_reland_rewritten_line_by_line_is_caught_by_its_names(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The prefilter finds it by names alone (no line of the attempt comes back as it was)."""
    repo = started(tmp_path)
    head = "ALPHA_NAME = configured_name('alpha')\n"  # (a file created again alone would be a match by files)
    repo.write("app/alpha.py", head)
    repo.commit("Name the alpha client")
    repo.write("app/alpha.py", head + feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    rewritten = "".join(
        f"def alpha_step_{i}(client, body):\n    return client.put(f'/alpha/{i}', body)\n" for i in range(4)
    )
    repo.write("app/alpha.py", head + rewritten)
    again = repo.commit("Alpha client over PUT")
    assert replay(cli, repo.path)["flags"] == []  # D14 is off by default: no line is the attempt's
    monkeypatch.setenv("COMIND_DEAD_ENDS", "D14.names=3")
    [flag] = replay(cli, repo.path)["flags"]
    assert flag["commit"] == again and [m["rule"] for m in flag["matches"]] == ["D14"]
    assert flag["matches"][0]["matched"] == 0


def test_a_blob_the_clone_lacks_stops_git_at_one_commit_only(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A mirror without its largest blobs: `git log -p` dies at the first commit that needs one. The
    stream goes on from that commit's parent; libgit2 is left the one commit git could not show."""
    repo = started(tmp_path)
    stream(repo, "early")
    repo.write("assets/big.bin", "a large generated file\n" * 50)
    repo.commit("Add the large file")
    blob = repo.git("rev-parse", "HEAD:assets/big.bin").strip()
    stream(repo, "late")
    repo.write("app/alpha.py", feature("alpha"))
    revert(repo, repo.commit("Add alpha client (#5)"))
    stream(repo, "main")
    again = reland(repo, "alpha", "Reland alpha client (#5)")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # (loose: `started` repos are not packed)
    data = replay(cli, repo.path)
    ordinary = data["commits_scanned"] - 1
    assert data["patches_read_with"] == f"git log: {ordinary}, libgit2: 1"
    assert data["relands_flagged"] == 1 and [f["commit"] for f in data["flags"]] == [again]
