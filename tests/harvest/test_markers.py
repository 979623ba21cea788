"""Revert markers on commits made by real `git revert`, and on the forms git cannot make."""

from __future__ import annotations

from pathlib import Path

import pytest
from harvest_repo import HarvestRepo
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.harvest.markers import (
    RevertMarker,
    cut_prefix,
    full_subject,
    merge_title,
    normalise_subject,
    reland_key,
    reland_references,
    reland_subject,
    revert_depth,
    revert_markers,
    revert_reason,
    revert_references,
    trailing_pr,
)
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
        "subject-revert-quoted",
        "Cache results in memory (#12)",
        12,
        False,
    )
    assert not subject_marker.needs_target
    assert (body_marker.kind, body_marker.sha, body_marker.source, body_marker.indented) == (
        "this-reverts-commit",
        original,
        "body",
        False,
    )
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


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            'Reapply "Use a pool"\n\nThis reverts commit ' + "a" * 40 + ".\n",
            [("revert-of-revert", None, None, True), ("this-reverts-commit", "a" * 40, None, False)],
        ),
        (
            'Revert^2 "net: fix leak"\n\nThis reverts commit abcdef1234567.\n\nReason for revert: relanding with fix\n',
            [("revert-of-revert", None, None, True), ("this-reverts-commit", "abcdef1234567", None, False)],
        ),
        (
            'Revert "Add caching"\n\nReverts octo/app#123\n',
            [("subject-revert-quoted", None, None, False), ("github-reverts-pr", None, 123, False)],
        ),
        (
            "Revert caching (#5)\n\nReverts #42\n",
            [("free-form", None, None, False), ("github-reverts-pr", None, 42, False)],
        ),
        ("revert: use chokidar v3 (#18659)\n", [("conventional-revert", None, None, False)]),
        (
            "revert(server)!: fix(logger): truncate log (#16581) (#17729)\n",
            [("conventional-revert", None, 16581, False)],
        ),
        ('docs: revert "docs: remove scrimba link" (#21604)\n', [("subject-revert-quoted", None, None, False)]),
        ("fix: reverts #8278\n", [("subject-revert-ref", None, 8278, False)]),
        ("Revert #12 and #13\n", [("subject-revert-ref", None, 12, False), ("subject-revert-ref", None, 13, False)]),
        ("Revert PR 1440\n", [("subject-revert-ref", None, 1440, False)]),
        (
            "revert 8e6e47af and c121b98c\n",
            [("subject-revert-ref", "8e6e47af", None, False), ("subject-revert-ref", "c121b98c", None, False)],
        ),
        (
            "Partially revert ab84f9be5740d4649d734e73b84f17f85e52ffc9\n",
            [("subject-revert-ref", "ab84f9be5740d4649d734e73b84f17f85e52ffc9", None, False)],
        ),
        ("Revert fmt\n", [("free-form", None, None, False)]),
        ("Back out #850 (#1079)\n", [("subject-revert-ref", None, 850, False)]),
        (
            "Backed out changeset 0b5d1d9c4b4f (bug 1234) for causing bustage\n",
            [("subject-revert-ref", "0b5d1d9c4b4f", None, False)],
        ),
        ("Backout 8e6e47af\n", [("subject-revert-ref", "8e6e47af", None, False)]),
        ("Undo #1234\n", [("subject-revert-ref", None, 1234, False)]),
        # a quoted back out, and Phabricator's revisions (`D123`; `d1234567` is a commit)
        ('Back out "[RN] Remove the old bridge"\n', [("subject-revert-quoted", None, None, False)]),
        ("Revert D12345678: Remove the old bridge\n", [("subject-revert-ref", None, None, False)]),
        ("revert d1234567\n", [("subject-revert-ref", "d1234567", None, False)]),
        ("Undo the halloween theme (#8959)\n", []),
        ("Backed out the redis cache (#12)\n", [("free-form", None, None, False)]),
        ("Add a backout plan\n", []),
        ("Checkout the docs\n", []),
        ("Reverting redirect examples\n", [("free-form", None, None, False)]),
        ("net: fix leak\n\nThis reverts CL 12345.\n", [("gerrit-reverts-cl", None, None, False)]),
        ('go/packages: revert "handle invalid files in overlays"\n', [("subject-revert-quoted", None, None, False)]),
        (
            "buildtag: drop the fixer\n\nThis CL reverts commit 517957c, CL 694415, because it reports non-problems.\n",
            [("this-reverts-commit", "517957c", None, False)],
        ),
        (
            "Revert submission 1234-topic\n\nReverted changes: /q/submissionid:1234-topic\n",
            [("gerrit-revert-submission", None, None, False)],
        ),
        ("Revertible tokens are now supported\n", []),
        ("Fix a doc oversight, and revert 5876a8fd.\n", [("inline-revert-ref", "5876a8fd", None, False)]),
        (
            "fix(css): resolve relative paths in sass, revert #20300 (#20349)\n",
            [("inline-revert-ref", None, 20300, False)],
        ),
        ("fix!: avoid rewriting this (reverts #5312) (#14098)\n", [("inline-revert-ref", None, 5312, False)]),
        ("feat: legacy options to revert to v2 strategies (#8623)\n", []),
        ("Add feature\n\n> This reverts commit abcdef1234567.\n", []),
        # an area in brackets before the revert, as a path prefix is
        ("[vim] Revert 7411da8d5a37\n", [("subject-revert-ref", "7411da8d5a37", None, False)]),
        ('[MRG+1] Revert "Add caching"\n', [("subject-revert-quoted", None, None, False)]),
        ("[fish] Partly revert change of 0167691\n", [("subject-revert-ref", "0167691", None, False)]),
        ("Fixes #552 by reverting 3a057b3eff\n", [("inline-revert-ref", "3a057b3eff", None, False)]),
        # a revert told as the cause of what this commit fixes is another commit's
        ("Fix the regression caused by reverting 1234567\n", []),
        ("Fix tests Broken by reverting #12, and revert 89abcde\n", [("inline-revert-ref", "89abcde", None, False)]),
        ("Fixes #1621: Partly reverting #1612\n", [("inline-revert-ref", None, 1612, False)]),
        ("Tidy up\n\nThis partially reverts a2d0e8f.\n", [("this-reverts-commit", "a2d0e8f", None, False)]),
        (
            "Tidy up\n\nThis reverts a couple of changes introduced in 4c78ca8.\n",
            [("this-reverts-commit", "4c78ca8", None, False)],
        ),
        (
            "[ty] Revert the call-gate change\n\nThis reverts #26775 after a finding.\n",
            [("free-form", None, None, False), ("github-reverts-pr", None, 26775, False)],
        ),
        ("Undo it\n\nThis PR partially reverts #12.\n", [("github-reverts-pr", None, 12, False)]),
        ("docs: explain how to revert changes in 1234567\n", []),
        ("Add a way to revert changes by hash\n", []),
    ],
)
def test_forms(message: str, expected: list[tuple[str, str | None, int | None, bool]]) -> None:
    got = [(m.kind, m.sha, m.pr, m.is_reland) for m in markers_of(message)]
    assert got == expected


