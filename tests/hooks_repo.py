"""A repository with records for the hook tests: a harvested revert (T2), a `must` constraint
with a compiled ast-grep check, records on a symbol, and one an agent wrote (T1, never shown)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitrepo import GitRepo

PERM = (
    "class Checker:\n    def check(self, user, perm):\n"
    "        grants = load_grants(user.id)\n        return perm in grants\n\n\n"
    "def audit(event):\n    return event\n"
)
CACHED = PERM.replace(
    "        grants = load_grants(user.id)\n", "        grants = CACHE.get(user.id) or load_grants(user.id)\n"
)
NO_EVAL = "type: ast-grep\nlanguage: python\nrule: {pattern: 'eval($X)'}\nmessage: 'eval() of $X'\n"
COMIND = str(Path(sys.executable).parent / "comind")


@dataclass
class Hook:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


def hook(repo: Path, agent: str, event: str, payload: Any, *extra: str) -> Hook:
    """`comind hook AGENT EVENT` as the agent runs it: a process, the payload on stdin."""
    data = payload if isinstance(payload, str | bytes) else json.dumps(payload)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMIND_")}
    done = subprocess.run(
        [COMIND, *extra, "hook", agent, event],
        input=data.encode() if isinstance(data, str) else data,
        capture_output=True,
        cwd=repo,
        env=env,
        timeout=120,
    )
    return Hook(done.returncode, done.stdout.decode(), done.stderr.decode())


def base(repo: Path, event: str, session: str = "s-1") -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(repo / "t.jsonl"), "cwd": str(repo), "hook_event_name": event}


def claude_edit(repo: Path, old: str, new: str, session: str = "s-1", path: str = "app/perm.py") -> dict[str, Any]:
    args = {"file_path": str(repo / path), "old_string": old, "new_string": new, "replace_all": False}
    return {**base(repo, "PreToolUse", session), "tool_name": "Edit", "tool_input": args, "tool_use_id": "toolu_01"}


def history(tmp_path: Path) -> GitRepo:
    """The history alone: a change and its revert, nothing harvested."""
    repo = GitRepo(tmp_path)
    repo.write("app/__init__.py", "")
    repo.write("app/perm.py", PERM)
    repo.write("app/other.py", "def other():\n    return 1\n")
    repo.commit("initial")
    repo.write("app/perm.py", CACHED)
    repo.commit("Cache grants in the checker")
    repo.revert_head("Stale grants.")
    return repo


def build(tmp_path: Path, cli: Any) -> GitRepo:
    repo = history(tmp_path)
    check = tmp_path / "no-eval.yml"
    check.write_text(NO_EVAL)
    assert cli(repo.path, "harvest").code == 0
    for args in (
        (
            "constraint",
            "--title",
            "Never eval input",
            "--on",
            "app/perm.py",
            "--rule",
            "no eval",
            "--severity",
            "must",
            "--check",
            str(check),
        ),
        (
            "gotcha",
            "--title",
            "load_grants is slow when cold",
            "--on",
            "app/perm.py::Checker.check",
            "--symptom",
            "2 s",
            "--cause",
            "cold pool",
        ),
        (
            "gotcha",
            "--title",
            "An agent's guess",
            "--on",
            "app/perm.py::Checker.check",
            "--symptom",
            "x",
            "--cause",
            "y",
            "--author-kind",
            "agent",
        ),
    ):
        assert cli(repo.path, "remember", *args).code == 0
    repo.git("add", "-A")
    repo.commit("records")
    refresh(cli, repo.path)
    return repo


def refresh(cli: Any, repo: Path) -> None:
    """Make the hooks' view, as `init-hooks` does (a hook call without one answers a note while
    it is made in the background)."""
    assert cli(repo, "hook", "refresh").code == 0
