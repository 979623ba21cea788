"""Revert markers on commits made by real `git revert`, and on the forms git cannot make."""

from __future__ import annotations

from pathlib import Path

import pytest
from harvest_repo import HarvestRepo
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.harvest.markers import RevertMarker, normalise_subject, revert_markers, revert_reason, trailing_pr
from comind.harvest.walker import split_message


def markers_of(message: str) -> list[RevertMarker]:
    subject, body = split_message(message)
    return revert_markers(subject, body)


def message_of(repo: HarvestRepo, sha: str) -> str:
    return repo.git("log", "-1", "--format=%B", sha)


@pytest.fixture
def repo(tmp_path: Path) -> HarvestRepo:
    r = HarvestRepo(tmp_path / "r")
    r.commit("Initial commit\n", {"app.py": "def f():\n    return 1\n"})
    return r


def test_git_revert(repo: HarvestRepo) -> None:
    original = repo.commit("Cache results in memory (#12)\n", {"app.py": "def f():\n    return 2\n"})
    revert = repo.revert(original)
    subject_marker, body_marker = markers_of(message_of(repo, revert))
    assert (subject_marker.kind, subject_marker.quoted_subject, subject_marker.pr, subject_marker.is_reland) == (
        "subject-revert-quoted", "Cache results in memory (#12)", 12, False)
    assert not subject_marker.needs_target
    assert (body_marker.kind, body_marker.sha, body_marker.source, body_marker.indented) == (
        "this-reverts-commit", original, "body", False)
    assert revert_reason(*split_message(message_of(repo, revert))) == ""


def test_revert_of_revert_is_a_reland(repo: HarvestRepo) -> None:
    original = repo.commit("Use a pool\n", {"app.py": "pool = 1\n"})
    revert = repo.revert(original)
    reland = repo.revert(revert)
    message = message_of(repo, reland)
    subject_marker, body_marker = markers_of(message)
    assert subject_marker.kind == "revert-of-revert" and subject_marker.is_reland and subject_marker.depth == 2
    assert subject_marker.quoted_subject == 'Revert "Use a pool"'
    assert body_marker.sha == revert
    again = repo.revert(reland)
    triple = markers_of(message_of(repo, again))[0]
    assert triple.depth == 3 and not triple.is_reland


def test_merge_revert(repo: HarvestRepo) -> None:
    base = repo.head()
    repo.checkout("-b", "feature")
    repo.commit("Add feature\n", {"feature.py": "x = 1\n"})
    repo.checkout("main")
    repo.commit("Main work\n", {"main.py": "y = 1\n"})
    merge = repo.merge("feature", "Merge branch 'feature'")
    revert = repo.revert(merge, "-m", "1")
    message = message_of(repo, revert)
    assert "reversing\nchanges made to" in message
    body_marker = markers_of(message)[1]
    assert body_marker.sha == merge
    assert body_marker.base_sha == repo.git("rev-parse", f"{merge}^1").strip()
    assert body_marker.base_sha != base


def test_revert_reference_form(repo: HarvestRepo) -> None:
    original = repo.commit("Speed up parsing\n", {"app.py": "fast = 1\n"})
    repo.tick += 1
    repo.git("revert", "--reference", "--no-edit", original)
    message = message_of(repo, repo.head())
    body_marker = next(m for m in markers_of(message) if m.source == "body")
    assert body_marker.kind == "this-reverts-commit" and original.startswith(body_marker.sha or "-")
    assert body_marker.quoted_subject == "Speed up parsing"
    # With --reference the author writes the why as the title.
    subject = "Parsing got slower on big inputs"
    reason = revert_reason(subject, split_message(message)[1])
    assert reason == subject


@pytest.mark.parametrize(("message", "expected"), [
    ('Reapply "Use a pool"\n\nThis reverts commit ' + "a" * 40 + ".\n",
     [("revert-of-revert", None, None, True), ("this-reverts-commit", "a" * 40, None, False)]),
    ('Revert^2 "net: fix leak"\n\nThis reverts commit abcdef1234567.\n\nReason for revert: relanding with fix\n',
     [("revert-of-revert", None, None, True), ("this-reverts-commit", "abcdef1234567", None, False)]),
    ('Revert "Add caching"\n\nReverts octo/app#123\n',
     [("subject-revert-quoted", None, None, False), ("github-reverts-pr", None, 123, False)]),
    ("Revert caching (#5)\n\nReverts #42\n",
     [("free-form", None, None, False), ("github-reverts-pr", None, 42, False)]),
    ("revert: use chokidar v3 (#18659)\n", [("conventional-revert", None, None, False)]),
    ("revert(server)!: fix(logger): truncate log (#16581) (#17729)\n", [("conventional-revert", None, 16581, False)]),
    ('docs: revert "docs: remove scrimba link" (#21604)\n', [("subject-revert-quoted", None, None, False)]),
    ("fix: reverts #8278\n", [("subject-revert-ref", None, 8278, False)]),
    ("Revert #12 and #13\n", [("subject-revert-ref", None, 12, False), ("subject-revert-ref", None, 13, False)]),
    ("Revert PR 1440\n", [("subject-revert-ref", None, 1440, False)]),
    ("revert 8e6e47af and c121b98c\n", [("subject-revert-ref", "8e6e47af", None, False),
                                        ("subject-revert-ref", "c121b98c", None, False)]),
    ("Partially revert ab84f9be5740d4649d734e73b84f17f85e52ffc9\n",
     [("subject-revert-ref", "ab84f9be5740d4649d734e73b84f17f85e52ffc9", None, False)]),
    ("Revert fmt\n", [("free-form", None, None, False)]),
    ("Reverting redirect examples\n", [("free-form", None, None, False)]),
    ("net: fix leak\n\nThis reverts CL 12345.\n", [("gerrit-reverts-cl", None, None, False)]),
    ("Revert submission 1234-topic\n\nReverted changes: /q/submissionid:1234-topic\n",
     [("gerrit-revert-submission", None, None, False)]),
    ("Revertible tokens are now supported\n", []),
    ("Fix a doc oversight, and revert 5876a8fd.\n", []),
    ("Add feature\n\n> This reverts commit abcdef1234567.\n", []),
])
def test_forms(message: str, expected: list[tuple[str, str | None, int | None, bool]]) -> None:
    got = [(m.kind, m.sha, m.pr, m.is_reland) for m in markers_of(message)]
    assert got == expected


