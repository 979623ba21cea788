"""`preflight --plan`'s ranking: deterministic, and a record ranks on the plan's words only when
it matches them at least FLOOR as well as the best match (rule P1)."""

from __future__ import annotations

from datetime import UTC, datetime

from comind.agents.ranking import FLOOR, rank
from comind.anchors import parse_anchor
from comind.records import new_record
from comind.status import Status

NOW = datetime(2026, 6, 1, tzinfo=UTC)
HUMAN = {"actor": "p-human", "author_kind": "human", "source": "cli"}


def constraint(title: str, path: str):  # type: ignore[no-untyped-def]
    return new_record(
        "constraint",
        title=title,
        anchors=[parse_anchor(path)],
        provenance=HUMAN,
        fields={"rule": title, "severity": "must"},
        created_at="2026-05-20T00:00:00Z",
    )


def test_a_weak_match_is_not_ranked_unless_it_is_near() -> None:
    strong, weak, near = constraint("strong", "app/a.py"), constraint("weak", "lib/b.py"), constraint("n", "app/c.py")
    statuses = {r.id: Status("active", "", 3) for r in (strong, weak, near)}
    records = [strong, weak, near]
    below = {strong.id: 10.0, weak.id: 10.0 * FLOOR * 0.9, near.id: 1.0}
    assert [r.record.id for r in rank(records, statuses, below, NOW)] == [strong.id]
    on = [parse_anchor("app/c.py")]
    assert [r.record.id for r in rank(records, statuses, below, NOW, on)] == [strong.id, near.id]  # near: ranked
    assert {r.record.id for r in rank(records, statuses, below, NOW, floor=0.0)} == {strong.id, weak.id, near.id}
    above = {strong.id: 10.0, weak.id: 10.0 * FLOOR}
    assert [r.record.id for r in rank(records, statuses, above, NOW)] == [strong.id, weak.id]
