"""Records made into what an agent is shown (`render.Entry`): trust as agents see it, the
evidence in a line, the lines to read."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from comind.anchors import format_anchor
from comind.records import Record, gave_no_reason, restates
from comind.status import RelationIndex, Status

from .render import Entry, verify_line

SURFACED = ("active", "stale")  # what agents are shown unprompted: live, possibly drifted (labelled)
MIN_TRUST = 2  # hooks surface T2 and above (DESIGN §8)


def person_confirmed(relations: Iterable[Record]) -> set[str]:
    """Ids of the records a person confirmed (a `confirms` relation by a human, not retracted)."""
    index = RelationIndex.build(relations)
    return {
        target
        for target, found in index.by_target.items()
        if any(r.fields["relation"] == "confirms" and r.provenance.get("author_kind") == "human" for r in found)
    }


def agent_trust(record: Record, status: Status, confirmed: bool) -> int:
    """The trust an agent is shown: what an agent wrote stays T1 until a person confirms it, so
    no agent's claim reaches another agent as evidenced or enforced on its own say."""
    if record.provenance.get("author_kind") == "agent" and not confirmed:
        return min(status.trust, 1)
    return status.trust


def subject_anchor(record: Record) -> dict[str, Any] | None:
    """The anchor a record is shown by: of its subjects, the first symbol, else the first file in a
    language comind reads, else the first (an attempt that also touched AUTHORS and a changelog
    is shown by its code)."""
    return next(iter(subjects_in_order(record)), None)


def subjects_in_order(record: Record) -> list[dict[str, Any]]:
    """A record's subjects (all its anchors when none is one) as `subject_anchor` prefers them:
    symbols, then files in a language comind reads, then the rest, each in the order written."""
    subjects = [a for a in record.anchors if a.get("role", "subject") == "subject"] or record.anchors
    if len(subjects) < 2:
        return list(subjects)
    from comind.languages import language_for_path  # only to choose among files: a hook starts without it

    def rank(anchor: Mapping[str, Any]) -> int:
        if anchor.get("scope") == "symbol":
            return 0
        return 1 if anchor.get("scope") == "file" and language_for_path(str(anchor.get("path", ""))) else 2

    return sorted(subjects, key=rank)


# what configures the project's tools, not its code: CI, hooks, bots (dependency manifests aside)
_TOOL_CONFIG = re.compile(
    r"^\.(?:github|gitlab|circleci|buildkite)/|(?:^|/)(?:\.pre-commit-(?:config|hooks)\.ya?ml|\.gitlab-ci\.ya?ml"
    r"|\.travis\.ya?ml|azure-pipelines\.ya?ml|renovate\.json5?|\.renovaterc(?:\.json)?|Jenkinsfile)$"
)


# how git (and libgit2) diffs a submodule: its commit, one line a side (`-dirty` for a modified checkout)
_SUBMODULE_LINE = re.compile(r"Subproject commit (?:[0-9a-f]{40}|[0-9a-f]{64})(?:-dirty)?")


def moves_submodules_only(record: Record) -> bool:
    """Does the record's change (an attempt's fingerprint) only move submodules to other commits? Its
    anchors cannot say it: a submodule is no file, so the change is anchored to the folder holding it."""
    fingerprint = record.fields.get("fingerprint")
    if not isinstance(fingerprint, dict) or fingerprint.get("truncated"):
        return False
    files = [f for f in fingerprint.get("files", ()) if isinstance(f, dict)]
    return bool(files) and all(_moves_a_submodule(f) for f in files)


def _moves_a_submodule(change: Mapping[str, Any]) -> bool:
    added, removed = list(change.get("added") or ()), list(change.get("removed") or ())
    if len(added) > 1 or len(removed) > 1 or not added + removed:
        return False
    return all(
        isinstance(line, list) and len(line) > 1 and _SUBMODULE_LINE.fullmatch(str(line[1])) for line in added + removed
    )


