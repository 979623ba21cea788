"""Shared history steps for the replay tests: features, reverts, relands and the replay itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gitrepo import GitRepo


def feature(name: str) -> str:
    """A module of informative lines, distinct per feature name."""
    return "".join(
        f"def {name}_step_{i}(session, payload):\n    return session.post('/{name}/{i}', json=payload)\n"
        for i in range(4)
    )


STREAM = 6  # ordinary commits between the steps


def stream(repo: GitRepo, tag: str) -> None:
    for i in range(STREAM):
        repo.write(f"notes/{tag}_{i}.py", f"VALUE_{tag.upper()}_{i} = compute_value('{tag}', {i})\n")
        repo.commit(f"Tune {tag} value {i}")


def revert(repo: GitRepo, sha: str) -> str:
    subject = repo.git("log", "-1", "--format=%s", sha).strip()
    repo.tick()  # a landing of its own (a commit and its revert written in one second are one run)
    repo.git("revert", "--no-edit", sha)
    repo.git(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "{subject}"\n\nThis reverts commit {sha}.\n\nIt broke the nightly build.\n',
    )
    return repo.head()


def reland(repo: GitRepo, name: str, message: str) -> str:
    repo.write(f"app/{name}.py", feature(name))
    return repo.commit(message)


def started(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path)
    repo.write("README.md", "demo\n")
    repo.commit("initial")
    return repo


def replay(cli, path: Path, *args: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    result = cli(path, "eval", "replay", "--json", *args)
    assert result.code == 0, result.err
    return dict(json.loads(result.out))
