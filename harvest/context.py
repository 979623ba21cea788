"""What every git harvester shares during one harvest: the repository, lazily built indexes of
its history, anchors and approach fingerprints of commits, pseudonyms and counters.

Everything a harvester writes into a record is a function of the history (commit times, not the
clock; pseudonyms keyed by the repository, not the machine), so harvesting twice, anywhere, yields
the same records and writes nothing new.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from functools import cache, partial
from itertools import groupby
from typing import TYPE_CHECKING, Any, NamedTuple

import pygit2

from comind.actors import actor_id
from comind.anchoring import fingerprint, innermost
from comind.anchors import AnchorError, parse_anchor
from comind.deps import EXACT_RANGE, is_manifest, moved
from comind.git import is_dir, open_repo
from comind.harvest import HARVESTER_VERSION
from comind.harvest.approach import (
    FORMAT,
    MAX_BLOB,
    Approach,
    FileChange,
    Line,
    approach,
    bookkeeping,
    comment_style,
    is_trivial,
    normalise_line,
)
from comind.harvest.incidental import attributes, rank
from comind.harvest.markers import _PR_SUFFIX, full_subject, merge_title, normalise_subject
from comind.harvest.walker import CommitInfo, decode_message, is_ancestor, split_message, walk
from comind.languages import (
    Definition,
    definitions_at,
    fingerprinted,
    first_line_of,
    keeping_trees,
    language_for_path,
)
from comind.rulebook import rules_of
from comind.sanitize import clean_text

if TYPE_CHECKING:
    from comind.harvest.worker import AnchorWorker, Later
    from comind.workspace import Workspace

# Gerrit's change URL: https://host/c/repo/+/N, and the older https://host/N
_REVIEWED_ON = re.compile(r"^Reviewed-on:[ \t]*https?://[^\s/]+/(?:\S*/\+/|#/c/)?(\d+)/?[ \t]*$", re.M)
# (before Gerrit, Rietveld's submit ended the message with the review's link alone on a line)
_RIETVELD = re.compile(r"^https?://(?:[^\s/]+/cl/|codereview\.[^\s/]+/)(\d+)/?[ \t]*$", re.M)
# Phabricator's `Differential Revision: D12345` or its URL (a revert names its own last, the original's first)
_PHABRICATOR = re.compile(r"^Differential Revision:[ \t]*(?:https?://\S+/)?D(\d+)/?[ \t]*$", re.M)


def _review_link(body: str) -> int | None:
    """The change number of the review a message names as landed: Gerrit's, Phabricator's, else Rietveld's."""
    if "Reviewed-on:" in body and (m := _REVIEWED_ON.search(body)):
        return int(m.group(1))
    if "Differential Revision:" in body and (revisions := _PHABRICATOR.findall(body)):
        return int(revisions[-1])
    if ("/cl/" in body or "codereview." in body) and (links := _RIETVELD.findall(body)):
        return int(links[-1])  # (the last: an undo quotes the original's description, link and all)
    return None


MAX_ANCHORS = 12
MAX_READ = 16 << 20  # bytes of blobs kept while one change is anchored
MAX_FINGERPRINT_LINES = 3000  # non-trivial lines kept per attempt: bounds the record's size
MAX_LINE_CHARS = 300
_SYMBOL = re.compile(r"^[^\s:.]+(?:\.[^\s:.]+)*$")  # what an anchor accepts after `path::`