def tooling_only(record: Record) -> bool:
    """Are all the record's subjects dependencies, manifests, lockfiles or tool configuration, or does
    its change only move submodules? (A dead end only there, a reverted bump, tells an agent little
    about the code it edits.)"""
    from comind.deps import manifest_ecosystem
    from comind.harvest.approach import LOCKFILES

    def tooling(anchor: dict[str, Any]) -> bool:
        if anchor.get("scope") == "dependency":
            return True
        path = str(anchor.get("path") or "")
        name = path.rsplit("/", 1)[-1]
        return bool(path) and (
            name in LOCKFILES or manifest_ecosystem(path) is not None or bool(_TOOL_CONFIG.search(path))
        )

    subjects = [a for a in record.anchors if a.get("role", "subject") == "subject"] or record.anchors
    return (bool(subjects) and all(tooling(a) for a in subjects)) or moves_submodules_only(record)


def subject_now(
    record: Record, snapshot: Any, anchorer: Any = None
) -> tuple[dict[str, Any] | None, tuple[str | None, str | None, tuple[int, int] | None]]:
    """The subject a record is shown by at `snapshot`, and `where_now` it is: the first subject (in
    `subjects_in_order`) found there, else the first whose file is (its symbol gone from it), else
    the first: a subject gone is named only when all are."""
    subjects = subjects_in_order(record)
    first = (subjects[0] if subjects else None, (None, None, None))
    file_only = None
    for anchor in subjects:
        path, symbol, span = where = where_now(anchor, snapshot, anchorer)
        if path and (span or not symbol):
            return anchor, where
        if path and file_only is None:
            file_only = (anchor, where)
    return file_only or first


def where_now(
    anchor: Mapping[str, Any] | None, snapshot: Any, anchorer: Any = None
) -> tuple[str | None, str | None, tuple[int, int] | None]:
    """(path, symbol, lines) of an anchor's code in `snapshot` (a `codeindex.Snapshot`): followed
    through renames and moves when an `anchorer` (`anchoring.Anchorer`) is given, its symbol's lines
    there, else its file while it exists, else nothing. A recorded span is where the code was when
    the record was written: read on today's file, it points at whatever took those lines."""
    if anchor is None or not anchor.get("path"):
        return None, None, None
    path, symbol = followed(anchor, snapshot, anchorer)
    if path.endswith("/"):  # a folder: named while it is there, with no lines to read
        return (path, None, None) if folder_exists(snapshot, path) else (None, None, None)
    if not exists(snapshot, path):
        return None, None, None
    found = snapshot.find(path, symbol) if symbol else None
    return path, symbol or None, (found.start_line, found.end_line) if found is not None else None


def followed(anchor: Mapping[str, Any], snapshot: Any, anchorer: Any = None) -> tuple[str, str]:
    """(path, symbol or "") of an anchor with a path: where it is in `snapshot` when the anchorer
    can follow it there (what the records' statuses found, from the index cache), else as written."""
    path, symbol = str(anchor["path"]), str(anchor.get("symbol") or "")
    if anchorer is not None and anchor.get("commit") and path.endswith("/"):
        moved, _deleted_in = anchorer.follow_folder(path, str(anchor["commit"]), snapshot.commit)
        return moved or path, symbol
    if anchorer is not None and anchor.get("commit"):
        state, found_path, found_symbol = anchorer.where(anchor, snapshot)
        if state == "found" and found_path:
            path, symbol = found_path, found_symbol or symbol
    return path, symbol


def exists(snapshot: Any, path: str) -> bool:
    """Is `path` a file at the snapshot's commit? (The index lists only files in a language it reads.)"""
    from comind.git import tree_entry

    return path in snapshot.files or tree_entry(snapshot.index.repo, snapshot.commit, path) is not None


def folder_exists(snapshot: Any, path: str) -> bool:
    from comind.git import is_dir

    return is_dir(snapshot.index.repo[snapshot.tree], path.rstrip("/"))


def name_of(anchor: Mapping[str, Any]) -> str:
    """`path::symbol` or `path` of an anchor, as `on` names code (a line or a raw text aside)."""
    if not anchor.get("path"):
        return format_anchor(dict(anchor))
    return f"{anchor['path']}::{anchor['symbol']}" if anchor.get("symbol") else str(anchor["path"])


