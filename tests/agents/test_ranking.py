"""`preflight --plan`'s ranking: deterministic, a record ranks on the plan's words only when
it matches them at least FLOOR as well as the best match (rule P1), records on the code `--on`
names first (P2), and words that say nothing of code are no match (P3)."""

from __future__ import annotations

from datetime import UTC, datetime

from comind.agents.ranking import FLOOR, aside, plan_words, rank
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
    assert {r.record.id for r in rank(records, statuses, below, NOW, on)} == {strong.id, near.id}  # near: ranked
    assert {r.record.id for r in rank(records, statuses, below, NOW, floor=0.0)} == {strong.id, weak.id, near.id}
    above = {strong.id: 10.0, weak.id: 10.0 * FLOOR}
    assert [r.record.id for r in rank(records, statuses, above, NOW)] == [strong.id, weak.id]


def test_records_on_the_code_named_rank_before_records_sharing_a_word() -> None:
    """A one-word plan named the function it touches; two records sharing the word, elsewhere,
    outranked the two on that function (relevance 0.45 against proximity 0.25)."""
    words = [constraint(f"Refactor {n}", f"lib/{n}.py") for n in ("a", "b")]
    on_it = [constraint(f"on the helper {n}", "app/checker.py::Checker.helper") for n in ("a", "b")]
    in_file = constraint("on the checker", "app/checker.py")
    records = [*words, *on_it, in_file]
    statuses = {r.id: Status("active", "", 3) for r in records}
    relevance = {words[0].id: 10.0, words[1].id: 9.9}
    on = [parse_anchor("app/checker.py::Checker.helper")]
    ranked = rank(records, statuses, relevance, NOW, on, limit=2)
    assert {r.record.id for r in ranked} == {r.id for r in on_it}, [r.record.title for r in ranked]
    assert [r.record.id for r in rank(records, statuses, relevance, NOW)] == [w.id for w in words]  # no --on
    whole = rank(records, statuses, relevance, NOW, [parse_anchor("app/checker.py")], limit=3)
    assert {r.record.id for r in whole} == {*(r.id for r in on_it), in_file.id}  # a file named: all on it


def test_words_that_say_nothing_of_code_are_no_match() -> None:
    """A plan about threads shared only `using` with a record about pytz, which ranked at 0.98."""
    assert plan_words("Handle BaseException raised in threads using a wrapper") == [
        "handle",
        "baseexception",
        "raised",
        "threads",
        "wrapper",
    ]


def attempt(title: str, *anchors: str):  # type: ignore[no-untyped-def]
    fields = {"approach": title, "outcome": "reverted"}
    return new_record(
        "attempt",
        title=title,
        anchors=[parse_anchor(a) for a in anchors],
        provenance=HUMAN,
        fields=fields,
        evidence=[{"type": "commit", "ref": "0" * 40, "role": "revert"}],
        created_at="2026-05-20T00:00:00Z",
    )


def test_a_dead_end_only_on_tooling_is_aside_unless_the_plan_names_it() -> None:
    """Rule P4: a package is named by its last part, a file by its name without dots and suffix."""
    checkout = attempt(
        "Bump actions/checkout from 3 to 4", ".github/workflows/ci.yml", "dep:actions/actions/checkout@v4"
    )
    hooks = attempt("pre-commit autoupdate", ".pre-commit-config.yaml")
    pins = attempt("Pin requests", "requirements.txt")
    for record, naming, other in (
        (checkout, "bump checkout to v4", "check out the permission cache"),
        (hooks, "update the pre-commit config", "commit the config loader"),
        (pins, "trim requirements", "retry failed requests"),
    ):
        assert not aside(record, plan_words(naming)), naming
        assert aside(record, plan_words(other)), other
    code = attempt("Cache permission checks", "app/perm.py::Checker.check", "requirements.txt")
    assert not aside(code, [])  # on code too
    near = rank([pins], {pins.id: Status("active", "", 2)}, {pins.id: 1.0}, NOW, [parse_anchor("requirements.txt")])
    assert [r.aside for r in near] == [False]  # `--on` near it names it too
