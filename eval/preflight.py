"""`comind eval preflight`: does `preflight` surface a reverted attempt before it is tried again?

The history is harvested and replayed as `comind eval replay` does (`replay.harvest_history`,
`replay.replay`: the same landings and the same relands, recognised from messages alone). For
each reland, the ledger holds what was harvested from the landings before it (nothing later),
the code is read as it was before the reland landed, and preflight is asked two ways:

- `--diff`: the reland's own change (from the landing's base to its commit). Surfaced: the attempt
  it relands is among the items, in any section; a flag: in the re-proposes section.
- `--plan`: the reland's own commit message as the plan, no anchors. Recall@3: the attempt is
  among the top 3 ranked records.

Unrelated: what it shows that is not the attempt the reland relands (every item for `--diff`,
the top 3 for `--plan`). Nothing is written into the repository (a private temporary ledger).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from comind.agents.preflight import preflight_change, preflight_plan
from comind.ledger import Ledger
from comind.store import Store

from .replay import EvalWorkspace, Landing, Progress, harvest_history, replay

if TYPE_CHECKING:
    from comind.records import Record

TOP = 3


class MomentWorkspace(EvalWorkspace):
    """The repository as it was at one commit (`at`), with a ledger of the records put into
    `records` so far: a private store and view, nothing shared."""

    def __init__(self, path: Path, flags: Mapping[str, Any] | None = None) -> None:
        super().__init__(path, flags)
        self.at: str | None = None
        self.records = Store(str(self.cache_dir / "records"))
        self._ledger: Ledger | None = None

    def head(self) -> str | None:
        return self.at or super().head()

    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger(self.cache_dir / "ledger.sqlite", {"harvest": self.records})
        return self._ledger


@dataclass
class Case:
    commit: str
    subject: str
    form: str
    expected: list[str]  # ids of the attempts it relands
    diff_surfaced: bool = False
    diff_flagged: bool = False  # in the re-proposes section
    diff_unrelated: int = 0  # items that are not the attempt
    diff_unrelated_flags: int = 0  # re-proposes items that are not the attempt
    plan_rank: int | None = None  # 1-based rank of the attempt in the plan's ranking, if ranked
    plan_unrelated: int = 0  # of the top 3, records that are not the attempt
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "subject": self.subject,
            "form": self.form,
            "expected": self.expected,
            "diff": {
                "surfaced": self.diff_surfaced,
                "flagged": self.diff_flagged,
                "unrelated": self.diff_unrelated,
                "unrelated_flags": self.diff_unrelated_flags,
            },
            "plan": {"rank": self.plan_rank, "in_top3": self.in_top, "unrelated_in_top3": self.plan_unrelated},
            **({"note": self.note} if self.note else {}),
        }

    @property
    def in_top(self) -> bool:
        return self.plan_rank is not None and self.plan_rank <= TOP


@dataclass
class PreflightEval:
    repo: str
    path: str
    tip: str
    commits: int
    attempts: int
    cases: list[Case] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def figures(self) -> dict[str, Any]:
        n = len(self.cases)

        def share(count: int) -> float | None:
            return round(count / n, 4) if n else None

        return {
            "relands": n,
            "with_attempt": sum(1 for c in self.cases if c.expected),
            "diff_surfaced": sum(c.diff_surfaced for c in self.cases),
            "diff_recall": share(sum(c.diff_surfaced for c in self.cases)),
            "diff_flagged": sum(c.diff_flagged for c in self.cases),
            "diff_with_unrelated": sum(1 for c in self.cases if c.diff_unrelated),
            "diff_unrelated_per_reland": round(sum(c.diff_unrelated for c in self.cases) / n, 3) if n else None,
            "diff_unrelated_flags": sum(c.diff_unrelated_flags for c in self.cases),
            "plan_top3": sum(c.in_top for c in self.cases),
            "plan_recall_at_3": share(sum(c.in_top for c in self.cases)),
            "plan_top1": sum(1 for c in self.cases if c.plan_rank == 1),
            "plan_unrelated_above": sum(min((c.plan_rank or TOP + 1) - 1, TOP) for c in self.cases),
            "plan_with_unrelated_in_top3": sum(1 for c in self.cases if c.plan_unrelated),
            "plan_unrelated_in_top3_per_reland": round(sum(c.plan_unrelated for c in self.cases) / n, 3) if n else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "path": self.path,
            "tip": self.tip,
            "commits": self.commits,
            "attempts": self.attempts,
            **self.figures(),
            "cases": [c.to_json() for c in self.cases],
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
        }


def evaluate(ws: MomentWorkspace, *, progress: Progress | None = None) -> PreflightEval:
    """Preflight, both ways, at every reland of the history (see the module docstring)."""
    started = time.perf_counter()
    history = harvest_history(ws, progress=progress)
    replayed = replay(ws, history=history)
    out = PreflightEval(ws.repo_name, str(ws.root), history.tip, len(history.commits), len(history.attempts))
    out.seconds["replay"] = time.perf_counter() - started
    asked = time.perf_counter()
    known: set[str] = set()
    relands = sorted(replayed.relands, key=lambda landing: landing.index)
    for done, landing in enumerate(relands):
        if progress:
            progress("preflight at relands", done, len(relands))
        before = [r for n, r in history.records if history.landing[history.commits[n].sha] < landing.index]
        _put(ws, before, known)
        out.cases.append(_case(ws, history.base.get(landing.index), landing))
    if progress:
        progress("preflight at relands", len(relands), len(relands))
    out.seconds["preflight"] = time.perf_counter() - asked
    out.seconds["total"] = time.perf_counter() - started
    return out


def _put(ws: MomentWorkspace, records: list[Record], known: set[str]) -> None:
    new = [r for r in records if r.id not in known]
    if new:
        ws.records.put_many(new)
        known.update(r.id for r in new)
    ws.ledger().sync(warn=False)


def _case(ws: MomentWorkspace, run_base: str | None, landing: Landing) -> Case:
    commit = landing.commit
    reland = landing.reland
    expected = {a.record.id for a in landing.expected}
    case = Case(commit.sha, commit.subject, reland.form if reland else "", sorted(expected), note=landing.note)
    base = run_base or (commit.parents[0] if commit.parents else None)
    if base is None:
        case.note = case.note or "a root commit: nothing to compare with"
        return case
    ws.at = base  # the code, and the statuses, as they were before the reland landed
    ledger = ws.ledger()
    diff = preflight_change(ws, ledger, base, commit.sha)
    ids = [i.entry.id for i in diff.items]
    case.diff_surfaced = bool(expected & set(ids))
    case.diff_flagged = any(i.entry.id in expected for i in diff.items if i.section == "reproposes")
    case.diff_unrelated = sum(1 for i in ids if i not in expected)
    case.diff_unrelated_flags = sum(1 for i in diff.items if i.section == "reproposes" and i.entry.id not in expected)
    announcer = landing.announcer or commit
    plan = preflight_plan(ws, ledger, announcer.message, (), limit=10)
    ranked = [i.entry.id for i in plan.items]
    case.plan_rank = next((n + 1 for n, i in enumerate(ranked) if i in expected), None)
    case.plan_unrelated = sum(1 for i in ranked[:TOP] if i not in expected)
    return case