def test_go_change_numbers_are_references() -> None:
    (m,) = markers_of("cmd/stringer: revert CL 40403\n")
    assert (m.kind, m.cl, m.needs_target) == ("subject-revert-ref", 40403, False)
    (m,) = markers_of("internal/mcp: partial revert of go.dev/cl/731503\n")
    assert (m.kind, m.cl) == ("subject-revert-ref", 731503)


def test_a_prefixed_quoted_revert_keeps_its_prefix_apart() -> None:
    (m,) = markers_of('cmd/go, cmd/link: revert "shrink binaries"\n')
    assert (m.quoted_subject, m.scope) == ("shrink binaries", "cmd/go, cmd/link: ")
    (m,) = markers_of('Revert "shrink binaries"\n')
    assert m.scope is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Reland of #33158, with the flaky test fixed.", [(None, 33158, None)]),
        ("This relands 0fdde844a.\n\nIt was reverted for a test failure.", [("0fdde844a", None, None)]),
        ("Reapply go.dev/cl/731503", [(None, None, 731503)]),
        ("This CL reapplies CL 12345 and https://github.com/o/r/pull/9", [(None, None, 12345)]),
        ("  - Re-applies https://github.com/o/r/pull/9", [(None, 9, None)]),
        ("Brings back commit 1a2e7741c334.", [("1a2e7741c334", None, None)]),
        ("This PR resets the revert made by #16610, bringing back #16383\nwhich fixes --watch.", [(None, 16383, None)]),
        ("Re-attempt at #21284. I was more thorough this time.", [(None, 21284, None)]),
        ("(Second attempt at CL 509560, rolled back in a5e8bb0, because", [(None, None, 509560)]),
        ("(Second attempt at https://go-review.googlesource.com/c/tools/+/411910,", [(None, None, 411910)]),
        ("This is reapplying CL121995 after rolling back the change", [(None, None, 121995)]),
        ("This is another take at #7810 which was reverted because it caused", [(None, 7810, None)]),
        ("(Reopening #2408 after the revert #2414. This fixes parts of #2090)", [(None, 2408, None)]),
        ("Another try at https://github.com/o/r/issues/25464", []),
        ("A second attempt at fixing msys terminal width, see #12.", []),
        ("Relands `module.registerHooks()`", []),
        ("Bring back the old flag; see #12.", []),
        ("We reland it later; see #12.", []),
    ],
)
def test_reland_references(body: str, expected: list[tuple[str | None, int | None, int | None]]) -> None:
    assert reland_references(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("This PR is a reland of #14734 after it was reverted in #16366, except", [(None, 16366, None)]),
        ("It was reverted by 1a2e774f because of a leak.", [("1a2e774f", None, None)]),
        ("which was reverted with go.dev/cl/509560.", [(None, None, 509560)]),
        ("reverted in https://github.com/o/r/pull/77 and", [(None, 77, None)]),
        ("The test was reverted in the end.", []),
        ("un-reverted by #5", []),
        (
            "Relands `module.registerHooks()` support after the full `module.register()` revert in #34077.",
            [(None, 34077, None)],
        ),  # the noun: the revert that #34077 made
        ("Revert #12 and #13 first.", []),  # what to revert, not where it was reverted
        ("Revert of #12", []),
    ],
)
def test_revert_references(body: str, expected: list[tuple[str | None, int | None, int | None]]) -> None:
    assert revert_references(body) == expected


