"""The one executor every read goes through: sync the view, derive status, filter, then rank.

Filtering happens before any limit is applied, and every result carries the status it was
filtered on, so a record left out by a filter is never mistaken for a miss (DESIGN §10).

A warm read must not import pygit2 or the code index: modules on that path are imported
inside the functions that need them.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Generator, Iterable, Sequence
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


def statuses(
    ws: Workspace,
    ledger: Ledger,
    records: Iterable[Record],
    *,
    at: str | None = None,
    now: datetime | None = None,
    code: bool = True,
    near: Collection[str] | None = None,
) -> dict[str, Status]:
    """Derived status of the records, with what the code at `at` (default HEAD) says about them
    (about the records in ``near`` only, when given: see :func:`comind.codestatus.code_verdicts`)."""
    from comind.codestatus import code_verdicts

    records = list(records)
    context = ledger.with_context(records)
    verdicts = code_verdicts(ws, ledger, records, at, context, near) if code else {}
    enforced = ledger.enforced(at or ws.head() or "")  # constraints whose check last passed at this commit
    from comind.status import derive

    return derive(
        context, now=now or current_time(), dormant_days=ws.config.dormant_days, code=verdicts, enforced=enforced
    )


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
    wanted_states = _wanted_states(states, history)
    candidates = [r for r in records if r.kind != "relation" and (not wanted_kinds or r.kind in wanted_kinds)]
    derived = statuses(ws, ledger, candidates)
    results = [Result(r, derived[r.id]) for r in candidates if derived[r.id].state in wanted_states]
    return results[:limit] if limit else results


def select_all(
    ws: Workspace,
    ledger: Ledger,
    *,
    kinds: Iterable[str] = (),
    states: Iterable[str] = (),
    history: bool = False,
) -> Generator[Result, None, None]:
    """`select` over every record of the ledger, oldest first, yielded one at a time: the same
    results in the same order, from one read snapshot, without holding the ledger in memory.

    Status needs only the relations (and the records they name as sources) besides the record
    itself, and code verdicts are computed up front, in one go, for the records that can have one."""
    from comind.codestatus import code_verdicts
    from comind.status import Deriver

    wanted_kinds = set(kinds)
    wanted_states = _wanted_states(states, history)
    with ledger.reading():
        context = ledger.with_context(())
        verdicts = code_verdicts(ws, ledger, ledger.code_candidates(wanted_kinds), None, context)
        enforced = ledger.enforced(ws.head() or "")
        status_of = Deriver(
            context, now=current_time(), dormant_days=ws.config.dormant_days, code=verdicts, enforced=enforced
        )
        for record in ledger.knowledge(wanted_kinds):
            status = status_of(record)
            if status.state in wanted_states:
                yield Result(record, status)


def _wanted_states(states: Iterable[str], history: bool) -> set[str]:
    wanted = set(states) or set(DEFAULT_STATES) | (set(HISTORY_STATES) if history else set())
    for state in wanted - set(STATES):
        raise ComindError(f"unknown status {state!r} (one of {', '.join(STATES)})")
    return wanted
