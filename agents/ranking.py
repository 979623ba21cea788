"""`comind preflight --plan`: records ranked for a plan in words, deterministic, no model.

score = 0.45 relevance (FTS5 BM25 over title, trigger and body, scaled to the best match)
      + 0.25 anchor proximity (--on: on the code named 1, on the file holding it 0.7, the same folder 0.3)
      + 0.10 kind + 0.10 trust + 0.10 freshness (status, then age: half-weight after a year).
Only records with some proximity, or with a relevance of at least FLOOR (a share of the best
match's), are ranked; records on the code named come first (P2), dead ends only on tooling the plan
does not name last (P4), else by score; ties go by record id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from comind.records import Record
from comind.status import Status

# A record ranks on the plan's words alone only if it matches them at least half as well as the
# best match does (rule P1: without it, any record sharing a common word filled the list).
FLOOR = 0.5
# The proximity of a record on the code `--on` names (the symbol or a member of it, the file or
# folder or what is in it): such records rank first, whatever the others' words (rule P2: the
# plan's words in a small ledger ranked records sharing one word above those on the code named).
ON = 1.0
WEIGHTS = {"relevance": 0.45, "proximity": 0.25, "kind": 0.10, "trust": 0.10, "freshness": 0.10}
KIND = {"attempt": 1.0, "constraint": 0.9, "gotcha": 0.8, "decision": 0.7, "intent": 0.4, "question": 0.3}
FRESH = {"active": 1.0, "stale": 0.6, "unverifiable": 0.5, "dormant": 0.4, "orphaned": 0.2}
Where = Callable[[Mapping[str, Any]], tuple[str, str]]
STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "into",
        "when",
        "then",
        "than",
        "have",
        "has",
        "not",
        "are",
        "was",
        "were",
        "will",
        "would",
        "should",
        "could",
        "can",
        "its",
        "our",
        "use",
        "add",
        "make",
        "new",
        "fix",
        "via",
        "per",
        "all",
        "any",
        "but",
        "also",
        "only",
        "just",
        "more",
        "some",
        "each",
        # words that say nothing of code (rule P3): in a ledger of a few dozen records full-text
        # relevance cannot tell them from rare ones, so one shared made a record a best match
        "about",
        "after",
        "again",
        "because",
        "been",
        "before",
        "being",
        "both",
        "did",
        "does",
        "doing",
        "done",
        "get",
        "gets",
        "got",
        "had",
        "here",
        "how",
        "instead",
        "let",
        "like",
        "many",
        "may",
        "might",
        "most",
        "much",
        "now",
        "one",
        "other",
        "out",
        "over",
        "same",
        "still",
        "such",
        "them",
        "their",
        "there",
        "these",
        "they",
        "those",
        "through",
        "too",
        "uses",
        "used",
        "using",
        "very",
        "way",
        "what",
        "where",
        "which",
        "while",
        "who",
        "why",
        "without",
        "you",
        "your",
    ]
)


def plan_words(text: str) -> list[str]:
    return [w for w in dict.fromkeys(re.findall(r"[a-z0-9_]{3,}", text.lower())) if w not in STOP]


def proximity(record: Record, on: Sequence[Mapping[str, Any]], where: Where | None = None) -> tuple[float, str]:
    """How near the record's anchors are to the code `on` names: ON on it (the symbol or a
    member of it; the file, or the folder, or anything in it), 0.7 on the file (or a folder)
    holding it, 0.3 in its folder; 0 for none. `where`: (path, symbol or "") of an anchor's code
    now (`entries.followed`), else as written."""
    best, how = 0.0, ""
    if not on:
        return best, how
    places = [where(a) if where is not None else (a["path"], a.get("symbol")) for a in record.anchors if a.get("path")]
    for target in on:
        tpath, tsym = target.get("path"), target.get("symbol")
        for path, sym in places:
            if not tpath:
                continue
            if _on(path, sym, tpath, tsym):
                score, why = ON, f"on {path}::{sym}" if sym else f"on {path}"
            elif path == tpath or (path.endswith("/") and tpath.startswith(path)):
                score, why = 0.7, f"on {path}"
            elif path.rsplit("/", 1)[0] == tpath.rsplit("/", 1)[0]:
                score, why = 0.3, f"in the folder of {tpath}"
            else:
                continue
            if score > best:
                best, how = score, why
    return best, how


def _on(path: str, symbol: str | None, tpath: str, tsymbol: str | None) -> bool:
    """Is an anchor (path, symbol) on the code a target names, or inside it?"""
    if tsymbol:
        return path == tpath and bool(symbol) and (symbol == tsymbol or str(symbol).startswith(tsymbol + "."))
    return path.startswith(tpath) if tpath.endswith("/") else path == tpath


def aside(record: Record, words: Sequence[str]) -> bool:
    """Rule P4: is the record a dead end only on tooling (`entries.tooling_only`: a reverted bump of
    node, of a dependency, of a CI action) whose name the plan's words do not hold? Such a record
    ranks after the others: sharing `speed` and `permission`, a reverted node bump was the best match
    (1.00) of a plan to speed up the permission check, above the check's own dead end (0.72)."""
    from .entries import tooling_only

    if record.kind != "attempt" or not tooling_only(record):
        return False
    said = set(words)
    for anchor in [a for a in record.anchors if a.get("role", "subject") == "subject"] or record.anchors:
        if anchor.get("scope") == "dependency":  # a package by its last part: `checkout` of actions/checkout
            name = str((anchor.get("dep") or {}).get("package") or "").rsplit("/", 1)[-1]
        else:  # a file by its name: `.nvmrc`, `requirements.txt`, `.pre-commit-config.yaml`
            name = str(anchor.get("path") or "").rstrip("/").rsplit("/", 1)[-1].lstrip(".").split(".")[0]
        if (parts := plan_words(name)) and set(parts) <= said:
            return False
    return True


