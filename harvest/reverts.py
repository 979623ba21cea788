"""Reverts → attempt records (outcome `reverted`), relands → `retracts` relations.

Every revert form `comind.harvest.markers` recognises is resolved against the repository: a sha
prefix, a quoted or normalised subject among the commit's ancestors, a `(#N)` PR suffix, a Gerrit
`Reviewed-on: …/+/N`. Ambiguous or unresolvable targets are never guessed: the attempt keeps the
reference text and the number of candidates, at trust T1, with the revert's own diff (turned
around) as its approach. Known traps are not reverts: a `revert:` code-area prefix with no target,
markers quoted in a merge or squash body whose target is not on the default branch, and the same
revert quoted twice (only the commit that carries it as its subject or unindented body counts).
"""

from __future__ import annotations

from collections.abc import Iterator

from comind.errors import ComindError
from comind.harvest.approach import Approach, FileChange
from comind.harvest.context import HarvestContext, commit_time, dependency_anchors, fingerprint_json, first_line
from comind.harvest.markers import RevertMarker, revert_markers, revert_reason
from comind.harvest.walker import CommitInfo, is_ancestor, resolve_prefix
from comind.records import Record, harvested_id, new_record

NAME = "reverts"


def attempt_id(repo: str, revert_sha: str) -> str:
    return harvested_id(f"git-revert:{repo}:{revert_sha}")


def harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]:
    markers = revert_markers(commit.subject, commit.body)
    if not markers:
        return
    if commit.is_merge:  # merge bodies quote the PR (bors copies it): only the merge's own subject counts
        markers = [m for m in markers if m.source == "subject"]
    for m in markers:
        ctx.count(f"marker:{m.kind}", commit.sha[:12])
    if not markers:
        return
    if any(m.is_reland for m in markers):
        yield from _reland(commit, markers, ctx)
        return
    targets, candidates, reference = _resolve(commit, markers, ctx)
    if targets is None:
        return  # not a revert after all (a code-area `revert:` prefix, or a quoted PR-branch revert)
    yield from _attempt(commit, markers, targets, candidates, reference, ctx)


def _resolve(commit: CommitInfo, markers: list[RevertMarker],
             ctx: HarvestContext) -> tuple[list[str] | None, int, str]:
    """(resolved targets, candidate count when ambiguous, reference text); None: not a revert."""
    # A squash body lists the PR's own commits, indented: such markers are real only when their
    # target is on the default branch.
    quoted_only = all(m.source == "body" and m.indented for m in markers)
    for m in sorted(markers, key=lambda m: (m.sha is None, m.pr is None, m.cl is None)):
        found = _candidates(commit, m, ctx)
        if len(found) == 1:
            if (quoted_only or m.indented) and not ctx.on_default(found[0]):
                ctx.skip("quoted-revert-not-on-default-branch", commit.sha[:12])
                continue
            return found, 0, m.text
        if len(found) > 1:
            ctx.count("reverts:ambiguous", f"{commit.sha[:12]} {m.text[:60]}")
            return [], len(found), m.text
    if quoted_only or all(m.needs_target for m in markers):
        ctx.skip("revert-like-without-target", commit.sha[:12])
        return None, 0, markers[0].text
    ctx.count("reverts:unresolved", f"{commit.sha[:12]} {markers[0].text[:60]}")
    return [], 0, markers[0].text


def _candidates(commit: CommitInfo, m: RevertMarker, ctx: HarvestContext) -> list[str]:
    if m.sha:
        return resolve_prefix(ctx.repo, m.sha)
    if m.pr is not None:
        found = ctx.by_pr(m.pr)
    elif m.cl is not None:
        found = ctx.by_cl(m.cl)
    elif m.quoted_subject or m.needs_target:
        found = ctx.by_subject(m.quoted_subject or commit.subject)
    else:
        return []
    return [s for s in found if s != commit.sha and _before(ctx, s, commit.sha)]


def _before(ctx: HarvestContext, candidate: str, commit: str) -> bool:
    return is_ancestor(ctx.repo, candidate, commit)


