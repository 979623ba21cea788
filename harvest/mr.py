"""Merge requests as a source of records: Lore in descriptions and resolved review threads,
``/comind`` commands, merged reverts and closed dead ends.

What becomes a record (DESIGN §3, §8):

* Lore keys (``comind.harvest.lorekeys``) in a merge request's description and in the comments
  of its *resolved* review threads: ``Constraint`` -> constraint; ``Rejected`` -> one decision (the
  merge request chosen over the rejected options) plus one abandoned attempt per option;
  ``Directive`` -> gotcha (dormant after its ``[until:DATE]``); ``Not-tested`` -> question.
* ``/comind`` commands written by people with write access: the very records the bot made when
  it answered them (``comind.harvest.commands``), so a fresh runner re-derives what reviewers
  recorded.
* A merged revert (``Reverts owner/repo#N`` or ``This reverts merge request !N`` in the
  description, or a title ``Revert "…"``) -> an attempt with outcome ``reverted`` whose approach
  fingerprint is the reverted merge request's diff (or, when it cannot be found, the revert's
  own diff read backwards).
* A closed, unmerged merge request labelled ``dead_end_label`` (default ``dead-end``) -> an
  attempt with outcome ``abandoned`` whose approach fingerprint is its diff.

Lore written by someone without write access (the description of a merge request not merged yet,
a comment) is trust T0: quarantined, shown only when asked for, until a writer confirms it. One
run writes at most ``records_per_merge_request`` records of one merge request and
``records_per_author`` of one author (``comind.harvest.budget``); the rest are counted, not written.

Records cite the comment or merge request URL as evidence and are anchored to the thread's line
(``path:line``) or to the merge request's changed files (at most MAX_FILE_ANCHORS). Ids are
UUIDv5 of ``mr:<forge>:<project>:<number>:…`` keys and a record whose id is already stored is
not written again, so re-harvesting writes nothing new even after a description was edited.

Incremental: the newest ``updated_at`` seen is kept per forge and project in
``<cache>/mr-harvest.json`` and the next run lists only merge requests updated since (the bound is
inclusive: the boundary merge request is seen again, harmlessly). The watermark moves only after
a run that went through every merge request it listed. Because a merge request seen is not read
again, a change of the cleaning rules cleans the harvest cache in place instead (`clean_cache`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.ledger import Ledger
    from comind.workspace import Workspace

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from comind.actors import actor_id
from comind.anchors import AnchorError, parse_anchor
from comind.errors import ComindError
from comind.harvest.approach import Approach, FileChange, Line, comment_style, is_trivial, normalise_line
from comind.harvest.budget import Budget
from comind.harvest.commands import (
    CommandError,
    Origin,
    Resolver,
    answers,
    command_records,
    parse_commands,
    revision,
    timestamp,
)
from comind.harvest.context import fingerprint_json
from comind.harvest.lore import lore_records
from comind.harvest.trailers import lore_atom
from comind.mergerequests import MergeRequest, MergeRequestFile, Note, Thread, note_key
from comind.records import TITLE_MAX, Record, harvested_id, new_record
from comind.sanitize import redact_people, rules_digest
from comind.store import StoreError

HARVESTER = {"name": "mr", "version": "1"}
STATE_FILE = "mr-harvest.json"
CLEANED_FILE = "harvest-cleaned"  # the cleaning rules (`rules_digest`) the harvest cache was cleaned by
MAX_FILE_ANCHORS = 20
MAX_APPROACH_FILES = 200  # files in an attempt's fingerprint (its lines are bounded by the harvest context)


class MergeRequestSource(Protocol):
    """What the harvester reads from a forge; ``comind.bot``'s forges satisfy it."""

    name: str

    def bot_login(self) -> str: ...

    def merge_request(self, number: int) -> MergeRequest: ...

    def merge_requests(self, updated_after: datetime | None = None, state: str = "all") -> Iterator[MergeRequest]: ...

    def changed_files(self, number: int) -> Iterator[MergeRequestFile]: ...

    def notes(self, number: int) -> list[Note]: ...

    def can_write(self, login: str) -> bool: ...


def project_of(source: object, default: str = "") -> str:
    """The project part of record ids: GitHub's ``owner/name``, GitLab's project id or path."""
    for attribute in ("repository", "project"):
        value = getattr(source, attribute, None)
        if value:
            return str(value)
    if default:
        return default
    raise ComindError(f"{source!r}: cannot tell which project it serves")


