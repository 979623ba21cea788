"""The rulebook: its options as settings, its printed forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from comind import config as configuration
from comind.rulebook import BY_ID, RULES, book, listing, markdown, parse_overrides, rules_of

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def test_docs_table_is_generated_from_the_registry() -> None:
    assert DOCS.read_text(encoding="utf-8") == markdown(), "regenerate docs/rules.md from comind.rulebook.markdown()"


def test_every_rule_has_an_id_a_name_and_a_summary() -> None:
    assert len({r.id for r in RULES}) == len(RULES) and len({r.name for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.summary and rule.id in listing()


def test_options_from_the_file_reach_the_rules(tmp_path: Path) -> None:
    (tmp_path / ".comind.yml").write_text("dead_ends: {D5.lines: 50, D8: {share: 0.3}}\n")
    rules = rules_of(configuration.load(tmp_path, env={}))
    assert rules.get(BY_ID["D5"]).count("lines") == 50  # D5 large-piece
    assert rules.get(BY_ID["D8"]).value("share") == 0.3  # D8 small-match


def test_the_legacy_settings_are_d1(tmp_path: Path) -> None:
    rules = rules_of(configuration.load(tmp_path, flags={"dead_end_threshold": "0.5"}, env={}))
    assert (rules.threshold, rules.min_lines) == (0.5, 3)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("dead_ends: {D99.lines: 1}\n", "unknown rule 'D99'"),
        ("dead_ends: {D5.line: 1}\n", "has no option 'line'"),
        ("dead_ends: {D5.lines: -2}\n", "D5.lines: must be a whole number"),
        ("dead_ends: {D1.share: 3}\n", "D1.share: must be a number between 0 and 1"),
        ("dead_ends: [1]\n", "must be a mapping"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / ".comind.yml").write_text(text)
    with pytest.raises(configuration.ConfigError) as err:
        configuration.load(tmp_path, env={})
    assert says in str(err.value) and "dead_ends" in str(err.value) and "\n" not in str(err.value)


def test_the_environment_form() -> None:
    assert parse_overrides("D5.lines=50, D1.share=0.5") == {"D5.lines": 50, "D1.share": 0.5}
    assert book({"D5.lines": 50}) is book({"D5.lines": 50})


def test_d15_judges_the_share_held_again_and_has_an_off_switch() -> None:
    from comind.rulebook import BackAlready

    assert book().get(BackAlready).judge(0.95)
    assert not book().get(BackAlready).judge(0.85)
    assert not book().get(BackAlready).judge(None)  # too few lines to tell
    assert not book({"D15.share": 0}).get(BackAlready).judge(1.0)


@pytest.mark.parametrize(
    "line",
    [
        '"version": "1.2' + "a" * 40 + '!",',  # fullmatched, a run of letters split every way: 2^n
        "version: 1" + " " * 20_000 + "x",  # blanks tried again from each of their characters
        "public const VERSION = '1.2.3" + " " * 20_000 + "';",
    ],
)
def test_r2_judges_a_hostile_line(line: str) -> None:
    # (no clock in tests: before the atomic group the first line did not return in 120 s)
    from comind.rulebook import Release

    assert Release().judge([("package.json", line)]) is False


@pytest.mark.parametrize(
    ("line", "released"),
    [
        ('"version": "1.2.3-rc.1+build.5",', True),
        ("public const VERSION = '1.2.3' ;", True),
        ('"version": "1.2.3";;', False),
        ("RELEASE_DATE = '@release_date@',", False),  # a stamp alone: no version set
    ],
)
def test_r2_reads_a_setting_to_its_end(line: str, released: bool) -> None:
    from comind.rulebook import Release

    assert Release().judge([("package.json", line)]) is released