def test_conventional_and_free_form_need_a_target() -> None:
    (m,) = markers_of("revert: handle nested revert commands in the CLI\n")
    assert m.kind == "conventional-revert" and m.needs_target and m.sha is None and m.pr is None
    (m,) = markers_of("Revert fmt\n")
    assert m.needs_target
    (m,) = markers_of("Revert PR 1440\n")
    assert not m.needs_target


def test_gerrit_cl_and_reason() -> None:
    message = (
        'Revert "net: fix leak"\n\nThis reverts CL 12345.\n\nReason for revert: breaks the\n'
        "arm64 builders.\n\nOriginal change's description:\n> net: fix leak\n>\n> Change-Id: I1\n\n"
        "Change-Id: I2\n"
    )
    subject, body = split_message(message)
    cl = next(m for m in revert_markers(subject, body) if m.kind == "gerrit-reverts-cl")
    assert cl.cl == 12345
    assert revert_reason(subject, body) == "breaks the arm64 builders."


ROLLBACK_BODY = (
    "*** Reason for rollback ***\n\nBreaks the nightly tests\n\n*** Original change description ***\n\n"
    "Cache permission checks\n\nMore words.\n\n***\n\nPiperOrigin-RevId: 329731579\n"
)


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Automated rollback of commit " + "a" * 40 + ".", ("subject-revert-ref", "a" * 40, False)),
        ("Rollback of commit 7e6a6cf83f", ("subject-revert-ref", "7e6a6cf83f", False)),
        # a changelist's number names no commit: the change is found by its description
        ("Automated g4 rollback of changelist 130106966.", ("subject-revert-quoted", None, False)),
        ("Automated rollback", ("subject-revert-quoted", None, False)),
        ("*** Reason for rollback ***", ("subject-revert-quoted", None, False)),
        ("Roll forward with fixes and an extra test.", ("revert-of-revert", None, True)),
        ("Automated rollforward", ("revert-of-revert", None, True)),
    ],
)
def test_a_rollback_tool_s_forms(subject: str, expected: tuple[str, str | None, bool]) -> None:
    (m,) = revert_markers(subject, ROLLBACK_BODY)
    assert (m.kind, m.sha, m.is_reland) == expected
    assert m.quoted_subject == "Cache permission checks"
    assert m.is_reland or revert_reason(subject, ROLLBACK_BODY) == "Breaks the nightly tests"


@pytest.mark.parametrize(
    "subject",
    ["Restore scroll position after reload", "Do not force quit Rollup or close stdout (#5004)", "Automated rollback"],
)
def test_a_subject_with_a_rollback_s_letters_still_reads_its_body(subject: str) -> None:
    """A subject holding "oll" (scroll, Rollup, collections) that is no rollback tool's form, or one
    describing nothing, kept its body unread: `This reverts commit x` and `reverts #N` were lost."""
    body = "This reverts commit 1234567abcdef.\n\nreverts #4969, #4983\n"
    assert [(m.kind, m.sha, m.pr) for m in revert_markers(subject, body)] == [
        ("this-reverts-commit", "1234567abcdef", None),
        ("github-reverts-pr", None, 4969),
    ]