@dataclass
class ThreadHarvestResult:
    merge_requests: int = 0
    derived: int = 0  # records derived (new or not)
    written: int = 0  # records written now
    skipped: list[str] = field(default_factory=list)  # what could not become a record, and why
    watermark: datetime | None = None
    over_budget: str = ""  # what the budget kept out (`Budget.summary`), "" when nothing


# --- approach fingerprints -----------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_STATUS = {"added": "A", "removed": "D", "renamed": "R", "modified": "M"}


def patch_lines(patch: str, path: str) -> tuple[list[Any], list[Any]]:
    """The added (new-side numbers) and removed (old-side numbers) lines of a forge's patch, as
    ``comind.harvest.approach.Line`` normalised and marked trivial exactly as a git diff's are."""

    style = comment_style(path)
    added: list[Line] = []
    removed: list[Line] = []
    old = new = 0
    in_hunk = False
    for text in patch.splitlines():
        header = _HUNK.match(text)
        if header:
            old, new, in_hunk = int(header.group(1)), int(header.group(2)), True
        elif not in_hunk or text.startswith("\\"):
            continue  # a ---/+++ header before the first hunk, "\ No newline at end of file"
        elif text.startswith("+"):
            line = normalise_line(text[1:])
            added.append(Line(new, line, is_trivial(line, style)))
            new += 1
        elif text.startswith("-"):
            line = normalise_line(text[1:])
            removed.append(Line(old, line, is_trivial(line, style)))
            old += 1
        else:
            old, new = old + 1, new + 1
    return added, removed


def approach_of_files(files: Iterable[MergeRequestFile], *, base: str | None, head: str, invert: bool = False) -> Any:
    """A merge request's change as a ``comind.harvest.approach.Approach``, from the forge's patches
    (the change need not be in the local clone: a dead end was never merged). ``invert`` reads a
    diff backwards: a revert's diff is the reverted change turned around. At most
    MAX_APPROACH_FILES files; a file without a patch (binary, too large) is listed as skipped."""

    out: list[FileChange] = []
    skipped = 0
    for changed in files:
        if len(out) == MAX_APPROACH_FILES:
            break
        status = _STATUS.get(changed.status, "M")
        old_path = changed.old_path if status == "R" else None
        if invert:
            status = {"A": "D", "D": "A"}.get(status, status)
        if changed.patch is None:
            skipped += 1
            out.append(FileChange(changed.path, old_path, status, skipped=True))
            continue
        added, removed = patch_lines(changed.patch, changed.path)
        if invert:
            added, removed = removed, added
        out.append(FileChange(changed.path, old_path, status, added=tuple(added), removed=tuple(removed)))
    return Approach(base, head, tuple(out), skipped)


def fingerprint_of_files(
    files: list[MergeRequestFile], *, base: str | None, head: str, invert: bool = False
) -> dict[str, Any]:
    """The approach fingerprint an attempt stores, in the same form as the git harvesters'."""

    fingerprint = fingerprint_json(approach_of_files(files, base=base, head=head, invert=invert))
    if len(files) > MAX_APPROACH_FILES:
        fingerprint["truncated"] = True
    return fingerprint


# --- revert detection ------------------------------------------------------------------------------

# (`^[^\S\n]*`, not `^\s*`: from every line start, `\s*` ran over all the blank lines below it)
_REVERTS = re.compile(r"^[^\S\n]*Reverts\s+(?P<repo>[\w.-]+/[\w.-]+)?#(?P<n>\d+)\b", re.M | re.I)
_REVERTS_COMMIT = re.compile(r"^[^\S\n]*This reverts commit [0-9a-f]{7,64}\.?[^\S\n]*$", re.M | re.I)
_GITLAB_REVERTS = re.compile(r"\bThis reverts merge request\s+(?P<repo>[\w./-]+)?!(?P<n>\d+)\b", re.I)
_REVERT_TITLE = re.compile(r'^\s*Revert\s+"(?P<title>.+)"\s*$', re.S)


