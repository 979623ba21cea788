"""Budgets against flooding in the git harvest (issue 24, item 7): one commit makes at most
`records_per_commit` records; what is over is counted and reported, not written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gitrepo import GitRepo


@pytest.mark.slow
def test_one_commit_with_10000_rejected_lines_makes_at_most_the_budget(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    gr = GitRepo(tmp_path)
    gr.write("app/main.py", "def main():\n    return 0\n")
    gr.commit("initial")
    gr.write("app/main.py", "def main():\n    return 1\n")
    rejected = "\n".join(f"Rejected: option {n} | it fails case {n}" for n in range(10_000))
    message = tmp_path / "message.txt"
    message.write_text("Return one\n\n" + rejected + "\n")
    gr.git("add", "-A")
    gr.git("commit", "-q", "-F", str(message))
    result = cli(gr.path, "harvest")
    assert result.code == 0, result.err
    assert "; 100 new records; " in result.out
    over = int(result.out.split("; ")[-1].split()[0])
    assert (
        over >= 9_900
        and f"{over} over the budget, not written: {over} of one commit (records_per_commit 100)" in result.out
    )
    assert len(cli(gr.path, "log", "--history", "--json").out.splitlines()) == 100


def test_the_commit_budget_is_a_setting(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    gr = GitRepo(tmp_path)
    gr.write("app/main.py", "def main():\n    return 0\n")
    gr.commit("initial")
    (gr.path / ".comind.yml").write_text("records_per_commit: 3\n")
    gr.write("app/main.py", "def main():\n    return 1\n")
    gr.commit("Return one\n\nConstraint: a\nConstraint: b\nConstraint: c\nConstraint: d\nConstraint: e")
    summary = json.loads(cli(gr.path, "harvest", "--json").out)
    assert summary["written"] == 3 and summary["over_budget"] == {"records_per_commit": 2}
    bad = cli(gr.path, "harvest", "--records-per-commit", "0")
    assert bad.code == 2 and "--records-per-commit: must be at least 1" in bad.err and bad.err.count("\n") == 1
