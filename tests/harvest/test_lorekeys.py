"""The Lore vocabulary, dialects and the normalised LoreAtom, on real commits and spec examples."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from harvest_repo import HarvestRepo
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.harvest.lorekeys import (
    LORE_V1_KEYS,
    canonical_lore_key,
    normalise_enum,
    parse_directive,
    split_rejected,
)
from comind.harvest.trailers import lore_atom
from comind.harvest.walker import walk

# lore-protocol.com "Full Example", verbatim (the Directive line is longer than our line limit).
SPEC_FULL_EXAMPLE = """Prevent silent session drops during long-running operations

The auth service returns inconsistent status codes on token
expiry, so the interceptor catches all 4xx responses and
triggers an inline refresh.

Lore-id: a7f3b2c1
Constraint: Auth service does not support token introspection
Constraint: Must not add latency to non-expired-token paths
Rejected: Extend token TTL to 24h | security policy violation
Rejected: Background refresh on timer | race condition with concurrent requests
Confidence: high
Scope-risk: narrow
Reversibility: clean
{directive}
Tested: Single expired token refresh (unit)
Not-tested: Auth service cold-start > 500ms behavior
Related: 9c8b7a6e
""".format(
    directive="Directive: [until:auth-v3] Error handling is intentionally broad (all 4xx) -- do not narrow"
    " without verifying upstream behavior"
)


def test_spec_full_example_from_a_real_commit(tmp_path: Path) -> None:
    repo = HarvestRepo(tmp_path / "r")
    sha = repo.commit(SPEC_FULL_EXAMPLE, {"a.py": "x = 1\n"})
    (commit,) = list(walk(repo.path, ["HEAD"]))
    assert commit.sha == sha
    atom = lore_atom(commit.message)
    assert atom.has_lore and atom.lore_id == "a7f3b2c1" and atom.lore_id_valid
    assert atom.constraints == (
        "Auth service does not support token introspection",
        "Must not add latency to non-expired-token paths",
    )
    assert [(r.option, r.reason) for r in atom.rejected] == [
        ("Extend token TTL to 24h", "security policy violation"),
        ("Background refresh on timer", "race condition with concurrent requests"),
    ]
    assert atom.confidence is not None and atom.confidence.value == "high"
    assert atom.scope_risk is not None and atom.scope_risk.value == "narrow"
    assert atom.reversibility is not None and atom.reversibility.value == "clean"
    (directive,) = atom.directives
    assert directive.until is None and directive.label == "auth-v3"
    assert directive.text.startswith("[until:auth-v3] Error handling")
    assert atom.tested == ("Single expired token refresh (unit)",)
    assert atom.not_tested == ("Auth service cold-start > 500ms behavior",)
    assert [(r.value, r.lore_id) for r in atom.related] == [("9c8b7a6e", "9c8b7a6e")]
    assert atom.custom == () and atom.problems == ()


def test_oh_my_codex_dialect_without_lore_id_after_co_author_paragraph() -> None:
    msg = (
        "Keep retries bounded so the queue drains\n\nConstraint: upstream rate limit is 10/s\n"
        "Rejected: unbounded retries| floods the queue\nConfidence: medium\nScope-risk: broad\n"
        "Reversibility: messy\nDirective: Error handling is intentionally broad (all 4xx)\n"
        "  -- do not narrow without verifying upstream behavior\nRelated: src/queue.py, issue 12\n\n"
        "Co-authored-by: Agent <agent@example.com>\n"
    )
    atom = lore_atom(msg)
    assert atom.has_lore and atom.lore_id is None and not atom.lore_id_valid
    assert atom.rejected[0].option == "unbounded retries" and atom.rejected[0].reason == "floods the queue"
    assert atom.scope_risk is not None and (atom.scope_risk.value, atom.scope_risk.raw) == ("wide", "broad")
    assert atom.reversibility is not None and atom.reversibility.value == "migration-needed"
    assert atom.directives[0].text.endswith("(all 4xx) -- do not narrow without verifying upstream behavior")
    assert [(r.value, r.lore_id) for r in atom.related] == [("src/queue.py, issue 12", None)]
    assert [t.canonical_key for t in atom.custom] == ["Co-authored-by"]


def test_commitlore_dialect() -> None:
    msg = (
        "Pin the resolver\n\nLimit: registry mirrors lag by a day\nRuled-out: vendoring|too heavy | really\n"
        "Warn: [until:2026-02] keep the pin\nBlast: module\nUndo: costly\nCertainty: tentative\n"
        "Verified: CI matrix\nUnverified: Windows\nRecord-Id: r-abc123\nFollows: r-zzz999\n"
        "Supersedes: r-old001\nExpires: 2026-12-31\nEvidence: docs/adr.md#pin\nProvenance: authored\n"
        "X-Team: core\n"
    )
    atom = lore_atom(msg)
    assert atom.constraints == ("registry mirrors lag by a day",)
    assert atom.rejected[0][:2] == ("vendoring", "too heavy | really")  # split on the FIRST |
    assert atom.directives[0].until == date(2026, 2, 28) and atom.directives[0].text == "keep the pin"
    assert atom.scope_risk is not None and atom.scope_risk.value == "moderate"
    assert atom.reversibility is not None and atom.reversibility.value == "migration-needed"
    assert atom.confidence is not None and atom.confidence.value == "medium"
    assert atom.tested == ("CI matrix",) and atom.not_tested == ("Windows",)
    assert atom.lore_id == "r-abc123" and atom.lore_id_valid
    assert [r.lore_id for r in atom.related] == ["r-zzz999"]
    assert [r.lore_id for r in atom.supersedes] == ["r-old001"]
    assert atom.expires_on == date(2026, 12, 31) and atom.evidence == ("docs/adr.md#pin",)
    assert atom.provenance == "authored"
    assert [t.key for t in atom.custom] == ["X-Team"]


def test_invalid_values_are_kept_raw_and_flagged() -> None:
    msg = (
        "S\n\nLore-id: XYZ\nLore-id: a7f3b2c1\nConfidence: sure\nRejected: no pipe here\n"
        "Directive: [until:2026-13-45] bad date\n"
    )
    atom = lore_atom(msg)
    assert atom.lore_id == "XYZ" and not atom.lore_id_valid
    assert atom.confidence is not None and (atom.confidence.value, atom.confidence.raw) == (None, "sure")
    assert atom.rejected[0] == ("no pipe here", "", "no pipe here")
    assert atom.directives[0].until is None
    assert {p.split(":")[0] for p in atom.problems} == {
        "lore-id-invalid",
        "lore-id-repeated",
        "enum-invalid",
        "rejected-without-reason",
        "directive-until-invalid",
    }


def test_last_valid_enum_wins() -> None:
    atom = lore_atom("S\n\nConfidence: low\nConfidence: bogus\nConfidence: High (ran CI)\n")
    assert atom.confidence is not None and (atom.confidence.value, atom.confidence.raw) == ("high", "High (ran CI)")


@pytest.mark.parametrize(
    ("concept", "raw", "value"),
    [
        ("Scope-risk", "broad", "wide"),
        ("Scope-risk", "System", "wide"),
        ("Scope-risk", "local", "narrow"),
        ("Reversibility", "migration needed", "migration-needed"),
        ("Reversibility", "difficult", "irreversible"),
        ("Reversibility", "moderate", "migration-needed"),
        ("Reversibility", "permanent", "irreversible"),
        ("Reversibility", "easy", "clean"),
        ("Confidence", "guess", "low"),
        ("Confidence", "firm", "high"),
        ("Confidence", "highest", None),
        ("Confidence", "", None),
    ],
)
def test_enum_aliases(concept: str, raw: str, value: str | None) -> None:
    assert normalise_enum(concept, raw) == value


def test_until_dates() -> None:
    assert parse_directive("[until:2026-03-15] x")[0].until == date(2026, 3, 15)
    assert parse_directive("[until:2024-02] x")[0].until == date(2024, 2, 29)
    assert parse_directive("no label")[0].until is None


@pytest.mark.parametrize("raw", ["x " + "\t" * 1_000_000 + "x", "[until:" + " " * 1_000_000, " " * 1_000_000])
def test_a_megabyte_directive_is_read_in_one_pass(raw: str) -> None:
    # each run of spaces was scanned from every space of it: a megabyte took minutes
    directive, problem = parse_directive(raw)
    assert (directive.text, directive.until, problem) == (raw.strip(), None, None)


def test_a_dated_until_label_counts_anywhere_and_leaves_the_text() -> None:
    """The Lore CLI reads `[until:YYYY-MM(-DD)]` wherever it is; a label that is no date stays text."""
    later, _ = parse_directive("do not memoize converted values [until:2027-01]")
    assert (later.text, later.until) == ("do not memoize converted values", date(2027, 1, 31))
    inside, _ = parse_directive("keep eager [until:2026-12-05] until the cache lands")
    assert (inside.text, inside.until) == ("keep eager until the cache lands", date(2026, 12, 5))
    opaque, _ = parse_directive("broad errors [until:auth-v3]")
    assert (opaque.text, opaque.until, opaque.label) == ("broad errors [until:auth-v3]", None, None)
    both, _ = parse_directive("[until:auth-v3] keep [until:2027-01]")
    assert (both.text, both.until) == ("[until:auth-v3] keep", date(2027, 1, 31))
    assert parse_directive("see https://x.org/a[until:2027-01]b")[0].text == "see https://x.org/ab"


def test_split_rejected_tolerates_spacing() -> None:
    assert split_rejected("a|b")[:2] == ("a", "b")
    assert split_rejected(" a  |  b | c ")[:2] == ("a", "b | c")
    assert split_rejected("a |")[:2] == ("a", "")


def test_vocabulary() -> None:
    assert len(LORE_V1_KEYS) == 12
    assert canonical_lore_key("NOT-TESTED") == "Not-tested"
    assert canonical_lore_key("co-authored-by") is None


def test_no_lore() -> None:
    atom = lore_atom("Fix a typo\n\nSigned-off-by: A <a@b>\n")
    assert not atom.has_lore and atom.custom == ()  # custom trailers only beside Lore


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=300),
    st.lists(
        st.sampled_from(
            ["Lore-id: ", "Confidence: ", "Rejected: ", "Directive: [until:", "Related: ", "Expires: ", "Scope-risk: "]
        ),
        max_size=6,
    ),
    st.text(max_size=20),
)
def test_fuzz_never_raises(prefix: str, keys: list[str], value: str) -> None:
    message = "Subject\n\n" + prefix + "\n\n" + "\n".join(k + value.replace("\n", " ") for k in keys)
    atom = lore_atom(message)
    assert all("\n" not in c for c in atom.constraints)
