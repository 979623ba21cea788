"""The one executor every read goes through: sync the view, derive status, filter, then rank.

Filtering happens before any limit is applied, and every result carries the status it was
filtered on, so a record left out by a filter is never mistaken for a miss (DESIGN §10).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from comind.errors import ComindError
from comind.records import Record
from comind.status import HISTORY_STATES, STATES, Status

if TYPE_CHECKING:
    from comind.ledger import Ledger
    from comind.workspace import Workspace

# Shown unless asked for: quarantined records never surface unprompted.
DEFAULT_STATES = tuple(s for s in STATES if s not in HISTORY_STATES and s != "quarantined")


def current_time() -> datetime:
    """Now, or COMIND_NOW (an ISO time) so that tests and replays can fix the clock."""
    fixed = os.environ.get("COMIND_NOW")
    if not fixed:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(fixed.replace("Z", "+00:00"))
    except ValueError:
        raise ComindError(f"COMIND_NOW: not an ISO time: {fixed!r}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Result(NamedTuple):
    record: Record
    status: Status


def open_ledger(ws: Workspace, *, sync: bool = True) -> Ledger:
    """The ledger view, brought up to date; unreadable objects are named on stderr every time."""
    import sys

    ledger = ws.ledger()
    if sync:
        ledger.sync(warn=False)
        for line in ledger.problem_lines():
            print(f"comind: warning: {line}", file=sys.stderr)
    return ledger


def statuses(ws: Workspace, ledger: Ledger, records: Iterable[Record], *, at: str | None = None,
             now: datetime | None = None, code: bool = True,
             near: Collection[str] | None = None) -> dict[str, Status]:
    """Derived status of the records, with what the code at `at` (default HEAD) says about them
    (about the records in ``near`` only, when given: see :func:`comind.codestatus.code_verdicts`)."""
    from comind.codestatus import code_verdicts

    records = list(records)
    context = ledger.with_context(records)
    verdicts = code_verdicts(ws, ledger, records, at, context, near) if code else {}
    enforced = ledger.enforced(at or ws.head() or "")  # constraints whose check last passed at this commit
    from comind.status import derive

    return derive(context, now=now or current_time(), dormant_days=ws.config.dormant_days, code=verdicts,
                  enforced=enforced)


def select(
    ws: Workspace,
    ledger: Ledger,
    records: Sequence[Record],
    *,
    kinds: Iterable[str] = (),
    states: Iterable[str] = (),
    history: bool = False,
    limit: int | None = None,
) -> list[Result]:
    """Filter records (kept in their given order, which is their rank) by kind and status."""
    wanted_kinds = set(kinds)
    wanted_states = set(states) or set(DEFAULT_STATES) | (set(HISTORY_STATES) if history else set())
    for state in wanted_states - set(STATES):
        raise ComindError(f"unknown status {state!r} (one of {', '.join(STATES)})")
    candidates = [r for r in records if r.kind != "relation" and (not wanted_kinds or r.kind in wanted_kinds)]
    derived = statuses(ws, ledger, candidates)
    results = [Result(r, derived[r.id]) for r in candidates if derived[r.id].state in wanted_states]
    return results[:limit] if limit else results