@dataclass(frozen=True)
class Ranked:
    record: Record
    status: Status
    score: float
    parts: dict[str, float]
    why: str
    aside: bool = False  # rule P4: after the others


def rank(
    records: Sequence[Record],
    statuses: Mapping[str, Status],
    relevance: Mapping[str, float],
    now: datetime,
    on: Sequence[Mapping[str, Any]] = (),
    limit: int = 10,
    floor: float | None = None,
    where: Where | None = None,
    words: Sequence[str] = (),
) -> list[Ranked]:
    """The records for a plan, best first; `floor` (default FLOOR): the relevance, as a share of
    the best match's, a record needs to rank on the plan's words alone (proximity ranks it anyway);
    `where`: where an anchor's code is now (`proximity`); `words`: the plan's (`aside`)."""
    floor = FLOOR if floor is None else floor
    top = max(relevance.values(), default=0.0) or 1.0
    out = []
    for record in records:
        status = statuses.get(record.id)
        if status is None or status.state not in FRESH or status.trust == 0:
            continue
        near, how = proximity(record, on, where)
        rel = max(relevance.get(record.id, 0.0), 0.0) / top
        if near <= 0 and (rel <= 0 or rel < floor):
            continue
        created = datetime.fromisoformat(record.created_at.replace("Z", "+00:00"))
        age = max((now - created).days, 0)
        parts = {
            "relevance": round(rel, 4),
            "proximity": near,
            "kind": KIND.get(record.kind, 0.2),
            "trust": status.trust / 4,
            "freshness": round(FRESH[status.state] * (0.5 + 0.5 * 0.5 ** (age / 365)), 4),
        }
        score = round(sum(WEIGHTS[k] * v for k, v in parts.items()), 4)
        later = near <= 0 and aside(record, words)  # (`--on` near it names it too)
        said = [f"matches the plan's words ({rel:.2f})" if rel else "", how, "only on tooling the plan does not name"]
        why = "; ".join(filter(None, said if later else said[:2]))
        out.append(Ranked(record, status, score, parts, why, later))
    out.sort(key=lambda r: (r.parts["proximity"] < ON, r.aside, -r.score, r.record.id))
    return out[:limit]
