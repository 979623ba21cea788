"""The replay protocol's split (benchmarks/histories.yml) follows its written rule, and the keep/drop verdict."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_sets", ROOT / "benchmarks" / "replay_sets.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["replay_sets"] = module
    spec.loader.exec_module(module)
    return module


sets = _load()
RULE, HISTORIES = sets.listing()


def test_the_rule_written_in_the_listing_is_the_one_applied() -> None:
    assert RULE == {"hash": "sha256", "of": "owner+name", "modulus": 5, "validation_below": 2}


@pytest.mark.parametrize("history", HISTORIES, ids=lambda h: h.name)
def test_each_history_is_in_the_set_its_name_hashes_to(history: object) -> None:
    assert history.set == sets.set_of(history.name, RULE["modulus"], RULE["validation_below"])  # type: ignore[attr-defined]


def test_the_rule_is_a_hash_of_the_name() -> None:
    # Two names whose sets are known, so that a changed rule fails here as well as in the listing.
    assert sets.set_of("pallets+flask") == "validation"
    assert sets.set_of("tokio-rs+tokio") == "tuning"


def test_every_audited_history_is_listed_and_every_listed_one_audited() -> None:
    audited = {p.stem for p in (ROOT / "benchmarks" / "replay-audit").glob("*.yml")}
    assert audited == {h.name for h in HISTORIES}


def test_both_sets_hold_between_a_third_and_a_half_of_the_histories_as_validation() -> None:
    validation = sum(h.set == "validation" for h in HISTORIES)
    assert len(HISTORIES) / 3 <= validation <= len(HISTORIES) / 2


def test_languages_and_merge_styles_are_named() -> None:
    for h in HISTORIES:
        assert h.merge_style in {"squash", "merge", "rebase"}, h
        assert h.language and h.language[0].isupper(), h


def test_keep_only_when_validation_recall_holds_and_false_flags_do_not_rise() -> None:
    F = sets.Figures
    before = {"a": F(commits=1000, relands=4, seeable=4, caught=2, flags=3, audit_false=1)}
    better = {"a": F(commits=1000, relands=4, seeable=4, caught=3, flags=4, audit_false=1)}
    noisier = {"a": F(commits=1000, relands=4, seeable=4, caught=4, flags=6, audit_false=2)}
    worse = {"a": F(commits=1000, relands=4, seeable=4, caught=1, flags=1, audit_false=0)}
    assert sets.verdict(before, better, ["a"])[0] is True
    assert sets.verdict(before, before, ["a"])[0] is True
    assert sets.verdict(before, noisier, ["a"])[0] is False
    assert sets.verdict(before, worse, ["a"])[0] is False
    # A tuning history's figures never decide.
    assert sets.verdict(before | {"t": F(caught=0, relands=9)}, better, ["a", "t"])[0] is True