def _attempt(commit: CommitInfo, markers: list[RevertMarker], targets: list[str], candidates: int, reference: str,
             ctx: HarvestContext) -> Iterator[Record]:
    target = ctx.commit(targets[0]) if targets else None
    reason = revert_reason(commit.subject, commit.body)
    mainline = next((m.base_sha for m in markers if m.base_sha), None)
    if target is not None:
        parent = resolve_prefix(ctx.repo, mainline)[0] if mainline and resolve_prefix(ctx.repo, mainline) else None
        change = ctx.approach(target.sha, parent)
        at = parent or (target.parents[0] if target.parents else None)
    else:  # unresolved: the revert's own diff, turned around, is the reverted change
        change = _inverted(ctx.approach(commit.sha))
        at = commit.sha
    # the state that had the reverted change: the target itself, else the revert's parent
    with_change = target.sha if target else (commit.parents[0] if commit.parents else commit.sha)
    title = first_line(target.subject if target else (_quoted(markers) or commit.subject))
    evidence = [{"type": "commit", "ref": commit.sha, "role": "revert"}]
    attributes = {"marker": markers[0].kind}
    if target is not None:
        evidence.append({"type": "commit", "ref": target.sha, "role": "reverted"})
        attributes["reverted"] = target.sha
    else:
        evidence.append({"type": "text", "ref": f"unresolved: {reference[:300]}", "role": "reverted"})
        attributes["unresolved"] = reference[:300]
        if candidates:
            attributes["candidates"] = str(candidates)
    for m in markers:
        if m.pr is not None:
            evidence.append({"type": "mr", "ref": f"{m.repo or ''}#{m.pr}", "role": "reverted pr"})
        if m.cl is not None:
            evidence.append({"type": "mr", "ref": f"CL {m.cl}", "role": "reverted change"})
    verified = target is not None and ctx.on_default(commit.sha)
    fields = {
        "approach": first_line(f"{title} ({target.sha[:10]})" if target else title, 1000),
        "outcome": "reverted",
        "reason": reason[:1000] or None,
        "fingerprint": fingerprint_json(change) if change else None,
    }
    try:
        record = new_record(
            "attempt", record_id=attempt_id(ctx.repo_name, commit.sha), title=title,
            body=_clip(reason, 2000), trigger=first_line(f"re-doing: {title}", 200),
            anchors=ctx.anchors(change, at) + dependency_anchors(ctx, change, at, with_change),
            evidence=evidence, fields=fields,
            provenance=ctx.provenance(commit, NAME), created_at=commit_time(commit), valid_from=commit.sha,
            trust=2 if verified else 1, attributes=attributes,
        )
    except ComindError as exc:  # e.g. a secret in the reason: skipped and counted, never written
        ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
        return
    ctx.count("reverts:attempt")
    yield record


def _reland(commit: CommitInfo, markers: list[RevertMarker], ctx: HarvestContext) -> Iterator[Record]:
    """A revert of a revert re-applies the original: the attempt made from that revert is retired."""
    reverted = None
    for m in markers:
        if m.sha:
            found = resolve_prefix(ctx.repo, m.sha)
        elif m.quoted_subject:
            found = [s for s in ctx.by_subject(f'Revert "{m.quoted_subject}"') if _before(ctx, s, commit.sha)]
        else:
            found = []
        if len(found) == 1:
            reverted = found[0]
            break
    if reverted is None:
        ctx.count("reverts:reland-unresolved", commit.sha[:12])
        return
    try:
        record = new_record(
            "relation", record_id=harvested_id(f"git-reland:{ctx.repo_name}:{commit.sha}"),
            title=first_line(f"Relanded: {commit.subject}"), anchors=[],
            evidence=[{"type": "commit", "ref": commit.sha, "role": "reland"}],
            fields={"relation": "retracts", "target": attempt_id(ctx.repo_name, reverted),
                    "reason": first_line(f"relanded in {commit.sha[:10]}: {commit.subject}", 1000),
                    "commit": commit.sha},
            provenance=ctx.provenance(commit, NAME), created_at=commit_time(commit),
        )
    except ComindError as exc:
        ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
        return
    ctx.count("reverts:reland")
    yield record


def _inverted(change: Approach | None) -> Approach | None:
    if change is None:
        return None
    files = tuple(FileChange(f.path, f.old_path, f.status, f.binary, f.skipped, f.removed, f.added)
                  for f in change.files)
    return Approach(change.base, change.head, files, change.skipped)


def _quoted(markers: list[RevertMarker]) -> str | None:
    return next((m.quoted_subject for m in markers if m.quoted_subject), None)


def _clip(text: str, limit: int) -> str:
    data = text.encode()
    return text if len(data) <= limit else data[: limit - 3].decode(errors="ignore") + "…"
