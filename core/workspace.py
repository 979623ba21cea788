"""The repository comind works in: where it is, its settings, its stores and caches.

Discovery reads `.git` by hand rather than through pygit2, whose import alone costs ~0.2 s:
read-only commands (`show`, `log`, `why`) must start fast.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from comind import config as configuration
from comind.errors import ComindError

if TYPE_CHECKING:
    from comind.codeindex import CodeIndex
    from comind.ledger import Ledger
    from comind.store import Store


def find_git(start: Path) -> tuple[Path, Path, Path]:
    """(work tree root, this work tree's git dir, common git dir) for the repository at `start`."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
                common = git_dir / "commondir"
                common_dir = (git_dir / common.read_text().strip()).resolve() if common.is_file() else git_dir
                return folder, git_dir, common_dir
    raise ComindError(f"not inside a git repository: {start}")


def discover_git(start: Path) -> tuple[Path, Path] | None:
    """(git dir of this work tree, common git dir) for a work tree, a folder inside one, or a git
    dir itself (bare repositories, mirrors); None when no repository is found."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():  # a work tree first, as git looks
            try:
                _root, git_dir, common_dir = find_git(folder)
            except ComindError:
                return None
            return git_dir, common_dir
        if (folder / "HEAD").is_file() and ((folder / "objects").is_dir() or (folder / "commondir").is_file()):
            common = folder / "commondir"
            return folder, ((folder / common.read_text().strip()).resolve() if common.is_file() else folder)
    return None


def _origin_name(git_dir: Path) -> str | None:
    """owner/name from the origin remote's URL in .git/config, if any."""
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section = re.search(r'\[remote "origin"\](.*?)(?:\n\[|\Z)', text, re.S)
    url = section and re.search(r"^\s*url\s*=\s*(\S+)", section.group(1), re.M)
    if not url:
        return None
    path = re.sub(r"\.git$", "", url.group(1).rstrip("/"))
    parts = re.split(r"[/:]", path)
    return "/".join(parts[-2:]) if len(parts) >= 2 else None


def _treeless(git_dir: Path) -> bool:
    """Whether the clone was made with `--filter=tree:N` (it lacks past commits' trees)."""
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*partialclonefilter\s*=\s*tree:", text, re.M | re.I) is not None


class Workspace:
    """One repository, with its configuration resolved."""

    def __init__(self, start: Path | None = None, flags: Mapping[str, Any] | None = None) -> None:
        self.root, self.head_dir, self.git_dir = find_git((start or Path.cwd()).resolve())
        if _treeless(self.git_dir):  # a blobless clone is fine: comind fetches the blobs it reads (promisor)
            raise ComindError(
                "this is a treeless clone (--filter=tree:0): comind reads the trees of past commits, "
                "which it lacks; clone with --filter=blob:none (actions/checkout: filter: blob:none) "
                "or without a filter"
            )
        self.config = configuration.load(self.root, flags, memo=self.git_dir / "comind" / "config.json")

    @cached_property
    def repo_name(self) -> str:
        return str(self.config.repo_name or _origin_name(self.git_dir) or self.root.name)

    @property
    def cache_dir(self) -> Path:
        path = self.git_dir / "comind"
        path.mkdir(exist_ok=True)
        return path

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
            raise ComindError(f"git {' '.join(args)}: {exc.stderr.strip() or 'failed'}") from None
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
        return None

    def branch(self) -> str | None:
        return current_branch(self.head_dir)

    def user_email(self) -> str:
        try:
            return self.git("config", "user.email").strip()
        except ComindError:
            return os.environ.get("USER", "unknown")


def head_commit(head_dir: Path, git_dir: Path | None = None) -> str | None:
    """The commit HEAD points at, read from the ref files (no git process, no pygit2)."""
    try:
        head = (head_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    if head.startswith("ref:"):  # a branch: its ref lives in the common git dir
        return read_ref(git_dir or head_dir, head[4:].strip())
    return head if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head) else None


def current_branch(head_dir: Path) -> str | None:
    try:
        head = (head_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def read_ref(git_dir: Path, ref: str) -> str | None:
    """A ref's commit from loose or packed refs, following symbolic refs (no git process)."""
    for _ in range(5):
        try:
            text = (git_dir / ref).read_text().strip()
        except OSError:
            return packed_refs(git_dir).get(ref)
        if not text.startswith("ref:"):
            return text if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", text) else None
        ref = text[4:].strip()
    return None


_PACKED: dict[Path, tuple[tuple[int, int], dict[str, str]]] = {}


def packed_refs(git_dir: Path) -> dict[str, str]:
    """ref → object id from .git/packed-refs, read once per process while the file is unchanged."""
    path = git_dir / "packed-refs"
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _PACKED.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    refs = {}
    for line in path.read_text(errors="replace").splitlines():
        sha, _, name = line.partition(" ")
        if name and len(sha) in (40, 64) and not line.startswith(("#", "^")):
            refs[name] = sha
    _PACKED[path] = (stamp, refs)
    return refs
