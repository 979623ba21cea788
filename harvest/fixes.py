"""Other trailers: `Fixes: <sha> ("subject")` → a gotcha whose cause is the fixed commit;
`Comind-Record: <uuid>` → a `confirms` relation linking the commit to the record.

Only git trailers count (`comind.harvest.trailers.parse_trailers`): GitHub's `Fixes #12` prose is
an issue link, not the kernel convention, and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from comind.errors import ComindError
from comind.harvest.context import HarvestContext, commit_time, first_line
from comind.harvest.trailers import parse_trailers
from comind.harvest.walker import CommitInfo, resolve_prefix
from comind.records import TITLE_MAX, Record, harvested_id, new_record
from comind.sanitize import redact_people

NAME = "trailers"
_FIXES = re.compile(r'^([0-9a-f]{7,40})\b(?:\s*\((?:"(.*)"|(.*))\))?', re.I)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def harvest(commit: CommitInfo, ctx: HarvestContext) -> Iterator[Record]:
    lowered = commit.body.lower()
    if "fixes:" not in lowered and "comind-record:" not in lowered:
        return
    trailers = list(enumerate(parse_trailers(commit.message)))
    fixed = _fixed(commit, [(n, t.value) for n, t in trailers if t.key.lower() == "fixes"], ctx)
    prose = _prose(commit, trailers[0][1].line if trailers else None)
    for n, value, match, found in fixed:
        yield from _fixes(commit, value, n, match, found, ctx, several=len(fixed) > 1, prose=prose)
    confirmed: set[str] = set()
    for n, trailer in trailers:
        if trailer.key.lower() == "comind-record" and (record_id := trailer.value.strip().lower()) not in confirmed:
            confirmed.add(record_id)  # (named twice: one relation)
            yield from _confirms(commit, record_id, n, ctx)


def _fixed(
    commit: CommitInfo, values: list[tuple[int, str]], ctx: HarvestContext
) -> list[tuple[int, str, re.Match[str], CommitInfo | None]]:
    """The commits `Fixes:` trailers name, each once (by its sha when known, else as written)."""
    out = []
    seen: set[str] = set()
    for n, value in values:
        match = _FIXES.match(value.strip())
        if not match:
            ctx.skip("fixes-not-a-commit", f"{commit.sha[:12]} {value[:40]}")
            continue
        found = resolve_prefix(ctx.repo, match.group(1))
        fixed = ctx.commit(found[0]) if len(found) == 1 else None
        key = fixed.sha if fixed else " ".join(value.split()).lower()
        if key not in seen:
            seen.add(key)
            out.append((n, value, match, fixed))
    return out


def _prose(commit: CommitInfo, trailer_line: int | None) -> str:
    """What the message says besides its subject and its trailer block (`Fixes:`, `Signed-off-by:` …,
    from the trailer on 1-based `trailer_line`), people named in it redacted: "" when its body is
    only trailers (the trailers are the record's evidence, not its body)."""
    lines = commit.message.replace("\r\n", "\n").split("\n")[1 : trailer_line - 1 if trailer_line else None]
    return redact_people("\n".join(lines)).strip()


def _first_paragraph(prose: str) -> str:
    """A body's first paragraph, on one line."""
    return " ".join(next((p for p in prose.split("\n\n") if p.strip()), "").split())


def _fixes(
    commit: CommitInfo,
    value: str,
    n: int,
    match: re.Match[str],
    fixed: CommitInfo | None,
    ctx: HarvestContext,
    *,
    several: bool,
    prose: str,
) -> Iterator[Record]:
    quoted = match.group(2) or match.group(3) or ""
    cause_subject = fixed.subject if fixed else quoted
    evidence = [{"type": "commit", "ref": commit.sha, "role": "fix"}]
    if fixed:
        evidence.append({"type": "commit", "ref": fixed.sha, "role": "fixed"})
    else:
        evidence.append({"type": "text", "ref": f"unresolved: Fixes: {value[:300]}", "role": "fixed"})
        ctx.count("trailers:fixes-unresolved", commit.sha[:12])
    title = first_line(commit.subject)
    if several:  # one fix of several commits: each gotcha says which it is about
        which = f"{(fixed.sha if fixed else match.group(1))[:10]}" + (
            f' ("{first_line(cause_subject, 40)}")' if cause_subject else ""
        )
        title = first_line(commit.subject, TITLE_MAX - len(which) - 9) + f", fixing {which}"
    change = ctx.approach(commit.sha)
    try:
        record = new_record(
            "gotcha",
            record_id=harvested_id(f"git-fixes:{ctx.repo_name}:{commit.sha}:{n}"),
            title=title,
            body=prose[:1500],
            anchors=ctx.anchors(change, commit.sha if change else None, side="added"),
            evidence=evidence,
            fields={  # (the symptom is required: with nothing said but the subject, the subject; shown once)
                "symptom": first_line(_first_paragraph(prose) or commit.subject, 1000),
                "cause": first_line(f"introduced by {match.group(1)[:12]} ({cause_subject})", 1000),
            },
            provenance=ctx.provenance(commit, NAME),
            created_at=commit_time(commit),
            valid_from=commit.sha,
            trust=2 if fixed and ctx.on_default(commit.sha) else 1,
        )
    except ComindError as exc:
        ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
        return
    ctx.count("trailers:fixes")
    yield record


def _confirms(commit: CommitInfo, record_id: str, n: int, ctx: HarvestContext) -> Iterator[Record]:
    if not _UUID.match(record_id):
        ctx.skip("comind-record-not-an-id", f"{commit.sha[:12]} {record_id[:40]}")
        return
    try:
        record = new_record(
            "relation",
            record_id=harvested_id(f"git-comind-record:{ctx.repo_name}:{commit.sha}:{n}"),
            title="",
            anchors=[],
            evidence=[{"type": "commit", "ref": commit.sha}],
            fields={
                "relation": "confirms",
                "target": record_id,
                "commit": commit.sha,
                "reason": first_line(f"{commit.subject} ({commit.sha[:10]})", 1000),
            },
            provenance=ctx.provenance(commit, NAME),
            created_at=commit_time(commit),
        )
    except ComindError as exc:
        ctx.skip("invalid-record", f"{commit.sha[:12]}: {exc}")
        return
    ctx.count("trailers:comind-record")
    yield record