def reverted_number(mr: MergeRequest, project: str) -> tuple[bool, int | None, str | None]:
    """(is a revert, the reverted merge request's number if named here, the reverted title)."""
    title = _REVERT_TITLE.match(mr.title)
    for pattern in (_REVERTS, _GITLAB_REVERTS):
        found = pattern.search(mr.description)
        if found:
            same = not found.group("repo") or found.group("repo").lower() == project.lower()
            return True, int(found.group("n")) if same else None, title.group("title") if title else None
    return bool(title), None, title.group("title") if title else None


def _reason(description: str) -> str:
    """The description without revert boilerplate, as the reason a change was reverted/abandoned."""
    text = _REVERTS.sub("", description)
    text = _GITLAB_REVERTS.sub("", text)
    text = _REVERTS_COMMIT.sub("", text)

    return " ".join(redact_people(text).split())[:1000]


def threads_of(notes: Iterable[Note]) -> list[Thread]:
    """The resolvable threads among a merge request's comments (one ``notes`` call serves both
    the threads and the commands: half the requests of asking for threads separately)."""
    groups: dict[str, list[Note]] = {}
    for note in notes:
        if note.thread_id and note.resolved is not None:
            groups.setdefault(note.thread_id, []).append(note)
    threads = []
    for thread_id, members in groups.items():
        first = next((m for m in members if m.in_reply_to is None), members[0])
        threads.append(Thread(thread_id, bool(first.resolved), first.path, first.line, tuple(members)))
    return threads


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rstrip() + "…"


def _lore_atom(text: str) -> Any:
    """The Lore content of a comment or description (a synthetic subject line goes first: a
    commit message's first paragraph never holds trailers)."""

    return lore_atom("comment\n\n" + text)


# --- the harvester ------------------------------------------------------------------------------