def test_a_rollback_tool_s_words_in_other_subjects_are_no_revert() -> None:
    for subject in ("Rollback Patchwork.", "Roll back micromatch (#6661)", "rollback travis to precise dist"):
        assert revert_markers(subject, ROLLBACK_BODY) == []
    # a rollback naming no commit and describing nothing, or a roll forward describing nothing
    assert revert_markers("Automated rollback", "") == revert_markers("Roll forward of 37255a24d9", "") == []
    # rolled forward after the rollback was itself rolled back: the change described innermost
    body = "*** Original change description ***\n\nAutomated rollback of commit 37255a24d9\n\n" + ROLLBACK_BODY
    (m,) = revert_markers("Roll forward of 37255a24d9", body)
    assert m.is_reland and m.quoted_subject == "Cache permission checks"
    # a rollback of a rollback is a reland; of a rollback of a rollback, a revert again
    (m,) = revert_markers("Automated g4 rollback of changelist 70738452.", body)
    assert m.is_reland and m.quoted_subject == "Cache permission checks"
    twice = "*** Original change description ***\n\nAutomated rollback\n\n" + body
    (m,) = revert_markers("Automated g4 rollback of changelist 70738453.", twice)
    assert not m.is_reland and m.quoted_subject == "Cache permission checks"


def test_reason_is_the_body_without_boilerplate() -> None:
    message = (
        'Revert "Add caching"\n\nThis reverts commit ' + "b" * 40 + ".\n\nThe cache served stale\n"
        "sessions after logout.\n\n> quoted review\n\n(cherry picked from commit " + "c" * 40 + ")\n"
        "Signed-off-by: A <a@b>\n"
    )
    assert revert_reason(*split_message(message)) == "The cache served stale sessions after logout."


def test_squash_body_markers_are_indented() -> None:
    message = 'Add feature (#9)\n\n* wip\n\n* Revert "wip"\n\n  This reverts commit abcdef1234567.\n'
    (m,) = markers_of(message)
    assert m.kind == "this-reverts-commit" and m.indented


def test_a_revert_of_a_revert_said_in_words() -> None:
    (m,) = markers_of('Revert "Revert use of `ParamSpec` for `functools.wraps`" (#16942)\n')
    assert m.kind == "revert-of-revert" and m.is_reland and m.depth == 2
    assert m.quoted_subject == "Revert use of `ParamSpec` for `functools.wraps`"
    (m,) = markers_of('Revert "Reverse the list"\n')  # a word that starts like one is not a revert
    assert m.kind == "subject-revert-quoted" and not m.is_reland


def test_nested_quotes_and_unterminated() -> None:
    (m,) = markers_of('Revert "Revert "Revert "x"""\n')
    assert m.depth == 3 and not m.is_reland and m.quoted_subject == 'Revert "Revert "x""'
    (m,) = markers_of('Revert "a very long subject that was cut\n')
    assert m.kind == "subject-revert-quoted" and m.quoted_subject == "a very long subject that was cut"


@pytest.mark.parametrize(
    ("subject", "normalised"),
    [
        ('Revert "fix(css): spread options (#14024)"', "spread options"),
        ("revert: fix(logger): truncate log (#16581) (#17729)", "truncate log"),
        ('Reapply "Revert "Use a pool""', "use a pool"),
        ('Revert^2 "feat!: Use  a\tpool."', "use a pool"),
        ("Fix send-tweet CI job (pydantic/pydantic-core#12)", "fix send-tweet ci job"),
        ("net: fix leak", "net: fix leak"),
        ('Back out "[RN] Remove the old bridge"', "[rn] remove the old bridge"),
        ("", ""),
    ],
)
def test_normalise_subject(subject: str, normalised: str) -> None:
    assert normalise_subject(subject) == normalised


def test_trailing_pr() -> None:
    assert trailing_pr("fix: thing (#12) (#34)") == 34
    assert trailing_pr("Fix thing (pydantic/pydantic-core#12)") is None
    assert trailing_pr("Fix thing") is None