def test_conventional_and_free_form_need_a_target() -> None:
    (m,) = markers_of("revert: handle nested revert commands in the CLI\n")
    assert m.kind == "conventional-revert" and m.needs_target and m.sha is None and m.pr is None
    (m,) = markers_of("Revert fmt\n")
    assert m.needs_target
    (m,) = markers_of("Revert PR 1440\n")
    assert not m.needs_target


def test_gerrit_cl_and_reason() -> None:
    message = ("Revert \"net: fix leak\"\n\nThis reverts CL 12345.\n\nReason for revert: breaks the\n"
               "arm64 builders.\n\nOriginal change's description:\n> net: fix leak\n>\n> Change-Id: I1\n\n"
               "Change-Id: I2\n")
    subject, body = split_message(message)
    cl = next(m for m in revert_markers(subject, body) if m.kind == "gerrit-reverts-cl")
    assert cl.cl == 12345
    assert revert_reason(subject, body) == "breaks the arm64 builders."


def test_reason_is_the_body_without_boilerplate() -> None:
    message = ('Revert "Add caching"\n\nThis reverts commit ' + "b" * 40 + ".\n\nThe cache served stale\n"
               "sessions after logout.\n\n> quoted review\n\n(cherry picked from commit " + "c" * 40 + ")\n"
               "Signed-off-by: A <a@b>\n")
    assert revert_reason(*split_message(message)) == "The cache served stale sessions after logout."


def test_squash_body_markers_are_indented() -> None:
    message = ("Add feature (#9)\n\n* wip\n\n* Revert \"wip\"\n\n  This reverts commit abcdef1234567.\n")
    (m,) = markers_of(message)
    assert m.kind == "this-reverts-commit" and m.indented


def test_nested_quotes_and_unterminated() -> None:
    (m,) = markers_of('Revert "Revert "Revert "x"""\n')
    assert m.depth == 3 and not m.is_reland and m.quoted_subject == 'Revert "Revert "x""'
    (m,) = markers_of('Revert "a very long subject that was cut\n')
    assert m.kind == "subject-revert-quoted" and m.quoted_subject == "a very long subject that was cut"


@pytest.mark.parametrize(("subject", "normalised"), [
    ('Revert "fix(css): spread options (#14024)"', "spread options"),
    ("revert: fix(logger): truncate log (#16581) (#17729)", "truncate log"),
    ('Reapply "Revert "Use a pool""', "use a pool"),
    ("Revert^2 \"feat!: Use  a\tpool.\"", "use a pool"),
    ("Fix send-tweet CI job (pydantic/pydantic-core#12)", "fix send-tweet ci job"),
    ("net: fix leak", "net: fix leak"),
    ("", ""),
])
def test_normalise_subject(subject: str, normalised: str) -> None:
    assert normalise_subject(subject) == normalised


def test_trailing_pr() -> None:
    assert trailing_pr("fix: thing (#12) (#34)") == 34
    assert trailing_pr("Fix thing (pydantic/pydantic-core#12)") is None
    assert trailing_pr("Fix thing") is None


def test_original_and_conventional_revert_normalise_alike() -> None:
    assert normalise_subject("fix: upgrade esbuild to 0.20.x (#16000)") == normalise_subject(
        'revert: "fix: upgrade esbuild to 0.20.x" (#16072)')


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300), st.text(max_size=600))
def test_fuzz_never_raises(subject: str, body: str) -> None:
    for m in revert_markers(subject, body):
        assert m.kind in {
            "this-reverts-commit", "subject-revert-quoted", "revert-of-revert", "github-reverts-pr",
            "gerrit-reverts-cl", "gerrit-revert-submission", "subject-revert-ref", "conventional-revert", "free-form"}
    revert_reason(subject, body)
    normalise_subject(subject)


@pytest.mark.parametrize("payload", [
    "Revert \"" * 200_000,
    " " * 1_000_000,
    "(" * 1_000_000,
    "This reverts commit " + "a" * 1_000_000,
    "revert #1, " * 100_000,
    "\x00" * 1_000_000,
    "Reverts " + " " * 1_000_000 + "#1",
    ("(#1) " * 200_000),
])
def test_pathological_megabyte_inputs_complete(payload: str) -> None:
    revert_markers(payload, payload)
    revert_reason(payload, payload)
    normalise_subject(payload)
