"""A small deterministic git repository for tests, driven through the git CLI.

Every command runs with a fixed identity, fixed dates and no user or system configuration, so
the same sequence of calls yields the same commit ids on every machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

AUTHOR = "Ada Tester <ada@example.com>"
# 2024-01-01T00:00:00Z; each commit without an explicit date is one minute after the previous one.
EPOCH = 1_704_067_200


def _split_identity(identity: str) -> tuple[str, str]:
    name, _, rest = identity.partition("<")
    return name.strip(), rest.rstrip(">").strip()


class GitRepo:
    """A git work tree under ``tmp_path / name`` with helpers that write, commit and branch."""

    def __init__(self, tmp_path: Path, name: str = "repo", *, branch: str = "main") -> None:
        self.path = Path(tmp_path) / name
        self.path.mkdir(parents=True, exist_ok=True)
        self._tick = 0
        self.git("init", "-q", "-b", branch)

    def _env(self, author: str = AUTHOR, date: str | None = None) -> dict[str, str]:
        name, email = _split_identity(author)
        when = date or f"@{EPOCH + 60 * self._tick} +0000"
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            {
                "GIT_AUTHOR_NAME": name,
                "GIT_AUTHOR_EMAIL": email,
                "GIT_AUTHOR_DATE": when,
                "GIT_COMMITTER_NAME": name,
                "GIT_COMMITTER_EMAIL": email,
                "GIT_COMMITTER_DATE": when,
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "LC_ALL": "C",
            }
        )
        return env

    def git(self, *args: str, author: str = AUTHOR, date: str | None = None) -> str:
        """Run ``git ARGS`` in the work tree and return its stdout (raises on a non-zero exit)."""
        done = subprocess.run(
            ["git", *args], cwd=self.path, env=self._env(author, date), check=True, capture_output=True, text=True
        )
        return done.stdout

    def write(self, path: str, text: str | bytes) -> Path:
        """Write a file (creating its directories); text is written as UTF-8."""
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_bytes(text.encode("utf-8"))
        return target

    def symlink(self, path: str, target: str) -> None:
        link = self.path / path
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)

    def rm(self, *paths: str) -> None:
        self.git("rm", "-q", "-r", "--", *paths)

    def mv(self, src: str, dst: str) -> None:
        (self.path / dst).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", src, dst)

    def tick(self) -> None:
        """Move the clock a minute on: the next git command writes at a time of its own."""
        self._tick += 1

    def commit(self, message: str, *, author: str = AUTHOR, date: str | None = None, all_files: bool = True) -> str:
        """Stage everything (unless ``all_files=False``) and commit; return the new commit id."""
        self._tick += 1
        if all_files:
            self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, author=author, date=date)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def revert_head(self, reason: str = "") -> str:
        """Revert HEAD as `git revert` writes it, with `reason` as the message's last paragraph."""
        sha, subject = self.head(), self.git("log", "-1", "--format=%s").strip()
        self.git("revert", "--no-edit", "HEAD")
        message = f'Revert "{subject}"\n\nThis reverts commit {sha}.\n' + (f"\n{reason}\n" if reason else "")
        self.git("commit", "--amend", "-q", "-m", message)
        return self.head()

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("branch", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def merge(self, ref: str, message: str | None = None, *, author: str = AUTHOR) -> str:
        """Merge ``ref`` with a merge commit (never fast-forward); return the merge commit id."""
        self._tick += 1
        self.git("merge", "-q", "--no-ff", "-m", message or f"Merge {ref}", ref, author=author)
        return self.head()


def cargo_lock(**versions: str) -> str:
    """A Cargo.lock of registry crates at these versions."""
    registry = 'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    return "version = 3\n" + "".join(
        f'\n[[package]]\nname = "{name}"\nversion = "{v}"\n{registry}' for name, v in sorted(versions.items())
    )


def reverted_clap_bump(repo: GitRepo, **pulled: tuple[str, str]) -> str:
    """astral-sh/ruff's `Update Rust crate clap to v4.5.35`: a project declaring clap, a Cargo.lock-only
    bump from 4.5.34 (with `pulled` crates moving from/to along) and its revert. Returns the bump."""
    repo.write("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nclap = "4.5"\n')
    repo.write("Cargo.lock", cargo_lock(clap="4.5.34", **{k: v[0] for k, v in pulled.items()}))
    repo.commit("initial")
    repo.write("Cargo.lock", cargo_lock(clap="4.5.35", **{k: v[1] for k, v in pulled.items()}))
    bump = repo.commit("Update Rust crate clap to v4.5.35")
    repo.git("revert", "--no-edit", bump)
    return bump
