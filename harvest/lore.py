"""Lore trailers → records: constraints, decisions and rejected attempts, gotchas, questions.

The mapping (one for commits and merge-request threads alike, see `lore_records`):
Constraint → constraint; Rejected `option | reason` → a decision with those alternatives and one
dead-end attempt (outcome `abandoned`) per rejected option; Directive → gotcha, dormant after its
`[until:]` date; Not-tested → question; Tested → evidence; Confidence, Scope-risk, Reversibility →
attributes (Confidence low → trust T1); Supersedes, Depends-on, Related by Lore-id → relations.
Raw values are kept beside the normalised ones in the attributes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from comind.errors import ComindError
from comind.harvest.context import HarvestContext, commit_time, first_line
from comind.harvest.lorekeys import LoreAtom
from comind.harvest.trailers import lore_atom, might_have_lore
from comind.harvest.walker import CommitInfo
from comind.records import Record, harvested_id, new_record

NAME = "lore"


def attributes_of(atom: LoreAtom) -> dict[str, str]:
    out: dict[str, str] = {}
    if atom.lore_id:
        out["lore_id"] = atom.lore_id
    for name, value in (
        ("confidence", atom.confidence),
        ("scope_risk", atom.scope_risk),
        ("reversibility", atom.reversibility),
    ):
        if value is not None:
            out[name] = value.value or "unknown"
            if value.value != value.raw.strip().lower():
                out[f"{name}_raw"] = value.raw[:200]
    return out


def lore_records(
    atom: LoreAtom,
    key: str,
    *,
    chosen: str,
    cause: str,
    anchors: Sequence[Mapping[str, Any]],
    evidence: Sequence[Mapping[str, str]],
    provenance: Mapping[str, Any],
    created_at: str,
    trust: int,
    valid_from: str | None = None,
) -> Iterator[tuple[str, Record | ComindError]]:
    """(kind, record or the error that kept it from being written) for each Lore value; ids `<key>:<n>`."""
    attributes = attributes_of(atom)
    if atom.confidence is not None and atom.confidence.value == "low":
        trust = min(trust, 1)
    tested = [{"type": "text", "ref": text[:1000], "role": "tested"} for text in atom.tested]
    common: dict[str, Any] = {
        "anchors": list(anchors),
        "evidence": [*evidence, *tested][:100],
        "provenance": provenance,
        "created_at": created_at,
        "trust": trust,
        "attributes": attributes,
        "valid_from": valid_from,
    }
    planned: list[tuple[str, dict[str, Any]]] = []
    for text in atom.constraints:
        planned.append(
            (
                "constraint",
                {"title": first_line(text), "body": text, "fields": {"rule": text[:1000], "severity": "must"}},
            )
        )
    options = list({(r.option, r.reason): r for r in atom.rejected if r.option}.values())
    if options:
        planned.append(
            (
                "decision",
                {
                    "title": first_line(chosen),
                    "body": f"Chosen: {chosen}",
                    "fields": {
                        "chosen": chosen[:1000] or "the change",
                        "alternatives": [{"option": r.option[:500], "why_not": r.reason[:1000]} for r in options],
                    },
                },
            )
        )
        for r in options:
            planned.append(
                (
                    "attempt",
                    {
                        "title": first_line(f"Rejected: {r.option}"),
                        "body": r.reason,
                        "trigger": first_line(f"considering {r.option}", 200),
                        "fields": {
                            "approach": r.option[:1000],
                            "outcome": "abandoned",
                            "reason": r.reason[:1000] or None,
                        },
                    },
                )
            )
    for directive in atom.directives:
        until = {"until": directive.until.isoformat()} if directive.until else {}
        planned.append(
            (
                "gotcha",
                {
                    "title": first_line(directive.text),
                    "body": directive.text,
                    "fields": {"symptom": directive.text[:1000], "cause": cause[:1000]},
                    **until,
                },
            )
        )
    for text in atom.not_tested:
        planned.append(("question", {"title": first_line(f"Not tested: {text}"), "fields": {"question": text[:1000]}}))
    for n, (kind, parts) in enumerate(planned):
        if (kind, parts) in planned[:n]:  # a value said twice word for word: one record (ids stay by place)
            continue
        try:
            yield kind, new_record(kind, record_id=harvested_id(f"{key}:{n}"), **common, **parts)
        except ComindError as exc:
            yield kind, exc


def harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]:
    if not might_have_lore(commit.message):
        return
    atom = lore_atom(commit.message)
    if not atom.has_lore:
        return
    for trailer in atom.trailers:
        ctx.count(f"lore-key:{trailer.canonical_key}")
    key = f"lore:{ctx.repo_name}:{commit.sha}"
    change = ctx.approach(commit.sha)
    anchors = ctx.anchors(change, commit.sha if change else None, side="added")
    evidence = [{"type": "commit", "ref": commit.sha}]
    trust = 2 if ctx.on_default(commit.sha) else 1
    written: list[str] = []
    for kind, result in lore_records(
        atom,
        key,
        chosen=commit.subject,
        cause=f"{first_line(commit.subject)} ({commit.sha[:10]})",
        anchors=anchors,
        evidence=evidence,
        provenance=ctx.provenance(commit, NAME),
        created_at=commit_time(commit),
        trust=trust,
        valid_from=commit.sha,
    ):
        if isinstance(result, ComindError):
            ctx.skip("invalid-record", f"{commit.sha[:12]} {kind}: {result}")
            continue
        ctx.count(f"lore:{kind}")
        written.append(result.id)
        yield result
    if atom.lore_id and written:
        ctx.lore_ids[atom.lore_id] = written
    yield from _relations(atom, commit, written, ctx)


def _relations(atom: LoreAtom, commit: CommitInfo, written: list[str], ctx: HarvestContext) -> Iterator[Record]:
    """Supersedes → `supersedes` from this atom's first record to each record of the named atom;
    Depends-on and Related → `relates`. Atoms are named by Lore-id; unknown ids are counted."""
    if not written:
        return
    links = [("supersedes", r) for r in atom.supersedes] + [("relates", r) for r in (*atom.depends_on, *atom.related)]
    for n, (relation, ref) in enumerate(links):
        targets = ctx.lore_ids.get(ref.lore_id or "", [])
        if not targets:
            ctx.skip("lore-reference-unknown", f"{commit.sha[:12]} {ref.raw[:40]}")
            continue
        for m, target in enumerate(targets):
            try:
                yield new_record(
                    "relation",
                    record_id=harvested_id(f"lore:{ctx.repo_name}:{commit.sha}:rel:{n}:{m}"),
                    title="",
                    anchors=[],
                    evidence=[{"type": "commit", "ref": commit.sha}],
                    fields={
                        "relation": relation,
                        "target": target,
                        "source": written[0],
                        "reason": f"Lore {relation} {ref.raw[:200]}",
                        "commit": commit.sha,
                    },
                    provenance=ctx.provenance(commit, NAME),
                    created_at=commit_time(commit),
                )
            except ComindError as exc:
                ctx.skip("invalid-record", f"{commit.sha[:12]} relation: {exc}")
                continue
            ctx.count(f"lore:relation-{relation}")