def test_original_and_conventional_revert_normalise_alike() -> None:
    assert normalise_subject("fix: upgrade esbuild to 0.20.x (#16000)") == normalise_subject(
        'revert: "fix: upgrade esbuild to 0.20.x" (#16072)'
    )


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300), st.text(max_size=600))
def test_fuzz_never_raises(subject: str, body: str) -> None:
    for m in revert_markers(subject, body):
        assert m.kind in {
            "this-reverts-commit",
            "subject-revert-quoted",
            "revert-of-revert",
            "github-reverts-pr",
            "gerrit-reverts-cl",
            "gerrit-revert-submission",
            "subject-revert-ref",
            "conventional-revert",
            "free-form",
            "body-revert-quoted",
        }
    revert_reason(subject, body)
    normalise_subject(subject)
    for sha, pr, cl in reland_references(body) + revert_references(body):
        assert sum(x is not None for x in (sha, pr, cl)) == 1


@pytest.mark.parametrize(
    "payload",
    [
        'Revert "' * 200_000,
        " " * 1_000_000,
        "(" * 1_000_000,
        "This reverts commit " + "a" * 1_000_000,
        "revert #1, " * 100_000,
        "\x00" * 1_000_000,
        "Reverts " + " " * 1_000_000 + "#1",
        ("(#1) " * 200_000),
        "a/" * 500_000 + ': revert "x"',
        "Reland of " * 100_000,
        "reverted in " * 100_000,
        # runs of spaces two patterns' neighbouring `[ \t]*` (and a lazy `.*?`) split every way: cubic
        "again " + " " * 1_000_000 + "x",
        "This reverts commit " + " " * 1_000_000 + "(#1",
        "Reapply " + "\t" * 1_000_000 + "x",
        "reland https://" + "review" * 150_000 + " x",
    ],
)
def test_pathological_megabyte_inputs_complete(payload: str) -> None:
    revert_markers(payload, payload)
    reland_references(payload)
    revert_references(payload)
    revert_reason(payload, payload)
    normalise_subject(payload)
    reland_subject(payload)


# -- forms seen on real histories (deno, vite, golang/tools) --------------------------------------


def test_a_title_github_cut_is_made_whole_from_the_body() -> None:
    subject = 'Revert "feat(lsp): "deno/didRefreshDenoConfigurationTree" notificatio… (#26320)'
    body = '…ns (#26215)"\n\nThis reverts commit 06778e4e9b0a856ac39cc01f0813e6076eb150d6 because\nit broke.\n'
    whole, rest = full_subject(subject, body)
    assert whole == 'Revert "feat(lsp): "deno/didRefreshDenoConfigurationTree" notifications (#26215)" (#26320)'
    assert rest.startswith("This reverts commit")
    (quoted, sha) = revert_markers(whole, rest)
    assert quoted.pr == 26215 and not quoted.truncated and sha.sha.startswith("06778e4e")
    assert full_subject("Plain … subject", "…not a continuation? no: the subject ends otherwise") == (
        "Plain … subject",
        "…not a continuation? no: the subject ends otherwise",
    )


def test_a_cut_quoted_subject_is_resolved_by_its_prefix() -> None:
    (m,) = markers_of('Revert "fix(runtime): send ws ping frames from inspector server (#263… (#26513)\n')
    assert m.truncated and m.pr is None  # (#26513) is the revert's own PR, not the target's
    assert cut_prefix(m.quoted_subject) == "send ws ping frames from inspector server"
    (m,) = markers_of('Revert "Revert "feat: something very lo…""\n')
    assert m.is_reland and m.truncated and cut_prefix(m.quoted_subject) == "something very lo"
    assert cut_prefix("feat: short…") is None  # too short to name one subject
    assert cut_prefix("feat: not cut at all") is None


def test_body_revert_lines_count_under_a_revert_subject_only() -> None:
    body = (
        '* Revert "feat(ext/http): stream auto resp body compression (#14325)"\n'
        '* Revert "core: introduce `resource.read_return` (#14331)"\n'
    )
    kinds = [
        (m.kind, m.pr, m.indented) for m in markers_of('Revert various PRs related to "ext/http" (#14339)\n\n' + body)
    ]
    assert kinds == [
        ("free-form", None, False),
        ("body-revert-quoted", 14325, True),
        ("body-revert-quoted", 14331, True),
    ]
    assert markers_of("feat: a squashed PR (#9)\n\n" + body) == []


