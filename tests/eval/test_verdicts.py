"""`comind eval replay --audit FILE`: a person's verdicts on flags, applied to a real replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_repo import feature, replay, revert, started

from comind.errors import ComindError
from comind.eval.verdicts import parse


def flagged_history(tmp_path: Path) -> tuple[GitRepo, str, str]:
    """Two reverted changes, each brought back under a new title: two false flags by subject."""
    repo = started(tmp_path)
    done = []
    for name, title in (("alpha", "Bring alpha into the client"), ("beta", "Rewrite beta in the client")):
        repo.write(f"app/{name}.py", feature(name))
        revert(repo, repo.commit(f"Add {name} client"))
        repo.write(f"app/{name}.py", feature(name))
        done.append(repo.commit(title))
    return repo, done[0], done[1]


def test_verdicts_clear_only_the_flags_they_name_with_a_reason(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, alpha, beta = flagged_history(tmp_path)
    audit = tmp_path / "audit.yml"
    audit.write_text(
        f"{alpha[:10]}:\n  verdict: re-proposal\n  why: the same client, under a new title\n"
        f"{'0' * 12}:\n  verdict: false\n  why: a commit that is no longer flagged\n"
    )
    data = replay(cli, repo.path, "--audit", str(audit))
    assert (data["relands"], data["false_flags"]) == (0, 2)  # the subject-based figures stay as they are
    a = data["audit"]
    assert (a["flags"], a["re_proposals"], a["judged_false"], a["unaudited"], a["false_flags"]) == (2, 1, 0, 1, 1)
    assert a["false_flags_per_1000"] == round(1000 / data["ordinary_commits"], 3)
    assert a["stale"] == ["0" * 12] and a["ambiguous"] == []
    by_commit = {f["commit"]: f for f in data["flags"]}
    assert by_commit[alpha]["verdict"] == {"verdict": "re-proposal", "why": "the same client, under a new title"}
    assert "verdict" not in by_commit[beta]  # not judged: still a false flag

    audit.write_text(f"{beta}:\n  verdict: false\n  why: judged noise\n")
    text = cli(repo.path, "eval", "replay", "--audit", str(audit))
    assert text.code == 0, text.err
    assert (
        "of 2 flags on ordinary commits, 0 bring a reverted change back, 1 judged false, 1 not judged: "
        "2 false flags" in text.out
    )
    assert "audited: false: judged noise" in text.out


def test_a_bad_audit_file_fails_at_once_with_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = started(tmp_path)
    audit = tmp_path / "audit.yml"
    audit.write_text("abcdef12:\n  verdict: maybe\n  why: unsure\n")
    result = cli(repo.path, "eval", "replay", "--json", "--audit", str(audit))
    assert result.code == 2 and result.out == ""
    assert result.err.strip() == "comind: audit.yml: abcdef12: verdict must be re-proposal or false, not 'maybe'"
    result = cli(repo.path, "eval", "replay", "--audit", str(tmp_path / "missing.yml"))
    assert result.code == 2 and "cannot read the audit file" in result.err and len(result.err.splitlines()) == 1


@pytest.mark.parametrize(
    "text, problem",
    [
        ("- abcdef1\n", "must map commit ids to verdicts"),
        ("HEAD~1:\n  verdict: false\n  why: x\n", "is not a commit id"),
        ("abc12:\n  verdict: false\n  why: x\n", "is not a commit id"),
        ("abcdef12: false\n", "give exactly `verdict` and `why`"),
        ("abcdef12:\n  verdict: false\n", "give exactly `verdict` and `why`"),
        ("abcdef12:\n  verdict: false\n  why: ' '\n", "`why` must say why"),
        ("abcdef12:\n  verdict: false\n  why: x\nabcdef1234:\n  verdict: re-proposal\n  why: y\n", "given twice"),
        ("abcdef12: [\n", "not valid YAML"),
        ("abcdef12:\n  verdict: false\n  why: the reverted #11306 again\n", "line 3: `why` would end at ' #'"),
    ],
)
def test_audit_file_errors_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ComindError, match=problem):
        parse(text)


def test_a_quoted_why_keeps_its_hash() -> None:
    assert (
        parse('abcdef12:\n  verdict: false\n  why: "the reverted #11306 again"\n')["abcdef12"].why
        == "the reverted #11306 again"
    )
    assert parse("abcdef12:\n  verdict: false\n  why: tests#1 pass\n")["abcdef12"].why == "tests#1 pass"  # no comment


def test_commit_ids_are_read_in_any_case() -> None:
    assert set(parse("ABCDEF12:\n  verdict: false\n  why: x\n")) == {"abcdef12"}
    assert parse("") == {} and parse("# nothing judged yet\n") == {}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcdef0123456789 :\n-#'\"[]{}verdictwhyfalsre-pos")), max_size=80))
def test_any_text_is_verdicts_or_one_clear_error(text: str) -> None:
    try:
        out = parse(text)
    except ComindError as exc:
        assert str(exc).startswith("audit file: ") and "\n" not in str(exc)
    else:
        assert all(v.verdict in ("re-proposal", "false") and v.why for v in out.values())


def test_the_audited_report_is_json_that_round_trips(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo, alpha, _ = flagged_history(tmp_path)
    audit = tmp_path / "audit.yml"
    audit.write_text(f'{alpha}:\n  verdict: false\n  why: "quoted: with a colon"\n')
    data = replay(cli, repo.path, "--audit", str(audit))
    assert json.loads(json.dumps(data))["audit"]["judged_false"] == 1


def test_the_audits_kept_with_the_benchmarks_are_valid() -> None:
    from comind.eval.verdicts import load

    files = sorted((Path(__file__).resolve().parents[2] / "benchmarks" / "replay-audit").rglob("*.yml"))
    assert files
    for path in files:
        judged = load(path)
        # a history whose replay raised no flag says so in a comment instead
        assert judged or "No flag to judge" in path.read_text(), path.name
        assert all(len(v.why) > 20 for v in judged.values()), path.name
