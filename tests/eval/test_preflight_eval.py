"""comind eval preflight on a small real history: a change reverted, unrelated work, then the
change relanded; preflight --diff on the reland surfaces the attempt and --plan with the reland's
message ranks it first; an unrelated revert is no part of the reland's answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from replay_repo import feature, reland, revert, started, stream


@pytest.fixture
def history(tmp_path: Path) -> dict[str, Any]:
    repo = started(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/alpha.py", feature("alpha"))
    alpha = repo.commit("Add alpha client")
    reverted = revert(repo, alpha)
    stream(repo, "one")
    repo.write("app/other.py", "def other_total(items):\n    return sum(i.price for i in items)\n")
    other = repo.commit("Sum prices in other_total")
    revert(repo, other)
    stream(repo, "two")
    relanded = reland(repo, "alpha", f'Reapply "Add alpha client"\n\nThis reverts commit {reverted}.\n')
    stream(repo, "late")
    return {"repo": repo, "reland": relanded}


def test_the_reland_is_surfaced_both_ways(cli, history: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    repo: GitRepo = history["repo"]
    result = cli(repo.path, "eval", "preflight", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["relands"] == 1 and data["with_attempt"] == 1
    assert (data["diff_surfaced"], data["diff_recall"], data["diff_flagged"]) == (1, 1.0, 1)
    assert (data["plan_top3"], data["plan_recall_at_3"], data["plan_top1"]) == (1, 1.0, 1)
    assert data["diff_unrelated_flags"] == 0 and data["plan_unrelated_above"] == 0
    (case,) = data["cases"]
    assert case["commit"] == history["reland"] and case["form"] == "reapply"
    assert case["plan"]["rank"] == 1 and case["diff"]["surfaced"]
    text = cli(repo.path, "eval", "preflight")
    assert text.code == 0 and "preflight --plan (@3)" in text.out and "recall" in text.out
    assert f"DP {history['reland'][:12]}" in text.out


def test_a_bare_mirror_is_read_without_writing(cli, history: dict[str, Any], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(history["repo"].path), str(bare)], check=True)
    before = sorted(p.relative_to(bare) for p in bare.rglob("*"))
    result = cli(tmp_path, "eval", "preflight", "--repo", str(bare), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["plan_recall_at_3"] == 1.0
    assert sorted(p.relative_to(bare) for p in bare.rglob("*")) == before


def test_not_a_repository_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli(tmp_path, "eval", "preflight", "--repo", str(tmp_path))
    assert result.code == 2 and result.err.count("\n") == 1 and "not a git repository" in result.err
    result = cli(tmp_path, "eval", "preflight", "--repo", str(tmp_path / "nowhere"))
    assert result.code == 2 and result.err == f"comind: --repo {tmp_path / 'nowhere'}: no such file or folder\n"