def test_pr_numbers_and_descriptions_of_loose_reverts() -> None:
    (m,) = markers_of('fix(cli): revert "never type check deno info #6978" (#7199)\n')
    assert m.kind == "subject-revert-quoted" and m.pr == 6978
    (m,) = markers_of('Revert "Fix the crash, fixes #12"\n')
    assert m.pr is None  # an issue, not the reverted PR
    (m,) = markers_of('Revert "Cleanup tunneling connection after #1678"\n')
    assert m.pr is None  # what the change followed, not the change
    (m,) = markers_of("fix: revert only watch .env files in envDir (#12587) (#13217)\n")
    assert (m.kind, m.pr, m.described) == ("free-form", 12587, "only watch .env files in envDir (#12587)")
    (m,) = markers_of("fix: revert resolve nested dependencies #3753 (#4019)\n")
    assert m.pr == 3753
    (m,) = markers_of("Revert realms from deno_core (#16366)\n")
    assert (m.pr, m.described) == (None, "realms from deno_core")
    (m,) = markers_of("fix(deps): revert es-module-lexer to 2.1.0 (#22827)\n")
    assert m.described == "es-module-lexer to 2.1.0"
    (m,) = markers_of("chore: revert to the old way of uploading canary\n")
    assert m.described is None  # a state to go back to, not a change's subject


def test_this_reverts_commit_as_a_url_on_the_next_line() -> None:
    sha = "83426be6eead06c680ae527468aeaf8723543ff2"
    (_, m) = markers_of(
        f'Revert "refactor: x (#20303) (#20370)\n\nThis reverts commit\n'
        f"https://github.com/denoland/deno/commit/{sha}.\n"
    )
    assert m.kind == "this-reverts-commit" and m.sha == sha


def test_backticks_do_not_change_a_subject() -> None:
    assert (
        normalise_subject("perf(http): optimize `ReadableStream`s backed by a resource (#14284)")
        == normalise_subject("perf(http): optimize ReadableStreams backed by a resource")
        == "optimize readablestreams backed by a resource"
    )


def test_revert_depth() -> None:
    assert [
        revert_depth(s)
        for s in (
            "Add x",
            'Revert "Add x"',
            'Reapply "Add x"',
            'Revert "Reapply "Add x""',
            "revert: add x (#3)",
            'Revert^3 "x"',
        )
    ] == [0, 1, 2, 3, 1, 3]


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Reland: Add gamma client (#41)", ("reland", "add gamma client", True)),
        ("fix(ext/http): reland add alpha client (#15)", ("reland", "add alpha client", True)),
        ('Redo "Add alpha client"', ("redo", "add alpha client", True)),
        ("Redo directive parsing", ("redo", "directive parsing", False)),
        # `reapply` names a change when it quotes a subject or names a pull request, commit or CL;
        # otherwise it may just mean doing something again (svelte's "fix: reapply context after …").
        ("chore: reapply #5930 (#8423)", ("reapply", "#5930", True)),
        ("Reapply 1a2b3c4d5e", ("reapply", "1a2b3c4d5e", True)),
        ("reapply go.dev/cl/731503", ("reapply", "go.dev/cl/731503", True)),
        (
            "fix: reapply context after transforming error during SSR (#18099)",
            ("reapply", "context after transforming error during ssr", False),
        ),
        ("re-fix permissions for dial and listen (#2400)", ("re-verb", "fix permissions for dial and listen", False)),
        ("chore(ws): readd autobahn fuzzingclient (#18903)", ("re-add", "add autobahn fuzzingclient", False)),
        (
            'fix(test): re-enable "compile_windows_ext" test (#10131)',
            ("re-enable", 'enable "compile_windows_ext" test', False),
        ),
        (
            "chore(node): bring back changes to ClientRequest.onSocket (#19509)",
            ("bring-back", "changes to clientrequest.onsocket", False),
        ),
        (
            'Add back "Fix teardown error reporting when `--maxfail=1` (#11721)" (#12279)',
            ("add-back", "fix teardown error reporting when --maxfail=1", True),
        ),
        ("Add back button to the settings page", ("add-back", "button to the settings page", False)),
        ("refactor dispatch take 2 (#2533)", ("again", "refactor dispatch", False)),
        (
            "[mypyc] Add LoadLiteral and use tables to store literals, try 2 (#10147)",
            ("again", "[mypyc] add loadliteral and use tables to store literals", False),
        ),
        (
            "share HTTP server between threads (attempt 2) (#6652)",
            ("again", "share http server between threads", False),
        ),
        # an area in brackets before the word, and "recommit" for reapply
        ('[clang] Reland "Fold constants in loops"', ("reland", "fold constants in loops", True)),
        ('Recommit "[clang] Fold constants in loops"', ("reapply", "[clang] fold constants in loops", True)),
        ("Recommit the loop folding without the crash", ("reapply", "the loop folding without the crash", False)),
        ("Fix retry 2", None),
        (
            "imports: create named imports for name/path mismatches (again)",
            ("again", "imports: create named imports for name/path mismatches", False),
        ),
        ("Re-revert the cache", None),
        ("Readme update", None),
        ("Add alpha client", None),
    ],
)
def test_reland_subjects(subject: str, expected: tuple[str, str, bool] | None) -> None:
    found = reland_subject(subject)
    assert (None if found is None else (found[0], reland_key(found[1]), found[2])) == expected