def evidence_line(record: Record) -> str:
    parts = []
    for item in record.shown_evidence[:2]:
        ref = str(item.get("ref", ""))
        if item.get("type") == "commit":
            ref = ref[:10]
        label = item.get("role") or item.get("type", "")
        note = f' "{item["note"]}"' if item.get("note") else ""
        parts.append(f"{label} {ref}{note}".strip())
    reason = record.fields.get("reason") or (record.body if record.kind == "attempt" else "")
    if reason and gave_no_reason(record):
        parts.append("no reason given")  # (its body says so in a sentence of ours, not the revert's words)
    elif reason:
        parts.append(f'"{str(reason).strip().splitlines()[0][:160]}"')
    return "; ".join(parts)


def detail_lines(record: Record) -> tuple[str, ...]:
    f = record.fields
    out: list[str] = []
    if record.kind == "decision":
        if f.get("chosen"):
            out.append(f"chosen: {f['chosen']}")
        out += [
            f"rejected: {a.get('option', '')} — {a.get('why_not', '')}".rstrip(" —") for a in f.get("alternatives", [])
        ]
    elif record.kind == "constraint" and f.get("rule") and not restates(record.title, f["rule"]):
        out.append(f"rule: {f['rule']}")
    elif record.kind == "gotcha":
        out += [
            f"{k}: {f[k]}" for k in ("symptom", "cause", "workaround") if f.get(k) and not restates(record.title, f[k])
        ]
    elif record.kind == "attempt" and f.get("outcome"):
        out.append(f"outcome: {f['outcome']}" + (f"; retry when: {f['retry_when']}" if f.get("retry_when") else ""))
    return tuple(out)


def entry_of(
    record: Record,
    status: Status,
    *,
    confirmed: bool,
    why: str = "",
    path: str | None = None,
    symbol: str | None = None,
    span: Sequence[int] | None = None,
    read: tuple[str, Sequence[int] | None] | None = None,
    snapshot: Any = None,
    anchorer: Any = None,
    shown_by: dict[str, Any] | None = None,
) -> Entry:
    """The entry for a record; `path`, `symbol` and `span` say where its subject is now, when known,
    else `snapshot` (the code at head) does (`where_now`, following moves with `anchorer`); `read`,
    the file and lines that bear on it here (where a change re-proposes it, the anchor it touches),
    when they are not its subject's. `shown_by`: the anchor the record was found by (what a `why`
    asked about), named in place of its subject."""
    anchor = shown_by if shown_by is not None else subject_anchor(record)
    located = ""  # the commit the subject was found at, its code there
    if not path and snapshot is not None:
        if shown_by is None:  # the subject there, when any is
            anchor, (path, symbol, span) = subject_now(record, snapshot, anchorer)
        else:
            path, symbol, span = where_now(anchor, snapshot, anchorer)
        if path and span is None and symbol:  # a symbol gone from its file: the file is what is there
            symbol = None
        if path:
            located = snapshot.commit
    on = anchored = ""
    if path and (located or snapshot is None):
        on = f"{path}::{symbol}" if symbol else path
        if located and anchor is not None and on != (was := name_of(anchor)):
            anchored = was  # moved, renamed or gone from its file since: `on` says where it is now
    elif anchor is not None:  # as written: true of the commit it names
        on = format_anchor(anchor)
    if not path and anchor is not None and snapshot is None:
        path, span = anchor.get("path"), anchor.get("span")
    where, lines = read or (path, span)
    return Entry(
        id=record.id,
        kind=record.kind,
        title=record.title,
        state=status.state,
        trust=agent_trust(record, status, confirmed),
        on=on,
        anchored=anchored,
        # where `on` was found: the code at head, else the anchor as written when it was (a file
        # renamed since named at a commit that had no such file read as wrong)
        verified_at=located or (str(anchor.get("commit", "")) if anchor else ""),
        evidence=evidence_line(record),
        verify=verify_line(where if where and not where.endswith("/") else None, lines),
        why=why,
        detail=detail_lines(record),
        author="agent" if record.provenance.get("author_kind") == "agent" else "",
        severity=str(record.fields.get("severity", "")) if record.kind == "constraint" else "",
        confirmed=confirmed,
    )