def commit_time(commit: CommitInfo) -> str:
    return datetime.fromtimestamp(commit.committer_time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class HarvestContext:
    def __init__(self, ws: Workspace, repo: pygit2.Repository, default_tip: str | None) -> None:
        self.ws = ws
        self.repo = repo
        self.repo_name = ws.repo_name
        self.actor_salt = ws.actor_salt()  # derived records make no key: a first authored record does
        self.default_tip = default_tip
        self.counts: Counter[str] = Counter()  # "source:kind" and "marker:kind" counters
        self.skipped: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = defaultdict(list)
        self._subjects: dict[str, list[str]] | None = None
        self._keys: list[str] | None = None  # the subject keys, sorted: prefix lookups of cut subjects
        self._prs: dict[int, list[str]] | None = None
        self._cls: dict[int, list[str]] = {}
        self._titles: dict[str, list[str]] = {}  # forge merges by the title of the request they land
        self._on_default: dict[str, bool] = {}
        self._walked: list[CommitInfo] | None = None  # the commits of `history_tips`, when walked already
        self._position: dict[str, int] | None = None  # sha -> its place in `_walked` (parents first)
        self.history_tips: list[str] = [t for t in ("HEAD", default_tip) if t]  # what `by_subject` & co. search
        self.lore_ids: dict[str, list[str]] = {}  # Lore-id -> record ids (filled by the lore source)
        # reverted subject (`markers.reland_key`) -> [[attempt id, revert commit(, "common")], …] of the attempts a
        # reland of that subject retires (filled and emptied by the revert source; kept across harvests)
        self.reverted: dict[str, list[list[str]]] = {}
        # what a live attempt's reverted change did (`reverts.change_key`) -> [attempt id, its revert, the
        # reverts folded into it…]: the same revert made again on another line of history (kept across harvests)
        self.reverted_changes: dict[str, list[str]] = {}
        self.fresh: set[str] = set()  # the attempts this harvest made (not written yet: one may still be dropped)
        self.dropped: set[str] = set()  # attempts this harvest made, then left out (`reverts`: a copy landed first)
        self._mainline: dict[str, int] | None = None  # the default branch's first-parent chain: sha -> place
        self._mainline_shas: list[str] | None = None  # the same chain, by place
        self._definitions: dict[tuple[str, str, tuple[tuple[int, int], ...]], tuple[Definition, ...]] = {}
        # (blob, extension), qualname -> that definition fingerprinted (`_fingerprinted`)
        self._printed: dict[tuple[tuple[str, str], str], Definition] = {}
        self._read: dict[pygit2.Oid, bytes | None] = {}  # blobs read while one change is anchored (`_bytes`)
        self._read_size = 0
        self._approaches: dict[tuple[str, str | None], Approach | None] = {}
        self.worker_allowed = False  # may attempts' anchors be found in a worker process (`harvest.worker`)?
        self._worker: AnchorWorker | None = None

    # -- bookkeeping ---------------------------------------------------------------------------

    def count(self, key: str, example: str | None = None) -> None:
        self.counts[key] += 1
        if example and len(self.examples[key]) < 5:
            self.examples[key].append(example)

    def skip(self, reason: str, example: str) -> None:
        self.skipped[reason] += 1
        if len(self.examples[f"skipped:{reason}"]) < 5:
            self.examples[f"skipped:{reason}"].append(example)

    def provenance(self, commit: CommitInfo, harvester: str) -> dict[str, Any]:
        return {
            "actor": actor_id(commit.author_email or commit.author_name, self.actor_salt),
            "author_kind": "harvested",
            "source": "git",
            "repo": self.repo_name,
            "head_commit": commit.sha,
            "harvester": {"name": harvester, "version": HARVESTER_VERSION},
        }

    # -- history lookups -----------------------------------------------------------------------

    def on_default(self, sha: str) -> bool:
        """Is the commit reachable from the default branch (evidence that verifies: T2)?"""
        if sha not in self._on_default:
            tip = self.default_tip
            try:
                self._on_default[sha] = tip is not None and (sha == tip or self.repo.descendant_of(tip, sha))
            except (KeyError, ValueError, pygit2.GitError):
                self._on_default[sha] = False
        return self._on_default[sha]

    def mark_on_default(self, shas: Iterable[str]) -> None:
        """Commits the caller knows to be on the default branch (it walked them from its tip)."""
        self._on_default.update(dict.fromkeys(shas, True))

    def search_history(self, tips: list[str]) -> None:
        """Look up subjects, pull requests and CLs among the commits reachable from `tips` from now on
        (the harvest's default-branch pass must not find what only a branch holds)."""
        self.history_tips = tips
        self._subjects = self._prs = self._keys = None
        self._cls, self._titles = {}, {}
        self._walked = self._position = None

    def history_walked(self, oldest_first: list[CommitInfo]) -> None:
        """The commits reachable from `history_tips`, oldest first, as the harvest walks them: the
        lookups are indexed from them instead of a walk of their own (its reverse order, exactly)."""
        self._walked, self._position = oldest_first, None

    def mainline_commit(self, place: int) -> str:
        """The commit at `place` of the default branch's first-parent chain (`landing`'s places)."""
        return self._places()[place]

    def _chain(self) -> dict[str, int]:
        """The default branch's first-parent chain, sha -> place (oldest first), read once."""
        if self._mainline is None:
            tip = [self.default_tip] if self.default_tip else []
            self._mainline = {
                c.sha: n for n, c in enumerate(walk(self.repo, tip, first_parent=True, oldest_first=True))
            }
        return self._mainline

    def _places(self) -> list[str]:
        if self._mainline_shas is None:
            self._mainline_shas = list(self._chain())  # (in order: a dict keeps it)
        return self._mainline_shas

    def landing(self, sha: str) -> int | None:
        """Where a commit landed on the default branch: the place, on its first-parent chain (oldest
        first), of the commit that brought it there (itself, or the merge of its branch); None when
        the default branch does not hold it. The chain is read once, when first asked."""
        chain = self._chain()
        if sha in chain:
            return chain[sha]
        if not chain or not self.on_default(sha):
            return None
        shas = self._places()
        low, high = 0, len(shas) - 1  # the first landing holding it: every later one holds it too
        while low < high:
            middle = (low + high) // 2
            if self.is_ancestor(sha, shas[middle]):
                high = middle
            else:
                low = middle + 1
        return low

    def is_ancestor(self, a: str, b: str) -> bool:
        """Is commit `a` commit `b` or one of its ancestors (`walker.is_ancestor`)? Among the commits
        walked already, from their parents: an ancestor comes before in their order (parents first), so
        the way back from `b` is searched only down to `a`'s place. libgit2 reads every commit object on
        that way again (~15 ms a question on an 18,000-commit history)."""
        walked = self._walked
        if walked is None:
            return is_ancestor(self.repo, a, b)
        if self._position is None:
            self._position = {c.sha: n for n, c in enumerate(walked)}
        position = self._position
        start, goal = position.get(b), position.get(a)
        if start is None or goal is None:
            return is_ancestor(self.repo, a, b)
        if start < goal:
            return False
        seen, todo = {start}, [start]
        while todo:
            n = todo.pop()
            if n == goal:
                return True
            for parent in walked[n].parents:  # a parent not walked (past a shallow boundary) leads nowhere
                p = position.get(parent)
                if p is not None and p >= goal and p not in seen:
                    seen.add(p)
                    todo.append(p)
        return False

    def _index_history(self) -> None:
        """Subjects and PR numbers of every commit reachable from the history's tips, once."""
        subjects: dict[str, list[str]] = defaultdict(list)
        prs: dict[int, list[str]] = defaultdict(list)

        commits = reversed(self._walked) if self._walked is not None else walk(self.repo, self.history_tips)
        for commit in commits:
            subject = commit.subject
            if "…" in subject:  # a title GitHub cut: made whole from the body
                subject = full_subject(subject, commit.body)[0]
            if key := normalise_subject(subject):
                subjects[key].append(commit.sha)
            if (m := _PR_SUFFIX.search(commit.subject)) is not None:
                prs[int(m.group(2))].append(commit.sha)
            elif commit.subject.startswith("Merge pull request #"):
                number = commit.subject[len("Merge pull request #") :].split(" ", 1)[0]
                if number.isdigit():
                    prs[int(number)].append(commit.sha)
            title = merge_title(commit.subject, commit.body) if commit.is_merge else None
            if title and (key := normalise_subject(title)):
                self._titles.setdefault(key, []).append(commit.sha)
            if (cl := _review_link(commit.body)) is not None:
                self._cls.setdefault(cl, []).append(commit.sha)
        self._subjects, self._prs = dict(subjects), dict(prs)

    def by_subject(self, subject: str) -> list[str]:
        if self._subjects is None:
            self._index_history()
        assert self._subjects is not None
        return list(self._subjects.get(normalise_subject(subject), ()))

    def by_merge_title(self, title: str) -> list[str]:
        """The forge merges that landed a request titled `title` (GitHub's revert button quotes it)."""
        if self._subjects is None:
            self._index_history()
        return list(self._titles.get(normalise_subject(title), ()))

    def by_subject_prefix(self, prefix: str) -> list[str]:
        """Commits whose normalised subject starts with `prefix` (a normalised cut subject)."""
        if self._subjects is None:
            self._index_history()
        assert self._subjects is not None
        if self._keys is None:
            self._keys = sorted(self._subjects)
        from bisect import bisect_left

        out: list[str] = []
        for key in self._keys[bisect_left(self._keys, prefix) :]:
            if not key.startswith(prefix):
                break
            out.extend(self._subjects[key])
        return out

    def by_pr(self, number: int) -> list[str]:
        if self._prs is None:
            self._index_history()
        assert self._prs is not None
        return list(self._prs.get(number, ()))

    def by_cl(self, number: int) -> list[str]:
        """Commits whose review link (`_review_link`: Gerrit's `Reviewed-on: …/+/N`, Phabricator's
        `Differential Revision: DN`, Rietveld's `…/cl/N`) names this change number."""
        if self._prs is None:
            self._index_history()
        return list(self._cls.get(number, ()))

    def commit(self, sha: str) -> CommitInfo | None:

        try:
            c = self.repo[sha].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        subject, body = split_message(decode_message(c))
        return CommitInfo(
            str(c.id),
            tuple(str(p) for p in c.parent_ids),
            subject,
            body,
            subject + "\n\n" + body,
            c.author.name,
            c.author.email,
            int(c.author.time),
            int(c.commit_time),
        )

    # -- what a commit changed -----------------------------------------------------------------

    def approach(self, sha: str, parent: str | None = None) -> Approach | None:
        """The change `sha` made against `parent` (its first parent), read once per harvest: a revert's
        target is read again when a later revert of that revert asks whether it made attempts."""
        key = (sha, parent)
        if key not in self._approaches:
            try:
                self._approaches[key] = approach(self.repo, sha, parent, rules_of(self.ws.config))
            except (KeyError, ValueError, pygit2.GitError):
                self._approaches[key] = None
        return self._approaches[key]

    def attempt_anchors(
        self, change: Approach | None, at: str | None, with_change: str
    ) -> list[dict[str, Any]] | Later:
        """An attempt's anchors (`anchors` and `dependency_anchors`): now, or later from the worker
        process (`harvest.worker`), started for the first attempt with anchors to find."""

        if not self.worker_allowed or change is None or at is None:
            return self._attempt_anchors(change, at, with_change)
        if self._worker is None:
            from comind.harvest.worker import AnchorWorker

            try:
                self._worker = AnchorWorker(self._attempt_anchors, self._reopen)
            except OSError:  # no process to spare (a pids limit, no memory): found here, alike
                self.worker_allowed = False
                return self._attempt_anchors(change, at, with_change)
        return self._worker.submit(change, at, with_change, lambda: self._attempt_anchors(change, at, with_change))

    def _attempt_anchors(self, change: Approach | None, at: str | None, with_change: str) -> list[dict[str, Any]]:
        return self.anchors(change, at) + dependency_anchors(self, change, at, with_change)

    def _reopen(self) -> None:
        """A repository handle of this process's own (after a fork)."""
        self.repo = open_repo(self.repo.path)

    def close(self) -> None:
        """Stop the worker process, if one was started."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def anchors(self, change: Approach | None, at: str | None, side: str = "removed") -> list[dict[str, Any]]:
        """Anchors for what a change touched, resolved at commit `at`: the definitions holding its
        `side` lines (removed: `at` is the change's parent; added: `at` is the change itself) or,
        in a file where it has none, its insertions; else the files, else their folders."""
        if change is None or at is None:
            return [parse_anchor("repo:")]
        try:
            tree = self.repo[at].peel(pygit2.Commit).tree
        except (KeyError, ValueError, pygit2.GitError):
            return [parse_anchor("repo:")]

        anchors: list[dict[str, Any]] = []
        seen: set[str] = set()

        # Rule: a changelog, its fragment, a lockfile, a list of contributors or a vendoring manifest
        # records the change rather than being where it is (a release deletes the fragment, staling the
        # record days later; every change lands in the one changelog); a generated file or expected test
        # output is what running the code wrote; a README or the docs describe it: each anchored to only
        # when the change touched nothing more telling (`incidental.rank`).
        def where(f: FileChange) -> str:
            return (f.old_path or f.path) if side == "removed" else f.path

        try:
            ranks = [self._rank(tree, where(f)) for f in change.files]
            ranked = sorted(zip(ranks, change.files, strict=True), key=lambda p: -p[0])
            for _, group in groupby(ranked, key=lambda p: p[0]):  # the most telling files that can be anchored
                for _, f in group:
                    anchors += self._file_anchors(tree, change, f, where(f), side, at, seen)
                    if len(anchors) >= MAX_ANCHORS:
                        break
                if anchors:
                    break
        finally:
            self._read.clear()
            self._read_size = 0
        return anchors[:MAX_ANCHORS] or [parse_anchor("repo:")]

    def _bytes(self, blob: pygit2.Blob) -> bytes | None:
        """`_data(blob)`, read once while a change is anchored: its files are ranked, then read again to
        be anchored (each several times), and every file of a folder reads the same `.gitattributes`."""
        if blob.id in self._read:
            return self._read[blob.id]
        data = _data(blob)
        if self._read_size < MAX_READ:  # (a change to thousands of files)
            self._read[blob.id] = data
            self._read_size += len(data or b"")
        return data

    def _file_anchors(
        self, tree: pygit2.Tree, change: Approach, f: FileChange, path: str, side: str, at: str, seen: set[str]
    ) -> list[dict[str, Any]]:
        """The anchors of one file a change touched (none new to `seen`, which gets them): the
        definitions holding its `side` lines, else the file, else its folder."""
        anchors: list[dict[str, Any]] = []
        blob = _blob(tree, path)
        if blob is None:
            folder = path.rsplit("/", 1)[0] + "/" if "/" in path else None
            if folder and folder not in seen and is_dir(tree, folder.rstrip("/")):
                seen.add(folder)
                anchors.append(parse_anchor(folder) | {"commit": at})
            return anchors
        symbols: list[Definition] = []
        printed: dict[str, Definition] | None = {}
        other = (change.head, f.path) if at == change.base else (change.base, f.old_path or f.path)
        read = cache(partial(self._lines, blob, *other))
        if language_for_path(path) and not f.binary and (spans := touched_spans(f, side, read)):
            inserted = [s for s in spans if s.indent is not None]
            # (and the line before an insertion, which what it may extend ends at)
            wanted = [(s.lo, s.hi) for s in spans] + [(s.after, s.after) for s in inserted]
            with keeping_trees():  # (parsed once, asked again: an insertion's holder, an impl's type)
                definitions = self._definitions_at(path, blob, wanted)
                found = [
                    self._extended(path, blob, definitions, s, read) or innermost(definitions, s.lo, s.hi)
                    for s in spans
                ]
                found = [self._framing(path, blob, d) if d and not _SYMBOL.match(d.qualname) else d for d in found]
                symbols = sorted({d.qualname: d for d in found if d}.values(), key=lambda d: d.start_line)
                symbols = [d for d in symbols if _SYMBOL.match(d.qualname)]  # `impl Drop for Guard`: the file
                # Only the definitions anchored to are fingerprinted (a whole class's tokens, often).
                printed = self._fingerprinted(
                    path, blob, [d for d in symbols[:4] if f"{path}::{d.qualname}" not in seen]
                )
        if printed is None:  # (a file whose definitions cannot be read after all: anchored whole)
            symbols, printed = [], {}
        for d in symbols[:4]:
            key = f"{path}::{d.qualname}"
            if key not in seen:
                seen.add(key)
                try:
                    anchor = parse_anchor(key)
                except AnchorError:
                    continue
                anchors.append(anchor | {"commit": at, "blob": str(blob.id)} | fingerprint(printed[d.qualname]))
        if not symbols and path not in seen:
            seen.add(path)
            with contextlib.suppress(AnchorError):  # a path no anchor can name: the folder, else the repository
                anchors.append(parse_anchor(path) | {"commit": at, "blob": str(blob.id)})
        return anchors

    def _rank(self, tree: pygit2.Tree, path: str) -> int:
        """How telling `path` is as an anchor at `tree` (`incidental.rank`)."""
        parts = path.split("/")[:-1]
        texts = []
        for folder in ["/".join(parts[:i]) for i in range(len(parts) + 1)]:
            blob = _blob(tree, f"{folder}/.gitattributes" if folder else ".gitattributes")
            if blob is not None and (data := self._bytes(blob)) is not None:
                texts.append((folder, data.decode("utf-8", "replace")))

        def head() -> bytes | None:  # (None for a blob the clone lacks: a partial clone's promisor away)
            blob = _blob(tree, path)
            data = self._bytes(blob) if blob is not None else None
            return None if data is None or b"\0" in data[:8000] else data

        return rank(path, attributes(texts, path), head)

    def _lines(self, blob: pygit2.Blob, commit: str | None, path: str) -> tuple[list[bytes], list[bytes]]:
        """The lines of `blob` and of `path` at `commit`, split as git splits them (none for a
        blob the clone lacks or over MAX_BLOB)."""
        other = None
        if commit is not None:
            with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                other = _blob(self.repo[commit].peel(pygit2.Commit).tree, path)
        return _split(self._bytes(blob)), _split(self._bytes(other) if other is not None else None)

    def _extended(
        self,
        path: str,
        blob: pygit2.Blob,
        definitions: Iterable[Definition],
        span: Span,
        read: Callable[[], tuple[Sequence[bytes], ...]],
    ) -> Definition | None:
        """Rule: a block that fits in a definition or after its last line (blank lines between),
        indented deeper than its first line, extends it (a statement appended to a Python function; a
        brace or `end` ends others, so what follows is no deeper). Nested in what holds the span, it wins."""
        if span.indent is None:
            return None
        d = innermost(definitions, span.after)
        while d is not None and d.end_line == span.after and d.start_line <= span.lo:
            lines = read()[0]
            if d.start_line <= len(lines) and _indent(lines[d.start_line - 1]) < span.indent:
                return d
            if d.start_line == 1:
                return None
            # no deeper than that one: then the one holding it (a sibling ends before it starts)
            around = (d.start_line - 1, span.after)
            d = innermost(self._definitions_at(path, blob, [around]), *around)
        return None

    def _framing(self, path: str, blob: pygit2.Blob, d: Definition) -> Definition | None:
        """Rule: what lies in a block that names no symbol (a Rust `impl Foo`) is anchored to the
        symbol the block stands for, when the same file defines it (else to the file)."""
        language, data = language_for_path(path), self._bytes(blob)
        framed = language.framed(d.qualname) if language is not None else None
        line = first_line_of(path, data, framed) if framed and data is not None else None
        if line is None:
            return None
        found = innermost(self._definitions_at(path, blob, [(line, line)]), line, line)
        return found if found is not None and found.qualname == framed else None

    def _definitions_at(self, path: str, blob: pygit2.Blob, spans: list[tuple[int, int]]) -> tuple[Definition, ...]:
        """The file's definitions holding one of `spans` (all those `innermost` picks from), without
        fingerprints (`_fingerprinted`), read once per blob and set of spans; none when the clone lacks
        the blob or it is over MAX_BLOB."""
        key = (str(blob.id), path.rsplit(".", 1)[-1].lower(), tuple(sorted(set(spans))))
        found = self._definitions.get(key)
        if found is None:
            data = self._bytes(blob)
            found = () if data is None else definitions_at(path, data, (), key[2], fingerprints=False)
            self._definitions[key] = found
        return found

    def _fingerprinted(self, path: str, blob: pygit2.Blob, chosen: list[Definition]) -> dict[str, Definition] | None:
        """Qualname -> each of `chosen` (from `_definitions_at`) with its fingerprints, read once per
        blob; None when they cannot be read."""
        kind = (str(blob.id), path.rsplit(".", 1)[-1].lower())
        printed = {d.qualname: self._printed[kind, d.qualname] for d in chosen if (kind, d.qualname) in self._printed}
        todo = [d for d in chosen if d.qualname not in printed]
        if todo:
            data = self._bytes(blob)
            found = None if data is None else fingerprinted(path, data, todo)
            if found is None:
                return None
            for d in found:
                printed[d.qualname] = self._printed[kind, d.qualname] = d
        return printed


class Span(NamedTuple):
    """Lines a definition must hold to be anchored to; for an insertion placed lowest of where it
    fits, `indent` is its first line's and `after` the last line above it that is not blank."""

    lo: int
    hi: int
    indent: int | None = None
    after: int = 0


def touched_spans(f: FileChange, side: str, read: Callable[[], tuple[Sequence[bytes], Sequence[bytes]]]) -> list[Span]:
    """The lines of the file at `side` a change touched, as spans a definition must hold: each of
    its `side` lines, else (it only inserted there) the lines around each insertion, wherever the
    diff could have put it (`read()`: the file's lines at `side` and at the other, as git numbers
    them). A block that starts as the line below it ends (a decorator) slides: only what holds
    every place it fits holds it."""
    here, there = (f.removed, f.added) if side == "removed" else (f.added, f.removed)
    if here:
        return [Span(ln.lineno, ln.lineno) for ln in here]
    (lines, other), spans, style = read(), [], comment_style(f.path)
    before = 0  # inserted lines above the block: the i-th follows lineno - 1 - i lines of this side
    for block in _blocks(sorted(there, key=lambda ln: ln.lineno)):
        texts = [other[ln.lineno - 1] if ln.lineno <= len(other) else None for ln in block]  # None: unread
        k = block[0].lineno - 1 - before
        before += len(block)
        if k > len(lines):  # (a file this clone cannot read: nothing to slide over, nor to anchor to)
            continue
        up = next((t for t in range(k) if lines[k - t - 1] != texts[-1 - t % len(texts)]), k)
        down = next((t for t in range(len(lines) - k) if lines[k + t] != texts[t % len(texts)]), len(lines) - k)
        if k - up > 0:
            last = texts[down % len(texts) :] + texts[: down % len(texts)]  # the block placed lowest
            # its first line of code sets its indent (a comment may sit deeper than what follows)
            code = [t for t in last if t is None or not is_trivial(normalise_line(t.decode("utf-8", "replace")), style)]
            first = next((t for t in code or last if t is None or t.strip()), None)
            after = k + down
            while after > k - up and not lines[after - 1].strip():
                after -= 1
            spans.append(Span(k - up, k + down + 1, _indent(first) if first is not None else None, after))
    return spans


def _split(data: bytes | None) -> list[bytes]:
    """Lines as git numbers them (no empty one after a final newline)."""
    lines = (data or b"").split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" \t"))


