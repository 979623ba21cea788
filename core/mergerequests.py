"""Merge requests as plain data: what a forge says about a merge request, its files and comments.

These frozen dataclasses are shared by the bot's forge adapters (``comind.bot``), which build
them, and the merge-request harvester (``comind.harvest.mr``), which reads them; they live in
the core so that the harvester does not depend on the bot. Identifiers are strings everywhere
(GitHub's are integers, GitLab's discussion ids are hex); datetimes are timezone-aware UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

State = Literal["open", "merged", "closed"]
FileStatus = Literal["added", "modified", "removed", "renamed"]


@dataclass(frozen=True)
class MergeRequest:
    number: int
    title: str
    description: str
    state: State
    merged: bool
    labels: tuple[str, ...]
    author: str
    source_branch: str
    target_branch: str
    # GitHub: base_sha = start_sha = the base branch tip the PR was last compared with.
    # GitLab: diff_refs (base = merge base, start = target tip); None in listings, which omit them.
    base_sha: str | None
    head_sha: str
    start_sha: str | None
    merge_commit_sha: str | None  # only once merged (GitLab: the squash commit when squashed)
    web_url: str
    updated_at: datetime


@dataclass(frozen=True)
class MergeRequestFile:
    path: str
    old_path: str
    status: FileStatus
    patch: str | None  # hunks starting at "@@", without the ---/+++ header; None for binary/too large
    additions: int
    deletions: int

    def diff_lines(self) -> frozenset[int]:
        """New-side line numbers an inline comment may target (added and context lines)."""
        return new_side_lines(self.patch, added_only=False)

    def added_lines(self) -> frozenset[int]:
        """New-side line numbers added or changed by this diff."""
        return new_side_lines(self.patch, added_only=True)


@dataclass(frozen=True)
class Note:
    """A general merge-request comment or an inline review comment.

    ``thread_id`` is what ``reply`` and ``resolve_thread`` need: GitHub fills it for inline
    comments (the GraphQL review-thread id), GitLab for every note (its discussion id).
    ``in_reply_to`` is the first note of the thread when this note is a reply.
    ``resolved`` is the thread's state, None when the note is not in a resolvable thread.
    On GitHub ids are unique per kind only (issue comment, review, review comment): use ``url``
    as a global identity.
    """

    id: str
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    url: str
    thread_id: str | None
    path: str | None
    line: int | None
    is_inline: bool
    in_reply_to: str | None
    resolved: bool | None


@dataclass(frozen=True)
class Thread:
    id: str
    resolved: bool
    path: str | None
    line: int | None
    notes: tuple[Note, ...]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def new_side_lines(patch: str | None, *, added_only: bool) -> frozenset[int]:
    """New-side line numbers of a patch: added lines, plus context lines unless ``added_only``."""
    lines: set[int] = set()
    new = 0
    for text in (patch or "").splitlines():
        header = _HUNK.match(text)
        if header:
            new = int(header.group(1))
        elif text.startswith("+"):
            lines.add(new)
            new += 1
        elif text.startswith(" ") or text == "":
            if not added_only:
                lines.add(new)
            new += 1
        # "-" lines and "\ No newline at end of file" do not advance the new side
    return frozenset(lines)


def note_key(note: Note) -> str:
    """A note's identity across kinds: its URL fragment (``issuecomment-1``, ``discussion_r2``,
    ``pullrequestreview-3``, ``note_4``), else its id. GitHub ids are unique per kind only."""
    fragment = note.url.rpartition("#")[2] if "#" in note.url else ""
    return fragment if re.fullmatch(r"[A-Za-z0-9_-]{1,100}", fragment) else note.id


__all__ = ["FileStatus", "MergeRequest", "MergeRequestFile", "Note", "State", "Thread", "new_side_lines", "note_key"]
