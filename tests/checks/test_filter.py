"""`comind check --filter`: reviewdog's filter modes over a real change."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo

from comind.checks.change import compute_change
from comind.checks.findings import Finding, Report
from comind.checks.run import apply_filter
from comind.codeindex import CodeIndex
from comind.errors import ComindError

BEFORE = "".join(f"x{n} = {n}\n" for n in range(1, 31))


def at(path: str | None, line: int | None, name: str) -> Finding:
    return Finding(type="context", level="note", title=name, message="", fingerprint=name, path=path, line=line)


@pytest.fixture
def change(tmp_path: Path):  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path)
    repo.write("a.py", BEFORE)
    repo.write("b.py", "y = 1\n")
    base = repo.commit("initial")
    repo.write("a.py", BEFORE.replace("x10 = 10\n", "x10 = 'ten'\n"))  # line 10 changed
    head = repo.commit("ten")
    return compute_change(CodeIndex(repo.path, tmp_path / "ix.sqlite"), base, head)


def test_each_mode_keeps_what_reviewdog_keeps(change) -> None:  # type: ignore[no-untyped-def]
    findings = [
        at("a.py", 10, "added"),
        at("a.py", 12, "context"),  # within git's 3 lines of context
        at("a.py", 25, "same-file"),
        at("b.py", 1, "other-file"),
        at(None, None, "repository"),  # no place: always kept
    ]

    def kept(mode: str) -> list[str]:
        report = Report(base="b", head="h", findings=list(findings))
        return [f.title for f in apply_filter(report, change, mode)]

    assert kept("none") == ["added", "context", "same-file", "other-file", "repository"]
    assert kept("file") == ["added", "context", "same-file", "repository"]
    assert kept("diff-context") == ["added", "context", "repository"]
    assert kept("added") == ["added", "repository"]
    report = Report(base="b", head="h", findings=list(findings))
    apply_filter(report, change, "added")
    assert report.warnings == ["--filter added: 3 findings outside it not shown"]  # left out, and said
    with pytest.raises(ComindError, match="unknown filter 'nofilter'"):
        apply_filter(report, change, "nofilter")
