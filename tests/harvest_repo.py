"""Real git repositories for the harvest parsing tests, driven through the git CLI.

Fixed identity and dates and no user or system configuration, so a sequence of calls yields the
same commit ids everywhere. ``raw_commit`` writes commit objects git itself refuses to create
(NUL bytes, invalid UTF-8, an encoding header) with ``git hash-object --literally``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

EPOCH = 1_704_067_200  # 2024-01-01T00:00:00Z

# A small module whose lines are informative and formatted unevenly, for approach fingerprints.
CACHE = """import functools
from typing import Any

# cache the lookups
def lookup(key: str) -> Any:
    value   =  STORE.get(key)
    if value is None:
        value = load_from_disk(key)
        STORE[key] = value
    return value
"""


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
            "GIT_AUTHOR_NAME": "Ada Tester",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada Tester",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
        }
    )
    env.update(extra or {})
    return env


def run_git(cwd: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, input=input, env=env or git_env(), check=True, capture_output=True)
    return done.stdout.decode("utf-8", "replace")


class HarvestRepo:
    """A work tree with helpers to write files, commit, branch, merge and revert."""

    def __init__(self, path: Path, *, branch: str = "main") -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.tick = 0
        self.git("init", "-q", "-b", branch)

    def _env(self) -> dict[str, str]:
        when = f"@{EPOCH + 60 * self.tick} +0000"
        return git_env({"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})

    def git(self, *args: str, input: bytes | None = None) -> str:
        return run_git(self.path, *args, input=input, env=self._env())

    def write(self, path: str, content: str | bytes) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> str:
        """Write ``files``, stage everything and commit with ``message`` verbatim; return the sha."""
        self.tick += 1
        for name, content in (files or {}).items():
            self.write(name, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-", input=message.encode())
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def revert(self, sha: str, *args: str) -> str:
        """``git revert --no-edit [args] sha``; return the new commit."""
        self.tick += 1
        self.git("revert", "--no-edit", *args, sha)
        return self.head()

    def merge(self, ref: str, message: str) -> str:
        self.tick += 1
        self.git("merge", "-q", "--no-ff", "-m", message, ref)
        return self.head()

    def checkout(self, *args: str) -> None:
        self.git("checkout", "-q", *args)

    def raw_commit(
        self,
        message: bytes,
        *,
        parents: tuple[str, ...] = (),
        headers: bytes = b"",
        tree: str | None = None,
        ref: str | None = "HEAD",
    ) -> str:
        """Write a commit object byte for byte (git refuses NULs and bad encodings in ``commit``)."""
        self.tick += 1
        if tree is None:
            tree = self.git("write-tree").strip()
        lines = [f"tree {tree}".encode()]
        lines += [f"parent {p}".encode() for p in parents]
        stamp = f"{EPOCH + 60 * self.tick} +0000".encode()
        lines.append(b"author Ada Tester <ada@example.com> " + stamp)
        lines.append(b"committer Ada Tester <ada@example.com> " + stamp)
        body = b"\n".join(lines) + b"\n" + headers + b"\n" + message
        sha = self.git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=body).strip()
        if ref:
            self.git("update-ref", ref, sha)
        return sha

    def fast_import(self, count: int, branch: str = "bulk") -> None:
        """``count`` commits on ``branch`` in one ``git fast-import`` (each changes one file)."""
        chunks = []
        for i in range(count):
            message = f"bulk commit {i}\n".encode()
            content = f"{i}\n".encode()
            chunks.append(b"commit refs/heads/" + branch.encode() + b"\n")
            chunks.append(f"committer Ada Tester <ada@example.com> {EPOCH + i} +0000\n".encode())
            chunks.append(b"data %d\n%s" % (len(message), message))
            chunks.append(b"M 644 inline f.txt\ndata %d\n%s\n" % (len(content), content))
        self.git("fast-import", "--quiet", input=b"".join(chunks))
