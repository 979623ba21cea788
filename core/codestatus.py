"""Code verdicts for records at a revision, cached by (rules, record, baseline, revision, settings).

Verdicts are a pure function of the record, its confirmation, the code at the revision and the
settings, so they are cached in the ledger view; a warm read needs neither pygit2 nor a parse.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from comind.records import Record
from comind.status import CodeVerdict, RelationIndex

if TYPE_CHECKING:
    from comind.ledger import Ledger
    from comind.workspace import Workspace

# Part of every cached verdict's key: bump when the rules that make a verdict change, or a cached
# verdict outlives them at the same commit (2: orphaned only when every subject is gone; 3: a gone
# file's reason names the landing that deleted it; 4: a file converted to another format is followed;
# 5: a symbol gone from its file names the landing that removed it; 6: a folder is followed where its
# files moved; 7: a symbol moved to another file and edited in the same landing is followed; 8: a landing's
# subject is quoted “so”, not repr'd; 9: a body's similarity is rounded down;
# 10: subjects one landing took are said once, counted; 11: a landing that is the record's own commit
# is looked past, from the record's commit, and its own commits are named by their role: "the revert …";
# 12: a symbol taken out of a file renamed since is followed from the landing that gave it its name).
RULES = "12"


def confirmed_commit(index: RelationIndex, record_id: str) -> str | None:
    """The commit of the latest `confirms` relation that names one: the record's new baseline. A
    person's only: an agent's confirmation is its review, and moves no baseline."""
    commits = [
        c.fields["commit"]
        for c in index.confirmations(record_id)
        if c.fields.get("commit") and c.provenance.get("author_kind") != "agent"
    ]
    return commits[-1] if commits else None


def needs_code(record: Record) -> bool:
    """Records with resolved anchors, dependency anchors or commit evidence have a code verdict."""
    return record.kind != "relation" and (
        any(a.get("commit") or a.get("scope") == "dependency" for a in record.anchors)
        or any(e.get("type") == "commit" for e in record.evidence)
    )


def dependency_view(record: Record) -> Record | None:
    """The record with its dependency anchors only (None without any): what a version change
    says about it needs no history, unlike following its code anchors."""
    deps = [a for a in record.anchors if a.get("scope") == "dependency"]
    return Record({**record.data, "anchors": deps}) if deps else None


def code_verdicts(
    ws: Workspace,
    ledger: Ledger,
    records: Sequence[Record],
    at: str | None = None,
    context: Iterable[Record] = (),
    near: Collection[str] | None = None,
) -> dict[str, CodeVerdict]:
    """The code verdict of every record that has resolved anchors, at `at` (default HEAD).

    With ``near`` (record ids), only those records have their code anchors followed (through
    renames and moves, and their bodies compared); the others get the verdict of their dependency
    anchors alone (retry conditions, re-checks), or none. `comind check` passes the records
    anchored to what the change touches: the change cannot have moved or drifted anything else."""
    commit = at or ws.head()
    todo = [r for r in records if needs_code(r)]
    if near is not None:
        todo = [v for r in todo if (v := r if r.id in near else dependency_view(r)) is not None]
    if commit is None or not todo:
        return {}
    relations = RelationIndex.build([*records, *context])
    threshold = ws.config.drift_threshold
    tip = ws.default_tip() or ""
    scope = {r.id: "" if near is None or r.id in near else "deps|" for r in todo}
    keys = {
        r.id: f"{RULES}|{scope[r.id]}{r.hash}|{confirmed_commit(relations, r.id) or ''}|{commit}|{threshold}|{tip}"
        for r in todo
    }
    cached = ledger.cached_verdicts(keys.values())
    result: dict[str, CodeVerdict] = {}
    missing = []
    for record in todo:
        if (value := cached.get(keys[record.id])) is not None:
            state, reason, notes, verified = json.loads(value)
            result[record.id] = CodeVerdict(state, reason, tuple(notes), verified)
        else:
            missing.append(record)
    if missing:
        from comind.anchoring import Anchorer, evidence_verifier
        from comind.languages import keeping_trees

        index = ws.index
        snapshot = index.snapshot(commit)
        anchorer = Anchorer(index, threshold)
        anchorer.prefetch(missing)
        verify = evidence_verifier(index, tip or None)
        fresh = {}
        with keeping_trees():  # (the records on one large file read the same versions of it)
            for record in missing:
                verdict = anchorer.verdict(record, snapshot, confirmed_commit(relations, record.id), verify)
                result[record.id] = verdict
                if not anchorer.final(snapshot):
                    continue  # the next read, once the blobs are fetched, may say otherwise
                fresh[keys[record.id]] = json.dumps(
                    [verdict.state, verdict.reason, list(verdict.notes), verdict.evidence_verified]
                )
        anchorer.flush()
        ledger.store_verdicts(fresh)
    return result