def test_the_words_looked_for_before_the_reland_patterns_miss_nothing_they_match() -> None:
    """`reland_references` and the `x again` form look for a word before running their patterns: the
    patterns match case-insensitively, so the look-up folds as they do (ſ, the Kelvin sign, İ)."""
    from comind.harvest.markers import (
        _AGAIN,
        _RELAND_REF,
        _before_again,
        _references,
        reland_references,
        reland_subject,
    )

    bodies = ["Reland of #33158", "BRİNG BACK #12", "ſecond take at #7810", "Re-attempt at CL 5095", "Nothing #4"]
    for body in bodies:
        assert reland_references(body) == _references(_RELAND_REF, body)
    assert [bool(reland_references(b)) for b in bodies] == [True, True, True, True, False]
    for subject in ("Cache lookups, taKe 2", "Cache lookups agaİn", "Cache lookups, try 3", "Cache lookups"):
        m = _AGAIN.search(subject)
        rest = _before_again(subject[: m.start()]) if m else ""
        expected = ("again", rest, False) if rest else None
        assert reland_subject(subject) == expected
    assert reland_subject("Cache lookups, taKe 2") == ("again", "Cache lookups", False)


@pytest.mark.parametrize(
    ("subject", "body", "title"),
    [
        ("Merge pull request #7 from ada/fix-x", "Fix x\n\nlonger text", "Fix x (#7)"),
        (
            "Auto merge of #4680 - ada:login, r=bob",
            "Credentials for multiple hosts.\n\nmore",
            "Credentials for multiple hosts. (#4680)",
        ),
        (
            "Merge #2633",
            "2633: Remove imports from hir r=ada,bob a=cy\n\n\nCo-authored-by: Cy <c@x.example>",
            "Remove imports from hir (#2633)",
        ),
        ("Merge #41", "41: Second attempt at a=b parsing\n", "Second attempt at a=b parsing (#41)"),
        ("Merge #41 #42", "41: Fix x r=ada a=bob\n42: Fix y r=ada a=cy\n", None),  # a batch: no one request
        ("Merge branch 'fix-x' into 'main'", "Fix x\n\nSee merge request grp/proj!12", "Fix x (!12)"),
        ("Merge branch 'fix-x' into 'main'", "See merge request grp/proj!12", None),  # no title before it
        ("Merge branch 'fix-x' into 'main'", "Fix x", None),  # not GitLab's: no request named
        ("Merge pull request #7 from ada/fix-x", "", None),  # no title in the body
        ("Merge branch 'main' into next", "Conflicts:\n\ta.py", None),
        ("Fix x (#7)", "* Fix x", None),
        ("Merge pull request #7 from ada/fix-x", "Co-authored-by: Bob <bob@corp.example>", None),  # no person
        ("Merge pull request #7 from ada/fix-x", "Fix x for bob@corp.example", "Fix x for <email> (#7)"),
        ("Merge pull request #7 from ada/fix-x", "https://example.com/issues/7", None),
        ("Merge pull request #7 from ada/fix-x", "fix: " + "x" * 200, "fix: " + "x" * 94 + "… (#7)"),
    ],
)
def test_merge_title_reads_the_request_a_forge_merged(subject: str, body: str, title: str | None) -> None:
    assert merge_title(subject, body) == title


@given(st.text(max_size=120), st.text(max_size=300))
def test_merge_title_never_raises(subject: str, body: str) -> None:
    found = merge_title(subject, body)
    assert found is None or "\n" not in found


def test_a_merge_revert_s_wrapped_boilerplate_is_no_reason() -> None:
    """git wraps "This reverts commit X, reversing\\nchanges made to Y." over two lines: neither is why."""
    message = (
        'Revert "Merge pull request #753 from org/bug"\n\nThis reverts commit ' + "a" * 40 + ", reversing\n"
        "changes made to " + "b" * 40 + ".\n"
    )
    assert revert_reason(*split_message(message)) == ""


