"""The repository comind works in: where it is, its settings, its stores and caches.

Discovery and refs come from `comind.git`, which reads `.git` by hand: read-only commands
(`show`, `log`, `why`) must start fast.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from comind import config as configuration
from comind.errors import ComindError
from comind.git import current_branch, error_line, find_git, head_commit, is_treeless, origin_name, read_ref

if TYPE_CHECKING:
    from comind.codeindex import CodeIndex
    from comind.ledger import Ledger
    from comind.store import Store


class Workspace:
    """One repository, with its configuration resolved."""

    def __init__(self, start: Path | None = None, flags: Mapping[str, Any] | None = None) -> None:
        # where comind runs (-C or the current folder): paths typed at the command line are relative to it
        self.cwd = (start or Path.cwd()).resolve()
        self._actor_salt: tuple[str | None, bool] | None = None
        self.root, self.head_dir, self.git_dir = find_git(self.cwd)
        if is_treeless(self.git_dir):  # a blobless clone is fine: comind fetches the blobs it reads (promisor)
            raise ComindError(
                "this is a treeless clone (--filter=tree:0): comind reads the trees of past commits, "
                "which it lacks; clone with --filter=blob:none (actions/checkout: filter: blob:none) "
                "or without a filter"
            )
        self.config = configuration.load(self.root, flags, memo=self.git_dir / "comind" / "config.json")

    @cached_property
    def repo_name(self) -> str:
        return str(self.config.repo_name or origin_name(self.git_dir) or self.root.name)

    @property
    def cache_dir(self) -> Path:
        path = self.git_dir / "comind"
        path.mkdir(exist_ok=True)
        return path

    @property
    def harvest_state(self) -> Path:
        """Where a harvest keeps the tips it walked: present once the history has been harvested."""
        return self.cache_dir / "harvest-state.json"

    @property
    def ledger_path(self) -> Path:
        override = os.environ.get("COMIND_CACHE")
        return Path(override) if override else self.cache_dir / "ledger.sqlite"

    @cached_property
    def store(self) -> Store:
        from comind.store import Store

        return Store(str(self.config.store), base=self.root)

    @cached_property
    def harvest_store(self) -> Store:
        """Records derived from git and forges: a local cache, re-derivable at any time."""
        from comind.store import Store

        return Store(str(self.cache_dir / "harvest"))

    @cached_property
    def branch_store(self) -> Store:
        """Records derived from the commits of HEAD's branch that the default branch lacks: replaced
        whole by every harvest, so another branch's commits (an unmerged reland, a closed merge
        request's Lore) never speak for this one, not even from a cache CI shares between branches."""
        from comind.store import Store

        return Store(str(self.cache_dir / "harvest-branch"))

    def actor_salt(self, *, create: bool = False) -> str:
        """The key of actor pseudonyms (`comind.actors`): COMIND_ACTOR_SALT, else the store's own
        (`Store.actor_salt`; `create`: made now if the store has none and holds no records, as before
        the first record written to it), else the repository name, as before stores had keys."""
        override = os.environ.get("COMIND_ACTOR_SALT")
        if override is not None:
            return override
        memo = self._actor_salt  # (the store's key or None, settled: no later `create` changes it)
        if memo is None or (create and not memo[1]):
            salt = self.store.actor_salt(create=create)
            memo = self._actor_salt = (salt, salt is not None or create)
        return memo[0] if memo[0] is not None else self.repo_name

    def ledger(self) -> Ledger:
        from comind.ledger import Ledger

        return Ledger(
            self.ledger_path, {"store": self.store, "harvest": self.harvest_store, "branch": self.branch_store}
        )

    def git(self, *args: str) -> str:
        """Run git in the work tree; ComindError with git's own message on failure."""
        import subprocess  # here: 8 ms to import, read-only commands never run git

        try:
            out = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=True)
        except subprocess.CalledProcessError as exc:
            raise ComindError(f"git {' '.join(args)}: {error_line(exc.stderr) or 'failed'}") from None
        return out.stdout

    def head(self) -> str | None:
        return head_commit(self.head_dir, self.git_dir)

    @cached_property
    def index(self) -> CodeIndex:
        """The code index of this repository, cached in .git/comind/index.sqlite."""
        from comind.codeindex import CodeIndex

        return CodeIndex(self.root, self.cache_dir / "index.sqlite")

    def default_branch(self) -> str:
        """The configured default branch, else origin/HEAD's target, else main, master or HEAD."""
        if self.config.default_branch:
            return str(self.config.default_branch)
        try:
            origin = (self.git_dir / "refs/remotes/origin/HEAD").read_text().strip()
        except OSError:
            origin = ""
        if origin.startswith("ref: refs/remotes/"):
            return origin.removeprefix("ref: refs/remotes/")
        for name in ("main", "master"):
            if read_ref(self.git_dir, f"refs/heads/{name}") or read_ref(self.git_dir, f"refs/remotes/origin/{name}"):
                return name
        return "HEAD"

    def default_tip(self) -> str | None:
        """The default branch's commit (local branch, else its origin counterpart)."""
        name = self.default_branch()
        if name == "HEAD":
            return self.head()
        for ref in (f"refs/heads/{name}", f"refs/remotes/{name}", f"refs/remotes/origin/{name}"):
            if found := read_ref(self.git_dir, ref):
                return found
        if self.config.default_branch:  # chosen, not guessed: a typo made no commit evidence, silently
            raise configuration.ConfigError(
                f"{self.config.origin('default_branch')}: no branch {name!r} here, local or remote (fetch it;"
                " `git branch -a` lists those there are)"
            )
        return None

    def branch(self) -> str | None:
        return current_branch(self.head_dir)

    def user_email(self) -> str:
        try:
            return self.git("config", "user.email").strip()
        except ComindError:
            return os.environ.get("USER", "unknown")