class MergeRequestHarvester:
    """Harvests one forge project into ``ws.harvest_store`` (or ``ws.store`` with ``publish``)."""

    def __init__(
        self,
        ws: Workspace,
        source: MergeRequestSource,
        *,
        project: str | None = None,
        publish: bool = False,
        ledger: Ledger | None = None,
    ) -> None:
        self.ws = ws
        self.source = source
        self.project = project or project_of(source, ws.repo_name)
        self.store = ws.store if publish else ws.harvest_store
        self._ledger = ledger
        self._resolver: Resolver | None = None
        self._made: list[Record] = []  # records derived before the resolver was needed
        self._writers: dict[str, bool] = {}
        self._bot: str | None = None
        self._bot_known = False
        self._known: set[str] | None = None
        self.budget = Budget.from_config(ws.config)  # one run: the author caps span its merge requests
        self._cleaned = False

    # -- state ---------------------------------------------------------------------------------

    @property
    def state_path(self) -> Any:
        return self.ws.cache_dir / STATE_FILE

    def state_key(self, comments: bool = True) -> str:
        key = f"{self.source.name}:{self.project}"
        return key if comments else f"{key}:outcomes"

    def _state(self) -> dict[str, str]:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def watermark(self, comments: bool = True) -> datetime | None:
        value = self._state().get(self.state_key(comments))
        try:
            return datetime.fromisoformat(value) if value else None
        except ValueError:
            return None

    def _save_watermark(self, moment: datetime, comments: bool) -> None:
        state = self._state()
        state[self.state_key(comments)] = moment.isoformat()
        tmp = self.state_path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.state_path)

    def clean_cache(self) -> None:
        """Clean the harvest cache's records again when the cleaning rules changed since it was last
        cleaned: a merge request already harvested is not read again (the watermark), so a secret an
        older version's rules missed would stay in the cache, and its record, which readers now refuse,
        would never be written again. Local work only; once per rules."""
        if self._cleaned:
            return
        self._cleaned = True
        mark, digest = self.ws.cache_dir / CLEANED_FILE, rules_digest()
        try:
            if mark.read_text(encoding="utf-8").strip() == digest:
                return
        except OSError:
            pass
        self.ws.harvest_store.reclean_derived()
        tmp = mark.with_name(f".{CLEANED_FILE}.{os.getpid()}.tmp")
        tmp.write_text(digest + "\n", encoding="utf-8")
        os.replace(tmp, mark)

    # -- helpers -------------------------------------------------------------------------------

    @property
    def resolver(self) -> Resolver:
        if self._resolver is None:
            ledger = self._ledger
            if ledger is None:
                ledger = self.ws.ledger()
                ledger.sync(warn=False)
                self._ledger = ledger
            self._resolver = Resolver(ledger)
            self._resolver.add(self._made)
        return self._resolver

    def _bot_login(self) -> str | None:
        if not self._bot_known:
            try:
                self._bot = self.source.bot_login()
            except ComindError:
                self._bot = None  # cannot tell: no comment is skipped as the bot's own
            self._bot_known = True
        return self._bot

    def can_write(self, login: str) -> bool:
        if login not in self._writers:
            self._writers[login] = self.source.can_write(login)
        return self._writers[login]

    def known_ids(self) -> set[str]:
        """Ids already stored (either store) or erased: such records are not written again."""
        if self._known is None:
            known: set[str] = set()
            for store in {id(s): s for s in (self.ws.store, self.ws.harvest_store)}.values():
                known |= {key[:36] for key in store.inbox_keys()}
            known |= self.store.erased_ids()
            self._known = known
        return self._known

    def _write(self, records: Iterable[Record], result: ThreadHarvestResult) -> None:
        """Write one merge request's records, within the budget (`comind.harvest.budget`)."""
        for record in self.budget.merge_request(records):
            result.derived += 1
            if self._resolver is not None:
                self._resolver.add([record])
            else:
                self._made.append(record)
            if record.id in self.known_ids():
                continue
            try:
                if self.store.put(record):
                    result.written += 1
            except StoreError as exc:
                result.skipped.append(str(exc))
            self.known_ids().add(record.id)

    def _provenance(self, login: str) -> dict[str, Any]:

        return {
            "actor": actor_id(login, self.ws.actor_salt()),
            "author_kind": "harvested",
            "source": "mr",
            "repo": self.ws.repo_name,
            "harvester": dict(HARVESTER),
        }

    def _key(self, mr: MergeRequest, *parts: object) -> str:
        return ":".join(["mr", self.source.name, self.project, str(mr.number), *map(str, parts)])

    # -- running -------------------------------------------------------------------------------

    def harvest(self, *, comments: bool = True) -> ThreadHarvestResult:
        """Every merge request updated since the watermark; then the watermark moves on.

        ``comments=False`` is the cheap sweep the bot runs on every pull request: descriptions,
        merged reverts and dead ends, from the listing alone (plus the files of those few), with
        no request per merge request for its comments; it keeps a watermark of its own.
        """
        self.clean_cache()
        result = ThreadHarvestResult()
        newest = after = self.watermark(comments)
        for mr in self.source.merge_requests(updated_after=after):
            result.merge_requests += 1
            self._write(self.derive(mr, result, comments=comments), result)
            newest = mr.updated_at if newest is None else max(newest, mr.updated_at)
        if newest is not None and newest != after:
            self._save_watermark(newest, comments)
        result.watermark = newest
        result.over_budget = self.budget.summary()
        return result

    def harvest_merge_request(self, mr: MergeRequest | int, notes: list[Note] | None = None) -> ThreadHarvestResult:
        """One merge request (the bot's run on it, which passes the comments it already read);
        the watermark is left alone."""
        self.clean_cache()
        if isinstance(mr, int):
            mr = self.source.merge_request(mr)
        result = ThreadHarvestResult(merge_requests=1)
        self._write(self.derive(mr, result, notes), result)
        result.over_budget = self.budget.summary()
        return result

    def derive(
        self,
        mr: MergeRequest,
        result: ThreadHarvestResult | None = None,
        notes: list[Note] | None = None,
        *,
        comments: bool = True,
    ) -> Iterator[Record]:
        """The records of one merge request, in an order where a command sees the records
        earlier comments made (the caller writes each before asking for the next)."""
        skipped = result.skipped if result is not None else []
        files: list[MergeRequestFile] | None = None

        def changed() -> list[MergeRequestFile]:
            nonlocal files
            if files is None:
                files = list(self.source.changed_files(mr.number))
            return files

        def file_anchors() -> list[dict[str, Any]]:
            return self._file_anchors(changed())

        if mr.description.strip():
            atom = _lore_atom(mr.description)
            if atom.has_lore:
                yield from self._lore_records(
                    atom,
                    mr,
                    self._key(mr, "description", "lore"),
                    anchors=file_anchors,
                    login=mr.author,
                    evidence=[{"type": "mr", "ref": mr.web_url}],
                    created_at=mr.updated_at,
                    skipped=skipped,
                    # merging it is a writer's word for the description; until then, its author's
                    trust=1 if mr.merged or self.can_write(mr.author) else 0,
                )
        me = self._bot_login()
        if notes is None:
            notes = self.source.notes(mr.number) if comments else []
        for thread in threads_of(notes):
            if not thread.resolved:
                continue
            for note in thread.notes:
                if note.author == me or not note.body.strip():
                    continue
                atom = _lore_atom(note.body)
                if not atom.has_lore:
                    continue
                anchors = self._thread_anchors(thread) or file_anchors
                yield from self._lore_records(
                    atom,
                    mr,
                    self._key(mr, note_key(note), "lore"),
                    anchors=anchors,
                    login=note.author,
                    evidence=[{"type": "url", "ref": note.url}, {"type": "mr", "ref": mr.web_url}],
                    created_at=note.created_at,
                    skipped=skipped,
                    trust=1 if self.can_write(note.author) else 0,
                )
        yield from self._command_records(mr, notes, skipped)
        if mr.merged:
            yield from self._revert(mr, changed, skipped)
        elif mr.state == "closed" and self._dead_end_label(mr):
            yield from self._dead_end(mr, changed(), skipped)

    # -- pieces --------------------------------------------------------------------------------

    def _dead_end_label(self, mr: MergeRequest) -> bool:
        wanted = str(self.ws.config.dead_end_label).strip().lower()
        return bool(wanted) and any(label.strip().lower() == wanted for label in mr.labels)

    @staticmethod
    def _file_anchors(files: list[MergeRequestFile]) -> list[dict[str, Any]]:

        anchors: list[dict[str, Any]] = []
        for changed in files:
            if len(anchors) == MAX_FILE_ANCHORS:
                break
            try:
                anchor = parse_anchor(changed.path)
            except AnchorError:
                continue
            if anchor.get("scope") == "file" and "line" not in anchor:
                anchors.append(anchor)
        return anchors or [parse_anchor("repo:")]

    @staticmethod
    def _thread_anchors(thread: Thread) -> list[dict[str, Any]]:

        if not thread.path:
            return []
        try:
            return [parse_anchor(f"{thread.path}:{thread.line}" if thread.line else thread.path)]
        except AnchorError:
            return []

    def _lore_records(
        self,
        atom: Any,
        mr: MergeRequest,
        key: str,
        *,
        anchors: Any,
        login: str,
        evidence: list[dict[str, str]],
        created_at: datetime,
        skipped: list[str],
        trust: int = 1,
    ) -> Iterator[Record]:
        """Records from Lore keys, mapped exactly as the commit Lore harvester maps them
        (``comind.harvest.lore.lore_records``); ids ``<key>:<n>``. Trust T1: asserted in a comment;
        T0 (quarantined until a writer confirms it) when its author cannot write to the project."""

        where = anchors() if callable(anchors) else anchors
        for kind, result in lore_records(
            atom,
            key,
            chosen=mr.title or f"!{mr.number}",
            cause=f"{mr.title} (!{mr.number})",
            anchors=where,
            evidence=evidence,
            provenance=self._provenance(login),
            created_at=timestamp(created_at),
            trust=trust,
        ):
            if isinstance(result, ComindError):
                skipped.append(f"{mr.web_url}: {kind} from Lore: {result}")
                continue
            yield result

    def _command_records(self, mr: MergeRequest, notes: list[Note], skipped: list[str]) -> Iterator[Record]:
        me = self._bot_login()
        answered = answers(notes, me)
        for note in notes:
            if note.author == me:
                continue
            parsed = parse_commands(note.body)
            if not any(not isinstance(p, CommandError) and p.writes for p in parsed):
                continue
            if not self.can_write(note.author):
                continue
            for index, command in enumerate(parsed):
                if isinstance(command, CommandError) or not command.writes:
                    continue
                origin = Origin(
                    self.source.name,
                    self.project,
                    mr.number,
                    mr.web_url,
                    note,
                    index,
                    repo=self.ws.repo_name,
                    salt=self.ws.actor_salt(),
                    revision=revision(note, answered),
                )
                try:
                    records = command_records(self.ws, command, origin, self.resolver)
                except CommandError as exc:
                    skipped.append(f"{note.url}: {exc.problem}")
                    continue
                yield from records

    def _attempt(
        self,
        mr: MergeRequest,
        key: str,
        *,
        title: str,
        approach: str,
        outcome: str,
        fingerprint: dict[str, Any],
        anchors: list[dict[str, Any]],
        evidence: list[dict[str, str]],
        reason: str,
    ) -> Record:
        fields = {"approach": approach[:1000], "outcome": outcome, "fingerprint": fingerprint, "reason": reason or None}
        return new_record(
            "attempt",
            title=_title(title),
            anchors=anchors,
            evidence=evidence,
            fields=fields,
            provenance=self._provenance(mr.author),
            created_at=timestamp(mr.updated_at),
            record_id=harvested_id(key),
            valid_from=mr.merge_commit_sha or None,
        )

    def _revert(self, mr: MergeRequest, changed: Any, skipped: list[str]) -> Iterator[Record]:
        is_revert, number, reverted_title = reverted_number(mr, self.project)
        if not is_revert:
            return
        reverted: MergeRequest | None = None
        files: list[MergeRequestFile] = []
        if number is not None and number != mr.number:
            try:
                reverted = self.source.merge_request(number)
                files = list(self.source.changed_files(number))
            except ComindError as exc:  # gone, or not visible: read the revert's own diff backwards
                skipped.append(f"{mr.web_url}: reverted !{number} not readable ({exc}); using the revert's diff")
                reverted, files = None, []
        invert = not files
        if invert:
            files = changed()
        what = reverted.title if reverted else reverted_title or mr.title
        where = f" (!{reverted.number})" if reverted else ""
        paths = ", ".join(f.path for f in files[:10]) + (", …" if len(files) > 10 else "")
        evidence = [{"type": "mr", "ref": mr.web_url}]
        if reverted is not None:
            evidence.append({"type": "mr", "ref": reverted.web_url})
        if mr.merge_commit_sha:
            evidence.append({"type": "commit", "ref": mr.merge_commit_sha})
        try:
            yield self._attempt(
                mr,
                self._key(mr, "revert"),
                title=f"Reverted: {what}",
                outcome="reverted",
                approach=f"{what}{where}; changed {paths or 'no files'}",
                # read backwards, the revert's diff has the reverted change's lines at the revert's base
                fingerprint=fingerprint_of_files(
                    files,
                    base=reverted.base_sha if reverted else None,
                    head=(reverted.merge_commit_sha or reverted.head_sha) if reverted else (mr.base_sha or mr.head_sha),
                    invert=invert,
                ),
                anchors=self._file_anchors(files),
                evidence=evidence,
                reason=_reason(mr.description),
            )
        except ComindError as exc:
            skipped.append(f"{mr.web_url}: revert: {exc}")

    def _dead_end(self, mr: MergeRequest, files: list[MergeRequestFile], skipped: list[str]) -> Iterator[Record]:
        paths = ", ".join(f.path for f in files[:10]) + (", …" if len(files) > 10 else "")
        try:
            yield self._attempt(
                mr,
                self._key(mr, "dead-end"),
                title=f"Abandoned: {mr.title}",
                outcome="abandoned",
                approach=f"{mr.title} (!{mr.number}); changed {paths or 'no files'}",
                fingerprint=fingerprint_of_files(files, base=mr.base_sha, head=mr.head_sha),
                anchors=self._file_anchors(files),
                evidence=[{"type": "mr", "ref": mr.web_url}],
                reason=_reason(mr.description),
            )
        except ComindError as exc:
            skipped.append(f"{mr.web_url}: dead end: {exc}")


def harvest(
    ws: Workspace,
    source: MergeRequestSource,
    *,
    project: str | None = None,
    publish: bool = False,
    comments: bool = True,
) -> ThreadHarvestResult:
    """Harvest every merge request updated since the last run (see the module docstring)."""
    return MergeRequestHarvester(ws, source, project=project, publish=publish).harvest(comments=comments)


__all__ = [
    "HARVESTER",
    "MergeRequestHarvester",
    "MergeRequestSource",
    "ThreadHarvestResult",
    "approach_of_files",
    "fingerprint_of_files",
    "harvest",
    "patch_lines",
    "project_of",
    "reverted_number",
    "threads_of",
]
