"""What the harvesters read on a repository (`comind eval harvest`).

Counts by revert marker and Lore key, unresolved and ambiguous references,
skips by reason (all from `HarvestContext`), plus the lines after the subject that look like
trailers (``^[A-Za-z][A-Za-z0-9-]*:\\s``) but that the Lore-aware parser did not take, by key;
each with up to five examples (commit and line) to audit.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from comind.eval.replay import EXAMPLES, History, Progress, harvest_history
from comind.harvest.markers import revert_markers
from comind.harvest.trailers import canonical_key, lore_atom, might_have_lore, parse_lore
from comind.sanitize import redact_emails
from comind.workspace import Workspace

_TRAILER_LIKE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s", re.MULTILINE)


def _examples(found: Mapping[str, list[str]], counts: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    return {
        k: {"count": n, "examples": [redact_emails(e) for e in found.get(k, ())][:EXAMPLES]}
        for k, n in sorted(counts.items())
    }


def harvest_coverage(
    ws: Workspace, *, progress: Progress | None = None, history: History | None = None
) -> dict[str, Any]:
    """What the harvesters read on this repository, with examples to audit (see the module docstring)."""
    history = history or harvest_history(ws, progress=progress)
    ctx = history.ctx
    by_short = {c.sha[:12]: c for c in history.commits}

    def example(key: str, kind: str | None = None) -> list[str]:
        out = []
        seen: Counter[str] = Counter()  # a commit counted n times shows its n markers of the kind
        for ex in ctx.examples.get(key, [])[:EXAMPLES]:
            sha = ex.split(" ", 1)[0]
            commit = by_short.get(sha)
            if " " not in ex and commit is not None:
                found = [m for m in revert_markers(commit.subject, commit.body) if m.kind == kind]
                marker = found[seen[sha]] if seen[sha] < len(found) else None
                seen[sha] += 1
                ex = f"{sha} {(marker.text if marker else commit.subject)[:100]}"
            out.append(redact_emails(ex))
        return out

    markers = {
        k.split(":", 1)[1]: {"count": n, "examples": example(k, k.split(":", 1)[1])}
        for k, n in sorted(ctx.counts.items())
        if k.startswith("marker:")
    }
    records = Counter(r.kind for _, r in history.records)
    lore_examples: dict[str, list[str]] = defaultdict(list)
    not_taken: Counter[str] = Counter()
    not_taken_examples: dict[str, list[str]] = defaultdict(list)
    for commit in history.commits:
        body_at = commit.message.find("\n")
        if body_at < 0 or not _TRAILER_LIKE.search(commit.message, body_at + 1):
            continue
        lines = commit.message.split("\n")
        taken: set[int] = set()
        for t in parse_lore(commit.message):
            taken.update(range(t.line - 1, t.line + t.raw.count("\n")))
        atom = lore_atom(commit.message) if might_have_lore(commit.message) else None
        if atom is not None and atom.has_lore:
            for t in atom.trailers:
                if len(lore_examples[t.canonical_key]) < EXAMPLES:
                    lore_examples[t.canonical_key].append(f"{commit.sha[:12]} {t.raw.split(chr(10))[0][:100]}")
        for n, line in enumerate(lines[1:], start=1):
            if n in taken or (m := _TRAILER_LIKE.match(line)) is None:
                continue
            key = canonical_key(m.group(1))
            not_taken[key] += 1
            if len(not_taken_examples[key]) < EXAMPLES:
                not_taken_examples[key].append(f"{commit.sha[:12]} {line.strip()[:100]}")
    lore_counts = {k.split(":", 1)[1]: n for k, n in ctx.counts.items() if k.startswith("lore-key:")}
    other = {k: n for k, n in ctx.counts.items() if not k.startswith(("marker:", "lore-key:"))}
    problems = ("reverts:unresolved", "reverts:ambiguous", "reverts:reland-unresolved", "trailers:fixes-unresolved")
    return {
        "repo": ws.repo_name,
        "path": str(ws.root),
        "tip": history.tip,
        "commits": len(history.commits),
        "landings": len(history.chain),
        "records": dict(sorted(records.items())),
        "attempts_with_lines": sum(1 for a in history.attempts if a.lines),
        "markers": markers,
        "lore_keys": _examples(lore_examples, lore_counts),
        "counts": {k: {"count": n, "examples": example(k)} for k, n in sorted(other.items()) if k not in problems},
        "unresolved": {
            k: {"count": ctx.counts[k], "examples": example(k)}
            for k in problems
            if ctx.counts.get(k) and k != "reverts:ambiguous"
        },
        "ambiguous": {"count": ctx.counts.get("reverts:ambiguous", 0), "examples": example("reverts:ambiguous")},
        "trailer_like_not_taken": _examples(not_taken_examples, dict(not_taken.most_common())),
        "skipped": {k: {"count": n, "examples": example(f"skipped:{k}")} for k, n in sorted(ctx.skipped.items())},
        "seconds": round(history.seconds, 2),
    }