def _blocks(lines: list[Line]) -> Iterator[list[Line]]:
    """Runs of consecutive line numbers (in a run, number less position is constant)."""
    for _, run in groupby(enumerate(lines), key=lambda pair: pair[1].lineno - pair[0]):
        yield [ln for _, ln in run]


def dependency_anchors(
    ctx: HarvestContext, change: Approach | None, before: str | None, after: str
) -> list[dict[str, Any]]:
    """`dep:` anchors for the direct dependencies a change moved, each with the exact version it
    moved to as its range: a later change moving there again re-proposes the approach. What a
    lockfile alone moves (transitive crates, `winapi-i686-pc-windows-gnu` 0.4.0, its only version)
    follows from the direct moves, and comes back with any change that pulls the same crate in."""

    if change is None or before is None or not any(is_manifest(f.path) for f in change.files):
        return []
    # the change's own two trees (a partial revert's are not): the files it lists are all that differ
    paths = [p for f in change.files for p in (f.path, f.old_path) if p]
    try:
        old, new, direct = moved(
            ctx.repo[before].peel(pygit2.Tree),
            ctx.repo[after].peel(pygit2.Tree),
            paths if {change.base, change.head} == {before, after} else None,
        )
    except (KeyError, ValueError, pygit2.GitError):
        return []
    anchors = []
    for (ecosystem, name), (version, _path) in sorted(new.items()):
        if (ecosystem, name) in direct and old.get((ecosystem, name), (None,))[0] != version:
            anchors.append(
                parse_anchor(f"dep:{ecosystem}/{name}@{EXACT_RANGE[ecosystem]}{version}") | {"commit": before}
            )
    return anchors[:MAX_ANCHORS]


