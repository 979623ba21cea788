"""All of comind's git plumbing, as small functions: finding a repository, reading refs, and
reading trees and diffs of a revision.

Discovery and refs read `.git` by hand, with no git process and no pygit2: read-only commands
(`show`, `log`, `why`) must start fast, and pygit2's import alone costs ~0.2-0.5 s. The functions
on objects take or return pygit2 values and import pygit2 where they run, for the same reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from comind.errors import ComindError

if TYPE_CHECKING:
    import pygit2

_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SYMLINK, _GITLINK, _TREE = 0o120000, 0o160000, 0o040000

# -- discovery and refs: file reads only -----------------------------------------------------


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
    if discover_git(start) is not None:  # a bare repository or a mirror: there is no work tree to check
        raise ComindError(f"{start} is a bare repository: run comind in a clone with a work tree (git clone {start})")
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


def _config_text(git_dir: Path) -> str:
    try:
        return (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def origin_name(git_dir: Path) -> str | None:
    """owner/name from the origin remote's URL in .git/config, if any."""
    section = re.search(r'\[remote "origin"\](.*?)(?:\n\[|\Z)', _config_text(git_dir), re.S)
    url = section and re.search(r"^\s*url\s*=\s*(\S+)", section.group(1), re.M)
    if not url:
        return None
    path = re.sub(r"\.git$", "", url.group(1).rstrip("/"))
    parts = re.split(r"[/:]", path)
    return "/".join(parts[-2:]) if len(parts) >= 2 else None


def is_treeless(git_dir: Path) -> bool:
    """Whether the clone was made with `--filter=tree:N` (it lacks past commits' trees)."""
    return re.search(r"^\s*partialclonefilter\s*=\s*tree:", _config_text(git_dir), re.M | re.I) is not None


