"""Reverts → attempt records (outcome `reverted`), relands → `retracts` relations.

Every revert form `comind.harvest.markers` recognises is resolved against the repository: a sha
prefix, a quoted or normalised subject among the commit's ancestors (a subject GitHub cut with
`…` by its prefix), a `(#N)` PR suffix, a Gerrit `Reviewed-on: …/+/N`. One revert of several
commits (`This reverts commit` three times, `Revert various PRs` listing `Revert "…"` lines) is
one attempt per reverted commit. Ambiguous or unresolvable targets are never guessed: the attempt
keeps the reference text and the number of candidates, at trust T1, with the revert's own diff
(turned around) as its approach; a free-form `Revert realms from core` is such an attempt too.
Known traps are not reverts: a `revert:` code-area prefix with no target, markers quoted in a
merge or squash body whose target is not on the default branch, and the same revert quoted twice
(only the commit that carries it as its subject or unindented body counts; a body quoting a revert
of a target another commit reverted already, not relanded since, makes no second attempt), and the
same revert made again on another line of history (the change it undid the same, line for line, the
earlier revert no ancestor of it: cherry-picked onto a release branch and main) is one attempt, made
from the copy that landed on the default branch first. A revert
whose own words call what it reverts a slip (`Reverted accidental change`, `revert accidentally added
parentPath`, `Revert unrelated change`, a body saying "This was accidentally merged") makes no
attempt: nothing was tried and given up.

A reland retires the attempts it re-applies (a `retracts` relation): a revert of the revert
(`Reapply "x"`, `Revert "Revert "x""`, `Revert^2`, or a body-only `This reverts CL N` whose CL made
attempts and was no reland itself), a body naming what it relands (`Reland of #N`, `This relands
<sha>`) or, for a reland, the revert it undoes (`reverted in #16366`), a `Reland x` / `Re-land x` /
`Redo x` / `Restore x` / `Re-add x` / `x again` subject naming a reverted subject, or a commit whose
subject is a reverted commit's again after the revert (when that subject was not a common one). The
reverted subjects are kept in `HarvestContext.reverted`, across incremental harvests.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterator
from typing import Any

from comind.errors import ComindError
from comind.git import changed_paths
from comind.harvest.approach import Approach, FileChange, is_release, notes_only
from comind.harvest.context import HarvestContext, commit_time, fingerprint_json, first_line
from comind.harvest.markers import (
    MAX_DEPTH,
    RevertMarker,
    cut_prefix,
    full_subject,
    merge_title,
    reland_key,
    reland_references,
    reland_subject,
    revert_depth,
    revert_markers,
    revert_reason,
    revert_references,
)
from comind.harvest.walker import CommitInfo, resolve_prefix, walk
from comind.records import Record, harvested_id, new_record
from comind.records import quoted as in_quotes
from comind.rulebook import DEFAULT, Slip, Untouched
from comind.sanitize import find_secret

NAME = "reverts"
_SQUASH_BULLET = re.compile(r"^\* \S", re.MULTILINE)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|`[^`]*`")
_PARTIAL = re.compile(
    r"\bpartial(?:ly)?[ \t-]+revert|\brevert(?:s|ed|ing)?[ \t]+(?:part|parts|some)[ \t]+of\b", re.IGNORECASE
)


def _a_slip(subject: str, body: str = "") -> bool:
    """Does the revert's subject, outside what it quotes, call the reverted change a slip, or its
    body say that the change landed by mistake (`Revert "Infer definite equality…"`:
    "This was accidentally merged")?"""
    return DEFAULT.get(Slip).judge(subject, body)  # rule R1


def attempt_id(repo: str, revert_sha: str, target: str | None = None) -> str:
    """The attempt a revert makes; a revert of several commits makes one more per further target."""
    return harvested_id(f"git-revert:{repo}:{revert_sha}" + (f":{target}" if target else ""))


def _markers_of(commit: CommitInfo, subject: str, body: str) -> list[RevertMarker]:
    markers = revert_markers(subject, body)
    if commit.is_merge:  # merge bodies quote the PR (bors copies it): only the merge's own subject counts
        markers = [m for m in markers if m.source == "subject"]
    return markers


def harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]:
    subject, body = full_subject(commit.subject, commit.body)
    markers = _markers_of(commit, subject, body)
    for m in markers:
        ctx.count(f"marker:{m.kind}", commit.sha[:12])
    if not markers:
        if ctx.reverted:  # a reland said in words: the subject's first, else a body naming what it relands
            form, retired = _relanded_by_subject(subject, ctx)
            if not retired and not commit.is_merge:
                form, retired = "reland-reference", _relanded_by_reference(commit, subject, body, ctx)
            if retired:
                yield from _retracts(commit, retired, form, ctx)
        return
    if any(m.is_reland for m in markers):
        yield from _reland(commit, markers, ctx)
        return
    if commit.is_merge and _branch_reverts(ctx, commit):
        ctx.skip("revert-landed-by-its-merge", commit.sha[:12])  # the branch's revert made the attempt
        return
    resolved = _resolve(commit, markers, ctx)
    if resolved is None:
        return  # not a revert after all (a code-area `revert:` prefix, or a quoted PR-branch revert)
    targets, candidates, reference = resolved
    if targets and all(_made_attempts(ctx, t) for t in targets):
        # a revert of a revert said in the body only ("This reverts CL 682715"): a reland
        yield from _retracts(commit, [a for t in targets for a in _attempts_of(ctx, t)], "revert-of-revert", ctx)
        return
    if _a_slip(subject, body):
        ctx.skip("revert-of-a-slip", f"{commit.sha[:12]} {commit.subject[:60]}")
        return
    yield from _attempts(commit, subject, body, markers, targets, candidates, reference, ctx)


def _branch_reverts(ctx: HarvestContext, merge: CommitInfo, limit: int = 200, only: bool = False) -> list[str]:
    """The revert commits of the branch a merge lands (`only`: none unless the branch holds nothing
    else). A merge titled like its pull request (`Revert "x" (#16861)`, as merge queues title them)
    says again what they did: the attempts are theirs, and a revert of the merge retires them."""
    mainline, *merged = merge.parents
    found = []
    for n, side in enumerate(walk(ctx.repo, merged, [mainline])):
        if n >= limit:
            break
        subject, body = full_subject(side.subject, side.body)
        if any(not m.is_reland for m in revert_markers(subject, body)):
            found.append(side.sha)
        elif only:
            return []
    return found


# -- what a revert reverts --------------------------------------------------------------------


def _family(m: RevertMarker) -> int:
    """Resolution order: shas, then PR and change numbers, then subjects (quoted, described)."""
    if m.sha:
        return 0
    if m.kind in ("github-reverts-pr", "gerrit-reverts-cl", "subject-revert-ref", "inline-revert-ref"):
        return 1
    return 2


def _resolve(
    commit: CommitInfo, markers: list[RevertMarker], ctx: HarvestContext, quiet: bool = False
) -> tuple[list[str], int, str] | None:
    """(resolved targets, candidate count when ambiguous, reference text); None: not a revert.

    Markers are read by family (shas, then numbers, then subjects): the first family that resolves
    gives every target it resolves, so a revert of three commits is three attempts, while the
    subject and the sha of one `git revert` name one. `quiet`: counts and skips are not noted (a
    commit read again, as the target of another)."""
    # A squash body lists the PR's own commits as `* subject` bullets, their bodies after them,
    # indented or not (GitHub does not): such markers are real only when their target is on the
    # default branch (`* Revert "install httpcore from the git"` / `This reverts commit 1813c6a.`).
    squash = _SQUASH_BULLET.search(commit.body) is not None
    quoted_only = all(m.source == "body" and (m.indented or squash) for m in markers)
    ambiguous: tuple[int, str] | None = None
    for family in (0, 1, 2):
        targets: list[str] = []
        text = ""
        for m in (m for m in markers if _family(m) == family):
            found = _candidates(commit, m, ctx)
            if len(found) == 1:
                if (quoted_only or m.indented) and not ctx.on_default(found[0]):
                    if not quiet:
                        ctx.skip("quoted-revert-not-on-default-branch", commit.sha[:12])
                    continue
                if (quoted_only or m.indented) and _reverted_before(ctx, commit, found[0], markers):
                    if not quiet:
                        ctx.skip("quoted-revert-made-already", f"{commit.sha[:12]} quotes {found[0][:12]}")
                    continue
                if found[0] not in targets:
                    targets.append(found[0])
                    text = text or m.text
            elif len(found) > 1 and ambiguous is None:
                ambiguous = (len(found), m.text)
        if targets:
            return targets, 0, text
    if ambiguous is not None:
        if not quiet:
            ctx.count("reverts:ambiguous", f"{commit.sha[:12]} {ambiguous[1][:60]}")
        return [], ambiguous[0], ambiguous[1]
    if quoted_only or all(m.needs_target and m.kind != "free-form" for m in markers):
        if not quiet:
            ctx.skip("revert-like-without-target", commit.sha[:12])
        return None
    if all(m.source == "body" for m in markers):
        # The subject says nothing of reverting and the body names a commit this history lacks: a
        # revert quoted from elsewhere (a long PR body), not this commit's purpose; its whole diff
        # turned around would make a dead end of the change itself.
        if not quiet:
            ctx.skip("body-revert-of-a-commit-not-here", f"{commit.sha[:12]} {commit.subject[:60]}")
        return None
    # an explicit marker, or a subject that starts with "Revert": a revert whose target is unknown
    if not quiet:
        ctx.count("reverts:unresolved", f"{commit.sha[:12]} {markers[0].text[:60]}")
    return [], 0, markers[0].text


def _reverted_before(ctx: HarvestContext, commit: CommitInfo, target: str, markers: list[RevertMarker]) -> bool:
    """Rule: a revert quoted in a squash or merge body whose target another commit already reverted
    (not relanded since) is that revert quoted again (a squash of main into a release branch lists
    it among main's commits): its attempt is made, and this body's other items are no reason for it.
    A revert this commit reverts as well no longer stands: its quote is a revert made anew."""
    reverted = ctx.commit(target)
    if reverted is None or _made_attempts(ctx, target):  # (a revert of a revert relands: not this rule's)
        return False
    undone = tuple(m.sha.lower() for m in markers if m.sha)
    entries = ctx.reverted.get(reland_key(full_subject(reverted.subject, reverted.body)[0]), [])
    return any(e[1] != commit.sha and "common" not in e[2:] and not e[1].startswith(undone) for e in entries)


def _candidates(commit: CommitInfo, m: RevertMarker, ctx: HarvestContext) -> list[str]:
    """The commits a marker may name, before the revert: by sha; else by PR or change number; else
    by subject, among commits one revert less deep (`Revert "Reapply "x""` reverts the reapply)."""
    if m.sha:
        found = resolve_prefix(ctx.repo, m.sha)
        return [s for s in found if s != commit.sha and _before(ctx, s, commit.sha)]
    found = []
    if m.cl is not None:
        found = ctx.by_cl(m.cl)
    elif m.pr is not None:
        found = ctx.by_pr(m.pr)
    found = [s for s in found if s != commit.sha]
    if found:
        return [s for s in found if _before(ctx, s, commit.sha)]
    text = m.quoted_subject if m.kind not in ("conventional-revert", "free-form") else m.described
    if not text:
        return []
    if m.truncated:
        prefix = cut_prefix(text)
        found = ctx.by_subject_prefix(prefix) if prefix else []
    else:
        found = _by_quoted(ctx, m, text)
    return [s for s in found if s != commit.sha and _depth(ctx, s) == m.depth - 1 and _before(ctx, s, commit.sha)]


def _by_quoted(ctx: HarvestContext, m: RevertMarker, text: str) -> list[str]:
    """Commits titled `text`, one revert less deep than the marker; under a prefix (`go/packages:
    revert "x"`) first those titled with it, since the quote often leaves the prefix out; else the
    merges of a request so titled (a forge's revert button quotes the request's title, which only
    its merge's body holds)."""
    found = [s for s in ctx.by_subject(m.scope + text) if _depth(ctx, s) == m.depth - 1] if m.scope else []
    found = found or [s for s in ctx.by_subject(text) if _depth(ctx, s) == m.depth - 1]
    return found or [s for s in ctx.by_merge_title(text) if _depth(ctx, s) == m.depth - 1]


def _depth(ctx: HarvestContext, sha: str) -> int:
    c = ctx.commit(sha)
    return revert_depth(full_subject(c.subject, c.body)[0]) if c is not None else -1


def _before(ctx: HarvestContext, candidate: str, commit: str) -> bool:
    return ctx.is_ancestor(candidate, commit)


# -- attempts ----------------------------------------------------------------------------------


def _attempts(
    commit: CommitInfo,
    subject: str,
    body: str,
    markers: list[RevertMarker],
    targets: list[str],
    candidates: int,
    reference: str,
    ctx: HarvestContext,
) -> Iterator[Record]:
    reason = revert_reason(subject, body)
    if not targets:
        record = _attempt(
            commit, markers, None, candidates, reference, reason, attempt_id(ctx.repo_name, commit.sha), ctx
        )
        if record is not None:
            named = _quoted(markers) or next((m.described for m in markers if m.described), None)
            if named and not candidates and not any(m.truncated for m in markers):
                _remember(ctx, commit, record.id, named, None)
            yield record
        return
    for n, sha in enumerate(targets):
        target = ctx.commit(sha)
        rid = attempt_id(ctx.repo_name, commit.sha, None if n == 0 else sha)
        record = _attempt(commit, markers, target, 0, reference, reason, rid, ctx)
        if record is not None:
            if target is not None:
                _remember(ctx, commit, record.id, full_subject(target.subject, target.body)[0], target)
            yield record


def _remember(ctx: HarvestContext, revert: CommitInfo, record_id: str, subject: str, target: CommitInfo | None) -> None:
    """Keep the reverted subject, for a reland that names it or repeats it. A subject that several
    commits before the revert carried (`Update dependencies`) is no reland's name: left out."""
    key = reland_key(subject)
    if len(key) < 8 or find_secret(subject) is not None:  # the state file in .git/comind keeps no secret
        return
    entry = [record_id, revert.sha]
    same = [s for s in ctx.by_subject(subject) if s != revert.sha]
    if len(same) > 1:  # landed, reverted, relanded, reverted…: the same change each time, not a common subject
        landed = reverted = 0
        for s in same:
            c = ctx.commit(s)
            if c is not None and c.committer_time <= revert.committer_time:
                depth = _depth(ctx, s)
                landed += depth == 0
                reverted += depth == 1
        if landed - reverted > 1:  # the reverted commit itself is one of them
            entry.append("common")  # only a reland that says so retires it, not the subject again
    entries = ctx.reverted.setdefault(key, [])
    if all(e[:2] != entry[:2] for e in entries):
        entries.append(entry)


def _reverted_change(
    commit: CommitInfo, markers: list[RevertMarker], target: CommitInfo | None, ctx: HarvestContext
) -> tuple[Approach | None, str | None]:
    """(the change a revert undid, the commit its anchors are read at)."""
    mainline = next((m.base_sha for m in markers if m.base_sha), None)
    # a partial revert ("partial revert of go.dev/cl/731503: only internal/mcp/*") undid what its own diff
    # undoes, not the whole change: the rest stayed, and a reland need not bring it back
    partial = target is not None and _PARTIAL.search(_QUOTED.sub("", commit.subject)) is not None
    if target is not None and not partial:
        parent = resolve_prefix(ctx.repo, mainline)[0] if mainline and resolve_prefix(ctx.repo, mainline) else None
        return ctx.approach(target.sha, parent), parent or (target.parents[0] if target.parents else None)
    # unresolved or partial: the revert's own diff, turned around, is the reverted change
    return _inverted(ctx.approach(commit.sha)), commit.sha


def _untouched(revert: CommitInfo, target: CommitInfo, change: Approach, ctx: HarvestContext) -> bool:
    """Rule R4: the revert names the target in its body only, and its diff touches no file of the
    name of any the reverted change touched (a title saying what it reverts is believed: a setting
    may have moved to another file since)."""
    if target.subject.strip().lower() in revert.subject.lower():
        return False
    if not revert.parents:
        return False
    named = {_stem(p) for f in change.files for p in (f.path, f.old_path) if p}
    diff = changed_paths(ctx.repo, revert.parents[0], revert.sha, renames=False)
    touched = {_stem(p) for path, old, _ in diff for p in (path, old) if p}
    return DEFAULT.get(Untouched).judge(named, touched)


def _stem(path: str) -> str:
    """A file's name as R4 compares it: no folder, no extension, any case (`src/setup.js` and
    `lib/Setup.ts` are one file moved and converted)."""
    return posixpath.splitext(posixpath.basename(path))[0].lower()


def _attempt(
    commit: CommitInfo,
    markers: list[RevertMarker],
    target: CommitInfo | None,
    candidates: int,
    reference: str,
    reason: str,
    record_id: str,
    ctx: HarvestContext,
) -> Record | None:
    change, at = _reverted_change(commit, markers, target, ctx)
    if change is not None and is_release(change):
        ctx.skip("revert-of-a-release", f"{commit.sha[:12]} {commit.subject[:60]}")  # nothing was tried
        return None
    if change is not None and notes_only(change):
        ctx.skip("revert-of-release-notes", f"{commit.sha[:12]} {commit.subject[:60]}")  # nothing a check sees
        return None
    if change is not None and target is not None and _untouched(commit, target, change, ctx):
        # a squashed pull request names each revert it made on the way, one of them undone again
        ctx.skip("revert-leaves-it-untouched", f"{commit.sha[:12]} names {target.sha[:12]}")
        return None
    key = change_key(change)
    made = ctx.reverted_changes.get(key) if key else None
    folded: list[str] = []
    if made is not None and not _before(ctx, made[1], commit.sha) and not _came_back(ctx, change, commit.sha, made[1]):
        # the same revert made on another line of history (cherry-picked onto a release branch and main,
        # both merged), the change not back between them: that revert again, one attempt (after an
        # ancestor revert, or once the change came back, it was undone again: a second attempt)
        if not (made[0] in ctx.fresh and _landed_first(ctx, commit.sha, made[1])):
            ctx.skip("revert-made-already", f"{commit.sha[:12]} as {made[1][:12]}")
            made.append(commit.sha)
            return None
        # this copy landed on the default branch first: a harvest that read the history up to that
        # landing made the attempt from it, so this one does too, the other's folded into it
        _drop(ctx, made[0])
        ctx.skip("revert-made-already", f"{made[1][:12]} as {commit.sha[:12]}")
        folded = made[1:]
    # the state that had the reverted change: the target itself, else the revert's parent
    with_change = target.sha if target else (commit.parents[0] if commit.parents else commit.sha)
    quoted = _quoted(markers)
    if target is None and quoted and _quotes_a_part(commit.subject, quoted):
        quoted = None  # `Revert "parallel" builds in …`: the quote is a word of the subject, not what it reverted
    if target is not None:
        title = first_line(merge_title(target.subject, target.body) or target.subject)
    elif quoted:  # the subject it quotes
        title = first_line(quoted)
    else:  # else what its own subject took out (the subject alone reads as the attempt: "Print help on stdout")
        title = first_line(f"What {in_quotes(first_line(commit.subject, 100))} took out")
    evidence = [{"type": "commit", "ref": commit.sha, "role": "revert"}]
    attributes = {"marker": markers[0].kind}
    if target is not None:
        evidence.append({"type": "commit", "ref": target.sha, "role": "reverted"})
        attributes["reverted"] = target.sha
    else:
        evidence.append({"type": "text", "ref": f"unresolved: {reference[:300]}", "role": "reverted"})
        attributes["unresolved"] = reference[:300]
        if not quoted:  # (titled by what it took out, a finding quotes the revert by its subject)
            attributes["revert_subject"] = first_line(commit.subject, 300)
        if candidates:
            attributes["candidates"] = str(candidates)
    for m in markers:
        if m.pr is not None and m.kind not in ("free-form", "body-revert-quoted"):
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

    def make(anchors: list[dict[str, Any]]) -> Record | None:
        try:
            return new_record(
                "attempt",
                record_id=record_id,
                title=title,
                body=_clip(reason, 2000) or _no_reason(title if target or quoted else None, first_line(commit.subject)),
                trigger=first_line(f"re-doing: {title}", 200),
                anchors=anchors,
                evidence=evidence,
                fields=fields,
                provenance=ctx.provenance(commit, NAME),
                created_at=commit_time(commit),
                valid_from=commit.sha,
                trust=2 if verified else 1,
                attributes=attributes,
            )
        except ComindError as exc:  # e.g. a secret in the title: skipped and counted, never written
            ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
            return None

    anchors = ctx.attempt_anchors(change, at, with_change)
    if not isinstance(anchors, list):  # found by the worker process: the record is made after the walk
        from comind.harvest.worker import PendingRecord

        record: Record | None = PendingRecord(record_id, anchors, make)
    else:
        record = make(anchors)
    if record is not None:
        ctx.count("reverts:attempt")
        ctx.fresh.add(record_id)
        if key:
            ctx.reverted_changes[key] = [record_id, commit.sha, *folded]
    return record


def _came_back(ctx: HarvestContext, change: Approach | None, revert: str, other: str) -> bool:
    """Did the reverted change come back on the default branch before the later of two copies of its
    revert landed (relanded in words of its own, or by a merge)? Then that copy undid it again: a
    second attempt. Read from the tree before that landing: half the change's added lines in its files."""
    import pygit2

    from comind.harvest.approach import file_lines

    places = [p for p in (ctx.landing(revert), ctx.landing(other)) if p is not None]
    added = [(f.path, ln.text) for f in (change.files if change else ()) for ln in f.added if not ln.trivial]
    if len(places) < 2 or not max(places) or not added:
        return False
    before = ctx.mainline_commit(max(places) - 1)
    try:
        tree = ctx.repo[before].peel(pygit2.Tree)
        held = {path: set(file_lines(ctx.repo, tree, path) or ()) for path in {p for p, _ in added}}  # (each file once)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return 2 * sum(1 for path, text in added if text in held[path]) >= len(added)


def _landed_first(ctx: HarvestContext, revert: str, other: str) -> bool:
    """Did `revert` land on the default branch before `other` (by the same merge: made first)?"""
    mine, theirs = ctx.landing(revert), ctx.landing(other)
    if mine is None:
        return False
    if theirs is None:
        return True
    if mine != theirs:
        return mine < theirs
    a, b = ctx.commit(revert), ctx.commit(other)
    return a is not None and b is not None and (a.committer_time, a.sha) < (b.committer_time, b.sha)


def _drop(ctx: HarvestContext, record_id: str) -> None:
    """Leave out an attempt this harvest made (`_read` filters it), and forget its reverted subject."""
    ctx.dropped.add(record_id)
    ctx.fresh.discard(record_id)
    ctx.counts["reverts:attempt"] -= 1
    _forget_subjects(ctx, {record_id})


def _forget_subjects(ctx: HarvestContext, attempts: set[str]) -> None:
    """Forget the reverted subjects kept for these attempts: no reland of them is looked for now."""
    for key in [k for k, entries in ctx.reverted.items() if any(e[0] in attempts for e in entries)]:
        left = [e for e in ctx.reverted[key] if e[0] not in attempts]
        if left:
            ctx.reverted[key] = left
        else:
            del ctx.reverted[key]


def change_key(change: Approach | None) -> str | None:
    """What a reverted change did, wherever it landed: each file's lines without their numbers or the
    commits around them (a cherry-pick onto another branch moves them). None for a change of no lines."""
    if change is None or not any(f.added or f.removed for f in change.files):
        return None
    digest = hashlib.sha256()
    for f in change.files:
        digest.update(f"{f.path}\0{f.old_path or ''}\0{f.status}\0".encode())
        for side, lines in (("+", f.added), ("-", f.removed)):
            digest.update("".join(f"{side}{line.text}\n" for line in lines).encode())
    return digest.hexdigest()[:32]


# -- relands -----------------------------------------------------------------------------------


def _reland(commit: CommitInfo, markers: list[RevertMarker], ctx: HarvestContext) -> Iterator[Record]:
    """A revert of a revert re-applies the original: the attempts made from that revert are retired."""
    reverted = None
    for m in sorted(markers, key=_family):
        if m.sha:  # a revert off this history (a rewritten branch) made no attempt here: by subject then
            found = [s for s in resolve_prefix(ctx.repo, m.sha) if s != commit.sha and _before(ctx, s, commit.sha)]
        elif m.cl is not None or m.pr is not None:
            numbered = ctx.by_cl(m.cl) if m.cl is not None else ctx.by_pr(m.pr or 0)
            found = [
                s for s in numbered if s != commit.sha and _depth(ctx, s) == m.depth - 1 and _before(ctx, s, commit.sha)
            ]
            if not found and m.quoted_subject and not m.truncated:
                found = _reverts_of(commit, m, ctx)
        elif m.quoted_subject and not m.truncated:
            found = _reverts_of(commit, m, ctx)
        else:
            found = []
        if len(found) == 1:
            reverted = found[0]
            break
    retired: list[str] = []
    if reverted is not None:
        retired = _attempts_of(ctx, reverted)
    else:  # by the reverted subject: whole, else the prefix of a cut one
        quoted = next((m.quoted_subject for m in markers if m.is_reland and m.quoted_subject), None)
        retired = _named(ctx, quoted, cut=any(m.truncated for m in markers))
        if not retired and quoted:  # `Revert "Revert use of x"`, that revert made several times: by "use of x"
            described = next((m.described for m in revert_markers(quoted, "") if m.described), None)
            retired = _named(ctx, described)
    if not retired:
        ctx.count("reverts:reland-unresolved", commit.sha[:12])
        return
    yield from _retracts(commit, retired, "revert-of-revert", ctx)


def _attempts_of(ctx: HarvestContext, revert: str) -> list[str]:
    """The attempts a revert made (those of its branch's reverts, for a merge that landed them)."""
    merged = ctx.commit(revert)
    reverts = (_branch_reverts(ctx, merged) if merged is not None and merged.is_merge else []) or [revert]
    folded = {sha: e[0] for e in ctx.reverted_changes.values() for sha in e[2:]}  # (made no attempt of its own)
    retired = [attempt_id(ctx.repo_name, sha) for sha in reverts if sha not in folded]
    retired += [e[0] for entries in ctx.reverted.values() for e in entries if e[1] in reverts]
    return retired + [folded[sha] for sha in reverts if sha in folded]


def _made_attempts(ctx: HarvestContext, sha: str, depth: int = 0) -> bool:
    """Whether the harvest made attempts from this commit, decided as `harvest` decides it: a revert
    (resolved, or kept at T1), not a reland, not a revert of a revert."""
    c = ctx.commit(sha)
    if c is None or depth > MAX_DEPTH:
        return False
    markers = _markers_of(c, *full_subject(c.subject, c.body))
    says_revert = bool(markers) and not any(m.is_reland for m in markers)  # as `harvest` reads it
    if c.is_merge and _branch_reverts(ctx, c, only=not says_revert):
        # made by its branch's reverts (`_attempts_of`): a merge titled as a revert, or landing only
        # reverts whatever its title (a forge's revert button's `revert-N-…` branch)
        return True
    if not says_revert:
        return False
    resolved = _resolve(c, markers, ctx, quiet=True)
    if resolved is None:
        return False
    targets = resolved[0]
    if targets and all(_made_attempts(ctx, t, depth + 1) for t in targets):
        return False
    if _a_slip(*full_subject(c.subject, c.body)):
        return False
    changes = [_reverted_change(c, markers, ctx.commit(t), ctx)[0] for t in targets] or [
        _reverted_change(c, markers, None, ctx)[0]
    ]
    return not all(change is not None and (is_release(change) or notes_only(change)) for change in changes)


def _reverts_of(commit: CommitInfo, m: RevertMarker, ctx: HarvestContext) -> list[str]:
    """The commits a reland's quoted subject names, one revert less deep than the reland."""
    assert m.quoted_subject is not None
    return [
        s
        for s in _by_quoted(ctx, m, m.quoted_subject)
        if s != commit.sha and _depth(ctx, s) == m.depth - 1 and _before(ctx, s, commit.sha)
    ]


def _named(
    ctx: HarvestContext, subject: str | None, cut: bool = False, shortened: bool = False, said: bool = True
) -> list[str]:
    """The live attempts whose reverted subject is `subject`; when it was cut (`…`) or shortened
    (`x again`, `x, take 2`), the one reverted subject it starts (none when several do). A subject
    repeated without a word of relanding (`said` False) retires only the uncommon ones."""
    if not subject:
        return []
    if cut:
        prefix = cut_prefix(subject)
        keys = [k for k in ctx.reverted if k.startswith(prefix)] if prefix else []
    else:
        key = reland_key(subject)
        keys = [key] if key in ctx.reverted else []
        if not keys and shortened and len(key) >= 8:
            keys = [k for k in ctx.reverted if k.startswith(key + " ")]
    if len(keys) != 1:
        return []
    return [e[0] for e in ctx.reverted[keys[0]] if said or len(e) < 3]


def _relanded_by_reference(commit: CommitInfo, subject: str, body: str, ctx: HarvestContext) -> list[str]:
    """The attempts a body retires by naming what it relands (`Reland of #33158`, `This relands
    0fdde844a`): those the named revert made, or, when it names the original change, those of its
    reverts (by the original's subject). When that finds none, a reland (said in the subject or the
    body) that names the revert it undoes (`reverted in #16366`) retires that revert's attempts: a
    free-form `Revert realms from the core crate` names no subject to find it by."""
    retired: list[str] = []
    relands = reland_references(body)
    for found in _referenced(commit, relands, ctx):
        if _made_attempts(ctx, found):
            retired += _attempts_of(ctx, found)
        elif (original := ctx.commit(found)) is not None:
            retired += _named(ctx, full_subject(original.subject, original.body)[0])
    if not retired and (relands or reland_subject(subject) is not None):
        retired = [
            a
            for found in _referenced(commit, revert_references(body), ctx)
            if _made_attempts(ctx, found)
            for a in _attempts_of(ctx, found)
        ]
    return retired


def _referenced(
    commit: CommitInfo, references: list[tuple[str | None, int | None, int | None]], ctx: HarvestContext
) -> Iterator[str]:
    """The one earlier commit each (sha, PR, CL) reference names; ambiguous ones are skipped."""
    for sha, pr, cl in references:
        found = resolve_prefix(ctx.repo, sha) if sha else ctx.by_cl(cl) if cl is not None else ctx.by_pr(pr or 0)
        found = [s for s in found if s != commit.sha and _before(ctx, s, commit.sha)]
        if len(found) == 1:
            yield found[0]


def _relanded_by_subject(subject: str, ctx: HarvestContext) -> tuple[str, list[str]]:
    """(form, the attempts retired) of `Reland x`, `Redo "x"`, `x again`, or x itself after x was reverted."""
    said = reland_subject(subject)
    if said is not None:
        form, text, _named_it = said
        return form, _named(ctx, text, cut=bool(cut_prefix(text)), shortened=form == "again")
    return "same-subject", _named(ctx, subject, said=False)


def _retracts(commit: CommitInfo, retired: list[str], form: str, ctx: HarvestContext) -> Iterator[Record]:
    """One `retracts` relation per retired attempt; the reland's subject is then forgotten."""
    retired = list(dict.fromkeys(retired))
    gone = set(retired)
    _forget_subjects(ctx, gone)
    for key in [k for k, e in ctx.reverted_changes.items() if e[0] in gone]:
        del ctx.reverted_changes[key]
    for n, target in enumerate(retired):
        suffix = "" if n == 0 else f":{target}"
        try:
            record = new_record(
                "relation",
                record_id=harvested_id(f"git-reland:{ctx.repo_name}:{commit.sha}{suffix}"),
                title=first_line(f"Relanded: {commit.subject}"),
                anchors=[],
                evidence=[{"type": "commit", "ref": commit.sha, "role": "reland"}],
                fields={
                    "relation": "retracts",
                    "target": target,
                    "reason": first_line(f"relanded in {commit.sha[:10]}: {commit.subject}", 1000),
                    "commit": commit.sha,
                },
                provenance=ctx.provenance(commit, NAME),
                created_at=commit_time(commit),
            )
        except ComindError as exc:
            ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
            continue
        ctx.count("reverts:reland")
        ctx.count(f"relands:{form}", commit.sha[:12])
        yield record


def _inverted(change: Approach | None) -> Approach | None:
    if change is None:
        return None
    files = tuple(
        FileChange(f.path, f.old_path, f.status, f.binary, f.skipped, f.removed, f.added) for f in change.files
    )
    return Approach(change.base, change.head, files, change.skipped)


def _quoted(markers: list[RevertMarker]) -> str | None:
    return next((m.quoted_subject for m in markers if m.quoted_subject and m.source == "subject"), None)


def _quotes_a_part(subject: str, quoted: str) -> bool:
    """Whether `subject` goes on after its quote `quoted` with more words (`Revert "parallel" builds in
    seperate actions (#4057)`), so that the quote is a word of what it says, not the subject it reverted.
    A trailing `(#N)` or `[tag]` is no more words."""
    # (found by `find`: testing each occurrence by the text before it is quadratic on a long subject)
    opened = [at for mark in ('"', "“") if (at := subject.find(mark + quoted)) >= 0]
    if not opened:
        return False
    after = subject[min(opened) + 1 + len(quoted) + 1 :]  # past the closing quote
    return re.search(r"[^\W\d_]{2,}", re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", after)) is not None


def _no_reason(title: str | None, subject: str = "") -> str:
    """A revert that says nothing of why: said plainly, quoting what it reverted (never a made-up why),
    else, naming nothing it reverted, its own `subject`."""
    if title is None:
        return first_line(f"The revert {in_quotes(subject)} gave no reason.", 2000)
    return first_line(f"The revert gave no reason for taking out {in_quotes(title)}.", 2000)


def _clip(text: str, limit: int) -> str:
    data = text.encode()
    return text if len(data) <= limit else data[: limit - 3].decode(errors="ignore") + "…"