def test_a_squashed_revert_s_reason_is_its_own_words() -> None:
    """GitHub's squash body lists the revert commit again and rules off the co-authors: only the
    items and paragraphs someone wrote are the reason."""
    message = (
        'Revert "Add QUERY caching (#9027)" (#9097)\n\n* Revert "Add QUERY caching (#9027)"\n\nThis reverts commit '
        + "c" * 40
        + ".\n\n* Also don't cache QUERY for now\n\nWill bring this back later\n\n---------\n\n"
        "Co-authored-by: A <a@example.com>\n"
    )
    assert revert_reason(*split_message(message)) == "* Also don't cache QUERY for now\n\nWill bring this back later"


def test_boilerplate_goes_with_crlf_line_ends_and_a_list_item_that_says_why_stays() -> None:
    crlf = 'Revert "x"\r\n\r\nThis reverts commit ' + "a" * 40 + ", reversing\r\nchanges made to " + "b" * 40 + ".\r\n"
    assert revert_reason(*split_message(crlf)) == ""
    said = 'Squash (#9)\n\n- Revert "Add cache" because it broke login on Safari\n\n* Revert "Add cache" (#12)\n'
    assert revert_reason(*split_message(said)) == '- Revert "Add cache" because it broke login on Safari'


@pytest.mark.parametrize("after", [".", " (#1) (#2)", " [#1]", " (!12)", " (GH-12)"])
def test_an_echoed_revert_subject_with_its_references_is_no_reason(after: str) -> None:
    assert revert_reason("Fix (#9)", f'* Revert "Add cache"{after}\n\nThis reverts commit {"a" * 40}.') == ""


def test_a_squash_s_other_one_line_commits_are_no_reason() -> None:
    """A squash listing a revert commit among its pull request's commits: the other items with
    nothing under them (a changeset, a review fix-up, a co-author) say what else it did, not why."""
    message = (
        "Revert fix: Allow a prefix for builtins (#14863)\n\n"
        '* Revert "fix: Allow a prefix for builtins (#14839)"\n\nThis reverts commit ' + "9" * 40 + ".\n\n"
        "* fix: adjust for feedback\n\n* chore: revert the env change\n\n* Apply suggestions from code review\n\n"
        "Co-authored-by: A <a@example.com>\n\n* chore: changeset\n\n---------\n\nCo-authored-by: B <b@example.com>\n"
    )
    assert revert_reason(*split_message(message)) == ""
    # an item with a body under it stays, and a list someone wrote (no revert commit in it) is kept whole
    kept = 'Rework (#9)\n\n* Revert "Add cache"\n\n* Keep the old parser\n\nThe new one drops empty keys.\n'
    assert revert_reason(*split_message(kept)) == "* Keep the old parser\n\nThe new one drops empty keys."
    written = 'Revert "Add cache"\n\nThis reverts commit ' + "a" * 40 + ".\n\n* it leaks memory\n* it is slow\n"
    assert revert_reason(*split_message(written)) == "* it leaks memory * it is slow"


def test_a_list_written_under_a_line_of_a_squash_s_commit_body_stays_whole() -> None:
    """GitHub joins a squash's commits with blank lines; a list right under a line of text is a
    commit's own words (prometheus: "changes as follows:" kept its last item only, prettier "See:"
    none of its links). A body that is only a list of one-liners is still no reason."""
    this = "This reverts commit " + "a" * 40 + "."
    message = f'Pool (#9)\n\n* Revert "Add cache"\n\n{this}\n\nIt broke:\n* the cold start\n* the nightly build\n'
    assert revert_reason(*split_message(message)) == "It broke: * the cold start * the nightly build"
    message = (
        f'Pool (#9)\n\n* Revert "Add cache"\n\n{this}\n\n* Shrink labels\n\nMemory changes as follows:\n'
        "* 0 to 127 bytes: same\n* 128 to 254: 1 byte less\n"
    )
    assert revert_reason(*split_message(message)) == (
        "* Shrink labels\n\nMemory changes as follows: * 0 to 127 bytes: same * 128 to 254: 1 byte less"
    )
    listed = f'Fix (#9)\n\n* Small refactor\n\n* Import it directly\n* Inline it\n\n* Revert "Add cache"\n\n{this}\n'
    assert revert_reason(*split_message(listed)) == ""


def test_a_long_blank_run_in_a_subject_is_read() -> None:
    # `[ \t]+(?:and|&|by)` was tried from every blank of a run (4 KB of blanks 0.18 s, 16 KB over 2 s);
    # no clock in tests: the run is entered at its start now, and still read whole
    assert revert_markers("a" + " \t" * 2000 + "z revert", "") == []
    (m,) = revert_markers("Fix a" + " " * 4000 + "and revert 1234567", "")
    assert (m.kind, m.sha) == ("inline-revert-ref", "1234567")