def head_commit(head_dir: Path, git_dir: Path | None = None) -> str | None:
    """The commit HEAD points at, read from the ref files."""
    try:
        head = (head_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    if head.startswith("ref:"):  # a branch: its ref lives in the common git dir
        return read_ref(git_dir or head_dir, head[4:].strip())
    return head if _OBJECT_ID.fullmatch(head) else None


def current_branch(head_dir: Path) -> str | None:
    try:
        head = (head_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def read_ref(git_dir: Path, ref: str) -> str | None:
    """A ref's commit from loose or packed refs, following symbolic refs."""
    for _ in range(5):
        try:
            text = (git_dir / ref).read_text().strip()
        except OSError:
            return packed_refs(git_dir).get(ref)
        if not text.startswith("ref:"):
            return text if _OBJECT_ID.fullmatch(text) else None
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


# -- what a git process said -----------------------------------------------------------------

_NAMES_OBJECT = re.compile(r"\b(?:[0-9a-f]{40}|[0-9a-f]{64})\b")


def git_said(stderr: str) -> list[str]:
    """git's `fatal:` and `error:` lines without their prefix, not the advice after them ("Please make
    sure you have the correct access rights"); none such: its first line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return [line.split(": ", 1)[1] for line in lines if line.startswith(("fatal: ", "error: "))] or lines[:1]


def error_line(stderr: str) -> str:
    """git's error output as one line for comind's message: the first thing it said (`git_said`);
    when a later one names an object (a blob a partial or damaged clone lacks: "could not fetch <id>
    from promisor remote"), that one, the first after it in brackets."""
    said = git_said(stderr)
    if not said:
        return ""
    named = next((line for line in said if _NAMES_OBJECT.search(line)), said[0])
    return named if named == said[0] else f"{named} ({said[0]})"


# -- objects: pygit2 -------------------------------------------------------------------------


def open_repo(repo: pygit2.Repository | str | os.PathLike[str]) -> pygit2.Repository:
    import pygit2

    if isinstance(repo, pygit2.Repository):
        return repo
    path = pygit2.discover_repository(os.fspath(repo))
    if path is None:
        raise ValueError(f"not a git repository: {os.fspath(repo)}")
    return pygit2.Repository(path)


def has_no_commit(repo: pygit2.Repository) -> bool:
    """`git init` and nothing committed: HEAD names no commit and no ref names one. (libgit2's
    `is_empty` also asks that HEAD name the configured first branch: after `git init -b main`, with
    `init.defaultBranch` unset, it says no.)"""
    return bool(repo.head_is_unborn) and next(iter(repo.references), None) is None


def since_commit(repo: pygit2.Repository, rev: str) -> str:
    """The commit `--since REV` names. Git's own `--since` takes a date; ours takes a revision, so a
    date (`2020-01`) that names none is refused as one, not read as the start of the history."""
    import pygit2

    try:
        return str(repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise ComindError(
            f"--since {rev!r}: not a revision; it takes a commit, branch or tag (e.g. v1.2, HEAD~50), not a date"
        ) from None


def blob_id(tree: pygit2.Tree, path: str) -> str | None:
    """The id of the blob at `path` in `tree`, None if absent or not a file."""
    import pygit2

    try:
        entry = tree[path]
    except KeyError:
        return None
    return str(entry.id) if entry.type == pygit2.GIT_OBJECT_BLOB else None


def is_dir(tree: pygit2.Tree, path: str) -> bool:
    import pygit2

    try:
        return bool(tree[path].type == pygit2.GIT_OBJECT_TREE)
    except KeyError:
        return False


def all_paths(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    """Every path under `tree`, files and links alike."""
    import pygit2

    out = []
    for entry in tree:
        path = prefix + str(entry.name)
        if entry.type == pygit2.GIT_OBJECT_TREE:
            out += all_paths(entry, path + "/")  # type: ignore[arg-type]
        else:
            out.append(path)
    return out


def regular_files(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(path, blob id) of every regular file under `tree`: no symlinks or submodules."""
    for entry in tree:
        mode = entry.filemode
        path = prefix + (entry.name or "")
        if mode == _TREE:
            yield from regular_files(repo, repo[entry.id], path + "/")  # type: ignore[arg-type]
        elif mode not in (_SYMLINK, _GITLINK):
            yield path, str(entry.id)


def tree_entry(repo: pygit2.Repository, commit: str, path: str) -> pygit2.Object | None:
    """The tree entry at `path` in `commit`: it names the blob without reading it (a partial clone
    may lack the blob)."""
    import pygit2

    try:
        return repo.revparse_single(commit).peel(pygit2.Commit).tree[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None


def changed_paths(
    repo: pygit2.Repository, base: str, head: str, renames: bool = True
) -> list[tuple[str, str | None, str]]:
    """(path, old path, status) of each file that differs between two commits, with git's default
    rename detection (50 % similarity) unless `renames` is off; status is one of A, C, D, M, R, T,
    and `path` the old one for D."""
    import pygit2
    from pygit2.enums import DiffFind

    base_commit, head_commit = repo[base], repo[head]
    assert isinstance(base_commit, pygit2.Commit) and isinstance(head_commit, pygit2.Commit)
    if not renames:
        return sorted(_changed(base_commit.tree, head_commit.tree, ""), key=lambda change: change[0])
    diff = repo.diff(base_commit.tree, head_commit.tree)
    diff.find_similar(flags=DiffFind.FIND_RENAMES)
    out: list[tuple[str, str | None, str]] = []
    for delta in diff.deltas:
        status = delta.status_char()
        old, new = delta.old_file.path, delta.new_file.path
        out.append((old, None, status) if status == "D" else (new, old, status))
    return out


def _changed(old: pygit2.Tree, new: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str | None, str]]:
    """`changed_paths` without renames, reading only the folders that differ: libgit2's diff reads
    every folder of both trees (17 ms a revert in a 30,000-file tree, for a one-line change). A file
    that changes type (a link, a folder, a submodule) is deleted and added, as libgit2 has it."""
    theirs = {entry.name: entry for entry in new}
    for a in old:
        b = theirs.pop(a.name, None)
        if b is not None and a.id == b.id and a.filemode == b.filemode:
            continue
        path = prefix + (a.name or "")
        if b is not None and a.filemode == b.filemode == _TREE:
            yield from _changed(a, b, path + "/")  # type: ignore[arg-type]
        elif b is not None and _kind(a.filemode) == _kind(b.filemode):
            yield path, path, "M"
        else:
            yield from _every(a, path, "D")
            if b is not None:
                yield from _every(b, path, "A")
    for b in theirs.values():
        yield from _every(b, prefix + (b.name or ""), "A")


def _every(entry: pygit2.Object, path: str, status: str) -> Iterator[tuple[str, str | None, str]]:
    """Each file at or under `entry`, deleted (D) or added (A)."""
    if entry.filemode == _TREE:
        for inner in entry:  # type: ignore[attr-defined]
            yield from _every(inner, f"{path}/{inner.name}", status)
    else:
        yield (path, None, status) if status == "D" else (path, path, status)


def _kind(mode: int) -> int:
    """A file's kind as a diff tells them apart: regular (either mode), link, submodule."""
    return 0o100000 if mode in (0o100644, 0o100755) else mode