def fingerprint_json(change: Approach) -> dict[str, Any]:
    """The approach as stored in an attempt: non-trivial lines only, bounded in count and length. A
    lockfile or changelog is listed without its lines: the matcher reads none of them (a dependency
    move is matched by version, from the anchors), and an example folder with its own 3,000-line
    lockfile would spend the whole budget before its code."""
    budget = MAX_FINGERPRINT_LINES
    files = []
    for f in change.files:
        kept = not bookkeeping(f.path)
        added = [_stored_line(ln.lineno, ln.text) for ln in f.added if kept and not ln.trivial]
        removed = [_stored_line(ln.lineno, ln.text) for ln in f.removed if kept and not ln.trivial]
        added, removed = added[:budget], removed[: max(0, budget - len(added))]
        budget -= len(added) + len(removed)
        files.append(
            {
                "path": f.path,
                "old_path": f.old_path,
                "status": f.status,
                "binary": f.binary,
                "skipped": f.skipped,
                "added": added,
                "removed": removed,
            }
        )
        if budget <= 0:
            break
    data = {"format": FORMAT, "base": change.base, "head": change.head, "skipped": change.skipped, "files": files}
    if budget <= 0:
        data["truncated"] = True
    return data


def _stored_line(lineno: int, text: str) -> list[Any]:
    """A fingerprint line as an attempt stores it: [line, text, trivial]. A line carrying a secret
    (test fixtures write `password: "hunter22"`) or invisible controls is kept with the secret
    redacted and the controls gone, so it can be read; it is marked trivial, so the matcher
    ignores it as before (a redacted line matches nothing a change re-adds)."""
    cut = text[:MAX_LINE_CHARS]
    clean = clean_text(text[: MAX_LINE_CHARS + 200])[:MAX_LINE_CHARS]  # a secret across the cut is found whole
    return [lineno, clean, clean != cut]


def _blob(tree: pygit2.Tree, path: str) -> pygit2.Blob | None:
    try:
        obj = tree[path]
    except KeyError:
        return None
    return obj if isinstance(obj, pygit2.Blob) else None


def _data(blob: pygit2.Blob) -> bytes | None:
    """The blob's bytes; None over MAX_BLOB, or when the clone lacks it (the file is anchored whole).
    (Read once: pygit2 reads the object again for `size` as for `data`, and as much.)"""
    try:
        data = blob.data
    except KeyError:  # (pygit2's NotFoundError)
        return None
    return data if len(data) <= MAX_BLOB else None


def first_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split("\n", 1)[0].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
