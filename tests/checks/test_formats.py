"""Output formats of `comind check`: text, json, sarif, github, gitlab, markdown, render_all.

Reports are built by hand with findings of every type and level: with and without paths,
multi-line messages, `%` `:` `,` and newlines, HTML/Markdown/mention injection, non-ASCII text
and many findings. SARIF is validated against the official 2.1.0 schema (tests/data), the JSON
report against its own schema (checks/formats/report.schema.json).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import comind
from comind.checks.findings import LEVELS, RULE_IDS, TYPES, Finding, Report
from comind.checks.formats import (
    DEFAULT_FORMAT,
    FORMATS,
    FormatContext,
    github,
    gitlab,
    json_format,
    markdown,
    render,
    render_all,
    sarif,
    text,
)

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
REPORT_SCHEMA = json.loads((ROOT / "checks" / "formats" / "report.schema.json").read_text(encoding="utf-8"))
SARIF_VALIDATOR = jsonschema.validators.validator_for(SARIF_SCHEMA)(
    SARIF_SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
)
REPORT_VALIDATOR = jsonschema.Draft202012Validator(
    REPORT_SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)

BASE = "b" * 40
HEAD = "c" * 40
PLAIN = FormatContext()
LINKED = FormatContext(
    server_url="https://github.com",
    repository="acme/shop",
    head_sha=HEAD,
    summary_link="https://github.com/acme/shop/actions/runs/7",
)


def finding(n: int = 0, **kw: Any) -> Finding:
    values: dict[str, Any] = {
        "type": "dead_end",
        "level": "warning",
        "title": f"Finding {n}",
        "message": f"Explanation {n}.",
        "fingerprint": f"fp-{n:05d}",
        "record_id": f"rec-{n}",
        "path": f"src/mod{n}.py",
        "line": n + 1,
    }
    values.update(kw)
    return Finding(**values)


def full_report() -> Report:
    """Every type and level, every awkward character, evidence of every kind."""
    findings = [
        finding(
            1,
            type="dead_end",
            level="error",
            in_diff=True,
            end_line=9,
            title="Retry with <b>exponential</b> backoff @alice",
            message="Reverted in 1a2b3c4 because:\n  it doubled the load, 100% of the time: really, truly\r\nsee #12",
            evidence=(
                {
                    "type": "commit",
                    "ref": "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d",
                    "note": "the revert",
                    "path": "src/mod1.py",
                    "line": 3,
                },
                {"type": "url", "ref": "https://github.com/acme/shop/pull/12", "note": "the thread"},
            ),
            commands=("comind confirm rec-1", "comind retract rec-1 --reason '…'"),
        ),
        finding(
            2,
            type="violation",
            level="error",
            rule="no-raw-sql",
            title="No raw SQL in handlers, ever: use the repository",
            path="app/handlers/a b.py",
            message="handlers/** must not import db.raw_query\nfound: `from db import raw_query`",
        ),
        finding(
            3,
            type="violation",
            level="warning",
            rule="no-raw-sql",
            title="No raw SQL in handlers",
            path="app/handlers/c.py",
        ),
        finding(
            4,
            type="stale",
            level="warning",
            title="Cache TTL is 5 minutes — Größe ✓ 日本語",
            message="The body of cache.ttl drifted 42%.",
            path="src/cache.py",
            line=10,
        ),
        finding(
            5,
            type="orphaned",
            level="warning",
            title="PermissionChecker.check must stay pure",
            message="PermissionChecker.check is gone.",
            path="src/perm.py",
            line=None,
        ),
        finding(
            6,
            type="retry",
            level="note",
            title="Retry lance when >= 0.20",
            path=None,
            line=None,
            message="dep:pypi/lance is now 0.21.0",
            evidence=({"type": "dependency", "ref": "lance"},),
        ),
        finding(
            7,
            type="suppression",
            level="error",
            title="Suppression expired on 2024-01-01",
            message="owner: @bob\nreason: legacy",
            path=None,
            line=None,
        ),
        finding(
            8,
            type="context",
            level="note",
            title="<!-- comind:report --> [click](https://evil.example) <script>alert(1)</script>",
            message="# Heading\n/close\n- list\n1. item\n=====\n<details>@carol</details>",
            path="docs/READ,ME:1.md",
            line=2,
        ),
    ]
    return Report(
        base=BASE,
        head=HEAD,
        findings=findings,
        repo="acme/shop",
        warnings=["semgrep not installed: 2 checks not run", "shallow clone: history cut at 50 commits"],
        stats={"files_changed": 3},
    )


def clean_report() -> Report:
    return Report(base=BASE, head=HEAD)


# --- registry --------------------------------------------------------------------------------


def test_registry_lists_every_format_with_one_interface() -> None:
    assert set(FORMATS) == {"text", "json", "sarif", "github", "gitlab", "markdown"}
    assert DEFAULT_FORMAT == "text"
    for name, module in FORMATS.items():
        assert name == module.NAME
        assert module.DESCRIPTION
        assert isinstance(module.render(full_report(), PLAIN), str)


def test_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown format 'xml'.*text, json, sarif"):
        render("xml", full_report(), PLAIN)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_output_is_deterministic(name: str) -> None:
    report = full_report()
    shuffled = replace(report, findings=list(reversed(report.findings)))
    first = render(name, report, LINKED)
    assert render(name, report, LINKED) == first
    assert render(name, shuffled, LINKED) == first


# --- text ------------------------------------------------------------------------------------


def test_text_groups_by_type_in_report_order() -> None:
    out = text.render(full_report(), PLAIN)
    headings = [
        "Dead ends re-proposed (1)",
        "Constraint violations (2)",
        "Stale records (1)",
        "Orphaned records (1)",
        "Retry conditions met (1)",
        "Suppressions (1)",
        "Context (1)",
    ]
    positions = [out.index(h) for h in headings]
    assert positions == sorted(positions)
    # each finding sits under its own heading
    assert out.index("Retry with <b>exponential</b>") < out.index("Constraint violations")
    assert out.index("Constraint violations") < out.index("No raw SQL in handlers, ever") < out.index("Stale records")


def test_text_shows_level_place_message_evidence_and_commands() -> None:
    out = text.render(full_report(), PLAIN)
    assert "  error    src/mod1.py:2-9  Retry with <b>exponential</b> backoff @alice  [in this change]" in out
    assert "    it doubled the load, 100% of the time: really, truly" in out
    assert "    evidence: commit 1a2b3c4d5e6f: the revert (src/mod1.py:3)" in out
    assert "    evidence: url https://github.com/acme/shop/pull/12: the thread" in out
    assert "    run: comind confirm rec-1" in out
    assert "(repository)  Retry lance when >= 0.20" in out
    assert "Größe ✓ 日本語" in out


def test_text_ends_with_warnings_and_counts() -> None:
    lines = text.render(full_report(), PLAIN).splitlines()
    assert lines[-1] == "8 findings: 3 errors, 3 warnings, 2 notes"
    assert "warning: semgrep not installed: 2 checks not run" in lines


def test_text_clean_report_says_no_findings() -> None:
    out = text.render(clean_report(), PLAIN)
    assert out.splitlines()[-1] == "no findings"
    assert "Dead ends" not in out


def test_text_colour_only_when_asked() -> None:
    report = full_report()
    assert "\x1b" not in text.render(report, PLAIN)
    coloured = text.render(report, FormatContext(colour=True))
    assert "\x1b[1;31merror" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == text.render(report, PLAIN)


def test_text_never_passes_control_characters_to_the_terminal() -> None:
    report = Report(
        base=None,
        head=HEAD,
        findings=[
            finding(1, title="evil \x1b]0;pwned\x07 title", message="line\x1b[2J one\rover", commands=("rm\x1b[1m",))
        ],
    )
    out = text.render(report, PLAIN)
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "evil title" in out and "line oneover" in out  # the escapes go whole (the finding strips them)


# --- json ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "report", [full_report(), clean_report(), Report(base=None, head=HEAD)], ids=["full", "clean", "all"]
)
def test_json_is_report_to_json_and_matches_its_schema(report: Report) -> None:
    out = json_format.render(report, PLAIN)
    data = json.loads(out)
    assert data == report.to_json()
    REPORT_VALIDATOR.validate(data)
    assert out == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_json_schema_agrees_with_the_model() -> None:
    finding_schema = REPORT_SCHEMA["$defs"]["finding"]
    assert set(finding_schema["required"]) == set(finding().to_json())
    assert set(finding_schema["properties"]) == set(finding().to_json())
    assert finding_schema["properties"]["type"]["enum"] == list(TYPES)
    assert finding_schema["properties"]["level"]["enum"] == list(LEVELS)
    assert set(REPORT_SCHEMA["required"]) == set(clean_report().to_json())
    assert json_format.SCHEMA_PATH.name == "report.schema.json"


def test_json_schema_rejects_what_the_model_never_writes() -> None:
    data = full_report().to_json()
    data["findings"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        REPORT_VALIDATOR.validate(data)


# --- sarif -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "context", [PLAIN, LINKED, FormatContext(repo_root=Path("/work/repo"))], ids=["plain", "linked", "root"]
)
@pytest.mark.parametrize("report", [full_report(), clean_report()], ids=["full", "clean"])
def test_sarif_is_valid_2_1_0(report: Report, context: FormatContext) -> None:
    SARIF_VALIDATOR.validate(json.loads(sarif.render(report, context)))


def test_sarif_tool_rules_and_results() -> None:
    log = json.loads(sarif.render(full_report(), LINKED))
    assert log["version"] == "2.1.0" and log["$schema"] == sarif.SCHEMA_URI
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "comind" and driver["version"] == comind.__version__
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert ids[: len(TYPES)] == [RULE_IDS[t] for t in TYPES]  # built-ins first, always
    assert ids[len(TYPES) :] == ["no-raw-sql"] and len(set(ids)) == len(ids)
    for rule in rules:
        assert {
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "defaultConfiguration",
            "properties",
        } <= set(rule)
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["properties"]["precision"] in {"very-high", "high", "medium", "low"}
        assert "comind" in rule["properties"]["tags"]
    assert run["automationDetails"]["id"] == f"comind/check/{HEAD}"
    assert run["versionControlProvenance"] == [{"repositoryUri": "https://github.com/acme/shop", "revisionId": HEAD}]
    results = run["results"]
    assert len(results) == 8
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert "suppressions" not in result
        assert len(result["locations"]) == 1
    first = results[0]
    assert first["ruleId"] == "comind/dead-end" and first["level"] == "error"
    assert first["partialFingerprints"] == {"comind/v1": "fp-00001"}
    assert first["message"]["text"].startswith("Retry with <b>exponential</b> backoff @alice\n\nReverted in")
    loc = first["locations"][0]["physicalLocation"]
    assert loc == {
        "artifactLocation": {"uri": "src/mod1.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 2, "endLine": 9},
    }
    assert first["relatedLocations"][0]["physicalLocation"]["region"] == {"startLine": 3, "endLine": 3}
    assert first["properties"]["evidence"][1]["ref"] == "https://github.com/acme/shop/pull/12"
    assert first["properties"]["commands"][0] == "comind confirm rec-1"
    assert first["properties"]["inDiff"] is True and first["properties"]["recordId"] == "rec-1"


def test_sarif_pathless_findings_sit_at_the_repository_level_file() -> None:
    results = json.loads(sarif.render(full_report(), PLAIN))["runs"][0]["results"]
    pathless = [r for r in results if r["properties"]["recordId"] in ("rec-6", "rec-7")]
    assert len(pathless) == 2
    for r in pathless:
        location = r["locations"][0]
        assert location["physicalLocation"] == {"artifactLocation": {"uri": ".comind.yml", "uriBaseId": "%SRCROOT%"}}
        assert location["message"]["text"] == "repository-level finding"


def test_sarif_uris_are_percent_encoded_repository_paths() -> None:
    report = Report(base=None, head=HEAD, findings=[finding(1, path="dir with space/naïve#1?.py")])
    result = json.loads(sarif.render(report, PLAIN))["runs"][0]["results"][0]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert " " not in uri and "#" not in uri and "?" not in uri and uri.isascii()
    assert unquote(uri) == "dir with space/naïve#1?.py"


def test_sarif_respects_result_and_location_limits() -> None:
    many = [finding(i, level="note") for i in range(sarif.MAX_RESULTS + 3)]
    wide = finding(0, evidence=tuple({"type": "file", "path": f"f{i}.py", "line": i + 1} for i in range(1500)))
    run = json.loads(sarif.render(Report(base=None, head=HEAD, findings=[*many, wide]), PLAIN))["runs"][0]
    assert len(run["results"]) == sarif.MAX_RESULTS
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert "4 more findings not included" in notes[-1]["message"]["text"]
    small = json.loads(sarif.render(Report(base=None, head=HEAD, findings=[wide]), PLAIN))
    SARIF_VALIDATOR.validate(small)
    result = small["runs"][0]["results"][0]
    assert len(result["locations"]) + len(result["relatedLocations"]) == sarif.MAX_LOCATIONS


def test_sarif_run_warnings_become_tool_notifications() -> None:
    run = json.loads(sarif.render(full_report(), PLAIN))["runs"][0]
    texts = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert texts == ["semgrep not installed: 2 checks not run", "shallow clone: history cut at 50 commits"]


# --- github ----------------------------------------------------------------------------------


_UNESCAPE = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def unescape_data(value: str) -> str:
    return re.sub("%25|%0D|%0A", lambda m: _UNESCAPE[m.group()], value)


def unescape_property(value: str) -> str:
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: _UNESCAPE[m.group()], value)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    match = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
    assert match, line
    props = dict(p.split("=", 1) for p in match.group(2).split(",")) if match.group(2) else {}
    return match.group(1), {k: unescape_property(v) for k, v in props.items()}, unescape_data(match.group(3))


def test_github_escaping_matches_the_actions_toolkit() -> None:
    assert github.escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert github.escape_property("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext%3A a%2C b"
    assert github.escape_data("%0A") == "%250A"  # `%` first, so escapes are never double-read
    assert (
        github.command("error", {"file": "a,b:c.py", "line": 3, "endLine": None, "title": ""}, "x\ny")
        == "::error file=a%2Cb%3Ac.py,line=3::x%0Ay"
    )
    assert github.command("notice", {}, "plain") == "::notice::plain"


def test_github_annotations_carry_place_title_and_escaped_message() -> None:
    lines = github.render(full_report(), LINKED).splitlines()
    assert lines[:2] == [
        "::warning title=comind::semgrep not installed: 2 checks not run",
        "::warning title=comind::shallow clone: history cut at 50 commits",
    ]
    parsed = [parse_command(line) for line in lines]
    cmd, props, message = parsed[2]
    assert cmd == "error"
    assert props == {
        "file": "src/mod1.py",
        "line": "2",
        "endLine": "9",
        "title": "comind/dead-end: Retry with <b>exponential</b> backoff @alice",
    }
    assert message.startswith("Reverted in 1a2b3c4 because:\n  it doubled the load, 100% of the time: really, truly\n")
    assert "evidence: commit 1a2b3c4d5e6f: the revert (src/mod1.py:3)" in message
    assert "run: comind confirm rec-1 | comind retract rec-1 --reason '…'" in message
    by_file = {p.get("file"): (c, p) for c, p, _ in parsed}
    assert by_file["app/handlers/a b.py"][1]["title"] == "no-raw-sql: No raw SQL in handlers, ever: use the repository"
    assert by_file["docs/READ,ME:1.md"][0] == "notice"
    assert "file=docs/READ%2CME%3A1.md,line=2," in github.render(full_report(), LINKED)
    assert all(line.startswith("::") for line in lines)
    pathless = [p for c, p, _ in parsed if "file" not in p and p["title"] != "comind"]
    assert {p["title"] for p in pathless} == {
        "comind/retry-condition-met: Retry lance when >= 0.20",
        "comind/suppression: Suppression expired on 2024-01-01",
    }


def test_github_caps_put_in_diff_findings_first_and_aggregate_the_rest() -> None:
    findings = []
    for level in LEVELS:
        for i in range(25):
            n = len(findings)
            findings.append(finding(n, level=level, in_diff=(i % 5 == 0), path=f"z{n:03d}.py"))
    report = Report(base=BASE, head=HEAD, findings=findings)
    lines = github.render(report, LINKED).splitlines()
    parsed = [parse_command(line) for line in lines]
    counts = {c: sum(1 for cmd, _, _ in parsed if cmd == c) for c in ("error", "warning", "notice")}
    assert counts == {"error": 10, "warning": 10, "notice": 10}
    assert len(lines) <= github.PER_JOB_CAP
    # every in-diff finding got a slot, and each level's in-diff findings come first
    shown = [p["file"] for _, p, _ in parsed if "file" in p]
    in_diff = {f.path for f in findings if f.in_diff}
    assert in_diff <= set(shown)
    flags = [p in in_diff for p in shown]
    assert flags == sorted(flags, reverse=True)
    *_, (cmd, props, message) = parsed
    assert cmd == "notice" and props == {"title": "comind: more findings"}
    assert message.startswith("46 more findings (15 errors, 15 warnings, 16 notes) not annotated")
    assert message.endswith("the job summary: https://github.com/acme/shop/actions/runs/7")


def test_github_no_aggregate_notice_when_everything_fits() -> None:
    report = Report(base=BASE, head=HEAD, findings=[finding(i, level="note") for i in range(10)])
    lines = github.render(report, PLAIN).splitlines()
    assert len(lines) == 10 and all(line.startswith("::notice file=") for line in lines)


def test_github_extra_run_warnings_are_counted_not_dropped() -> None:
    report = Report(base=BASE, head=HEAD, warnings=[f"warning {i}" for i in range(5)])
    lines = github.render(report, PLAIN).splitlines()
    assert len(lines) == 4
    assert parse_command(lines[-1])[2].startswith("2 more run warnings not annotated")


def test_github_summary_is_appended_to_the_step_summary(tmp_path: Path) -> None:
    summary_file = tmp_path / "step_summary.md"
    summary_file.write_text("## Earlier step\n\nkept\n", encoding="utf-8")
    context = replace(LINKED, job_summary=summary_file)
    github.write_summary(full_report(), context)
    first = summary_file.read_text(encoding="utf-8")
    assert first.startswith("## Earlier step\n\nkept\n\n## comind: 1 dead end re-proposed")
    assert "| Dead ends re-proposed | 1 | 0 | 0 |" in first
    assert markdown.MARKER not in first
    github.write_summary(clean_report(), context)
    second = summary_file.read_text(encoding="utf-8")
    assert second.startswith(first) and second.endswith(
        "comind: nothing re-proposed, no constraint broken, no record made stale\n"
    )


def test_github_summary_is_skipped_without_a_summary_file(tmp_path: Path) -> None:
    github.write_summary(full_report(), replace(LINKED, job_summary=None))
    assert list(tmp_path.iterdir()) == []


def test_github_summary_stays_under_one_mebibyte(tmp_path: Path) -> None:
    summary_file = tmp_path / "step_summary.md"
    summary_file.write_text("x" * 900_000, encoding="utf-8")
    report = Report(base=BASE, head=HEAD, findings=[finding(i, message="long explanation " * 100) for i in range(500)])
    github.write_summary(report, replace(LINKED, job_summary=summary_file))
    size = summary_file.stat().st_size
    assert 900_000 < size < github.SUMMARY_LIMIT
    assert "more findings not shown here" in summary_file.read_text(encoding="utf-8")
    summary_file.write_text("x" * (github.SUMMARY_LIMIT - 100), encoding="utf-8")
    github.write_summary(report, replace(LINKED, job_summary=summary_file))
    assert summary_file.stat().st_size == github.SUMMARY_LIMIT - 100  # no room: nothing appended


# --- gitlab ----------------------------------------------------------------------------------


def test_gitlab_code_quality_fields_and_severities() -> None:
    issues = json.loads(gitlab.render(full_report(), PLAIN))
    assert isinstance(issues, list) and len(issues) == 8
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert set(issue["location"]) == {"path", "lines"} and set(issue["location"]["lines"]) == {"begin"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert "\n" not in issue["description"]
    by_record = {i["fingerprint"]: i for i in issues}
    # by level alone: a broken must constraint and a re-proposed dead end both fail the check
    assert by_record["fp-00002"]["severity"] == by_record["fp-00001"]["severity"] == "major"
    assert by_record["fp-00003"]["severity"] == "minor"
    assert by_record["fp-00006"]["severity"] == "info"
    assert by_record["fp-00002"]["check_name"] == "no-raw-sql"
    assert by_record["fp-00001"]["check_name"] == "comind/dead-end"
    assert by_record["fp-00007"]["location"] == {"path": ".comind.yml", "lines": {"begin": 1}}
    assert by_record["fp-00005"]["location"] == {"path": "src/perm.py", "lines": {"begin": 1}}
    assert (
        by_record["fp-00004"]["description"]
        == "Cache TTL is 5 minutes — Größe ✓ 日本語: The body of cache.ttl drifted 42%."
    )


def test_gitlab_fingerprints_are_unique_per_report() -> None:
    findings = [finding(i, fingerprint="same", path=f"p{i}.py") for i in range(4)]
    findings.append(finding(9, fingerprint="same-2"))
    issues = json.loads(gitlab.render(Report(base=None, head=HEAD, findings=findings), PLAIN))
    prints = [i["fingerprint"] for i in issues]
    assert len(set(prints)) == len(prints) == 5
    assert set(prints) == {"same", "same-2", "same-3", "same-4", "same-5"}


# --- markdown --------------------------------------------------------------------------------


def test_markdown_all_clear_is_one_line_after_the_marker() -> None:
    assert markdown.render(clean_report(), LINKED) == (
        "<!-- comind:report -->\n\ncomind: nothing re-proposed, no constraint broken, no record made stale\n"
    )


def test_markdown_headline_sections_and_links() -> None:
    body = markdown.render(full_report(), LINKED)
    assert body.startswith(
        "<!-- comind:report -->\n\n### comind: 1 dead end re-proposed, 2 constraints broken, "
        "1 record now stale, 1 record orphaned, 1 retry condition met, 1 suppression to review, "
        "1 related record\n"
    )
    for heading in ("#### Dead ends re-proposed (1)", "#### Constraint violations (2)", "#### Context (1)"):
        assert f"\n{heading}\n" in body
    assert "[`src/mod1.py:2-9`](https://github.com/acme/shop/blob/" + HEAD + "/src/mod1.py#L2-L9)" in body
    assert "[`1a2b3c4d5e6f`](https://github.com/acme/shop/commit/1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d)" in body
    assert "(https://github.com/acme/shop/blob/" + HEAD + "/app/handlers/a%20b.py#L3)" in body
    assert "<details><summary>Evidence (2) and commands</summary>" in body
    assert "`comind retract rec-1 --reason '…'`" in body
    assert "- ⚠️ semgrep not installed: 2 checks not run" in body
    assert body.count("</details>") == body.count("<details>")


def test_markdown_record_text_cannot_inject_html_markdown_or_mentions() -> None:
    body = markdown.render(full_report(), LINKED)
    assert body.count("<!--") == 1 and body.startswith(markdown.MARKER)
    assert "<script" not in body and "<b>" not in body
    assert "&lt;script&gt;" in body and "&lt;\\!\\-\\- comind:report \\-\\-&gt;" in body
    assert "](https://evil.example)" not in body and "\\[click\\]\\(https://evil.example\\)" in body
    assert re.search(r"@(alice|bob|carol)", body) is None  # every mention broken by a zero-width space
    assert "@\u200balice" in body and "@\u200bcarol" in body
    tags = re.findall(r"</?([a-z]+)", body)
    assert set(tags) <= {"details", "summary"}
    for line in body.splitlines():  # record text never starts a line: no quick action, no heading
        assert not line.startswith(("/", "# ", "- list", "1. item", "=====")), line


def test_markdown_stays_under_the_byte_limit_and_points_to_the_summary() -> None:
    findings = [
        finding(
            i,
            title=f"Größe {i} ✓ " + "日本語" * 20,
            message="explanation ✓ " * 40,
            evidence=tuple({"type": "commit", "ref": f"{i:040x}", "note": "why"} for _ in range(3)),
        )
        for i in range(300)
    ]
    report = Report(base=BASE, head=HEAD, findings=findings)
    limit = 20_000
    body = markdown.render(report, replace(LINKED, max_comment_bytes=limit))
    assert len(body.encode("utf-8")) <= limit
    assert body.startswith(markdown.MARKER)
    shown = len(re.findall(r"^🟠 \*\*warning\*\*", body, flags=re.MULTILINE))
    assert 0 < shown < 300
    assert body.rstrip().endswith(
        f"**… {300 - shown} more findings not shown here** (size limit): the full report is in the "
        "[job summary](https://github.com/acme/shop/actions/runs/7)."
    )
    assert body.count("<details>") == body.count("</details>") == shown  # whole findings only
    assert "### comind: 300 dead ends re-proposed" in body  # the headline counts every finding


def test_markdown_default_limit_holds_for_a_huge_report() -> None:
    findings = [
        finding(
            i, message="x" * 5000, evidence=tuple({"type": "url", "ref": "https://e.x/" + "y" * 300} for _ in range(50))
        )
        for i in range(200)
    ]
    body = markdown.render(Report(base=BASE, head=HEAD, findings=findings), PLAIN)
    assert len(body.encode("utf-8")) <= PLAIN.max_comment_bytes
    assert body.rstrip().endswith("the full report is in the job summary.")
    assert "x … _(cut)_\n" in body and "… and 30 more evidence items" in body


def test_markdown_code_spans_hold_any_backticks() -> None:
    assert markdown.code("a`b") == "``a`b``"
    assert markdown.code("`x`") == "`` `x` ``"
    assert markdown.code("") == "` `"
    assert markdown.code("<b>@x") == "&lt;b&gt;@\u200bx"


def test_markdown_shows_quoted_code_as_code_spans_and_nothing_else_raw() -> None:
    """A title's `# fmt: skip` was shown as \\`\\# fmt: skip\\`: escaped, it read as literal backticks.
    Quoted code is a code span now; quoted code holding `<` or `@` stays escaped text, backticks too."""
    finding = Finding(
        type="dead_end",
        level="error",
        title="Re-proposes a dead end: Fix `# fmt: skip` on decorators",
        message="This re-adds `if c.args == nil && !isTesting() {` and `</details><b>@alice</b>`.",
        fingerprint="fp-code",
        record_id="r-code",
    )
    body = markdown.render(Report(base=None, head="h" * 40, findings=[finding]), PLAIN)
    assert "Fix `# fmt: skip` on decorators" in body
    assert "`if c.args == nil && !isTesting() {`" in body
    assert "\\`&lt;/details&gt;&lt;b&gt;@\u200balice&lt;/b&gt;\\`" in body
    assert set(re.findall(r"</?([A-Za-z]+)", body)) <= {"details", "summary"}


# --- render_all ------------------------------------------------------------------------------


def test_render_all_writes_files_atomically_and_returns_printed_text(tmp_path: Path) -> None:
    report = full_report()
    sarif_path = tmp_path / "out" / "comind.sarif"
    gitlab_path = tmp_path / "gl.json"
    gitlab_path.write_text("old", encoding="utf-8")
    printed = render_all(report, {"text": None, "sarif": sarif_path, "gitlab": gitlab_path}, LINKED)
    assert printed == {"text": text.render(report, LINKED)}
    assert sarif_path.read_text(encoding="utf-8") == sarif.render(report, LINKED)
    assert gitlab_path.read_text(encoding="utf-8") == gitlab.render(report, LINKED)
    leftovers = [p.name for p in [*tmp_path.iterdir(), *(tmp_path / "out").iterdir()] if p.name.endswith(".tmp")]
    assert leftovers == []
    assert oct(sarif_path.stat().st_mode & 0o777) == oct(0o644)


def test_render_all_checks_every_name_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "out.sarif"
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        render_all(full_report(), {"sarif": target, "pdf": tmp_path / "x.pdf"}, PLAIN)
    assert not target.exists()


# --- context ---------------------------------------------------------------------------------


def test_context_from_github_and_gitlab_environments(tmp_path: Path) -> None:
    gh = FormatContext.from_env(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "acme/shop",
            "GITHUB_SHA": HEAD,
            "GITHUB_RUN_ID": "7",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md"),
        }
    )
    assert gh.job_summary == tmp_path / "s.md"
    assert gh.summary_link == "https://github.com/acme/shop/actions/runs/7"
    assert gh.file_url("a b.py", 3, 5) == f"https://github.com/acme/shop/blob/{HEAD}/a%20b.py#L3-L5"
    gl = FormatContext.from_env(
        {
            "GITLAB_CI": "true",
            "CI_SERVER_URL": "https://gitlab.example",
            "CI_PROJECT_PATH": "grp/shop",
            "CI_COMMIT_SHA": HEAD,
            "CI_JOB_URL": "https://gitlab.example/grp/shop/-/jobs/9",
        }
    )
    assert gl.forge == "gitlab" and gl.job_summary is None
    assert gl.file_url("a.py", 3, 5) == f"https://gitlab.example/grp/shop/-/blob/{HEAD}/a.py#L3-5"
    assert gl.commit_url("abcdef1") == "https://gitlab.example/grp/shop/-/commit/abcdef1"
    bare = FormatContext.from_env({})
    assert bare.file_url("a.py", 1) is None and bare.commit_url("abcdef1") is None


# --- properties ------------------------------------------------------------------------------

any_text = st.text(st.characters(codec="utf-8"), max_size=80)
awkward = st.one_of(
    any_text,
    st.sampled_from(
        [
            "%0A",
            "::error::x",
            "\r\n::warning::y",
            "a,b:c",
            "<!-- x -->",
            "@everyone",
            "`",
            "\u2028",
            "\x00",
            "]]>",
            "&amp;",
        ]
    ),
)


@st.composite
def findings_strategy(draw: st.DrawFn) -> Finding:
    title = draw(awkward)
    return Finding(
        type=draw(st.sampled_from(TYPES)),
        level=draw(st.sampled_from(LEVELS)),
        title=title,
        message=draw(st.lists(awkward, max_size=4).map("\n".join)),
        fingerprint=draw(awkward) or "fp",
        record_id=draw(st.none() | awkward),
        rule=draw(st.sampled_from(["", "custom/rule", "x y"])),
        path=draw(st.none() | awkward.filter(bool)),
        line=draw(st.none() | st.integers(1, 10**6)),
        end_line=draw(st.none() | st.integers(1, 10**6)),
        in_diff=draw(st.booleans()),
        evidence=tuple(
            draw(
                st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["commit", "url", "thread"]), "ref": awkward},
                        optional={"note": awkward, "path": awkward.filter(bool), "line": st.integers(1, 10**6)},
                    ),
                    max_size=3,
                )
            )
        ),
        commands=tuple(draw(st.lists(awkward, max_size=2))),
    )


reports = st.builds(
    lambda fs, ws: Report(base=BASE, head=HEAD, findings=fs, warnings=ws),
    st.lists(findings_strategy(), max_size=6),
    st.lists(awkward, max_size=2),
)
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


RELATIVE_URI = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=@/]|%[0-9A-F]{2})*")


@PROPS
@given(reports)
def test_property_sarif_always_valid(report: Report) -> None:
    log = json.loads(sarif.render(report, LINKED))
    SARIF_VALIDATOR.validate(log)
    for result in log["runs"][0]["results"]:
        for location in result["locations"] + result.get("relatedLocations", []):
            uri = location["physicalLocation"]["artifactLocation"]["uri"]
            assert RELATIVE_URI.fullmatch(uri), uri  # jsonschema has no uri-reference checker installed


@PROPS
@given(reports)
def test_property_github_one_command_per_line(report: Report) -> None:
    out = github.render(report, LINKED)
    assert out == "" or out.endswith("\n")
    lines = out.splitlines() if out else []
    assert len(lines) <= 30
    for line in out.split("\n")[:-1]:
        assert "\r" not in line
        cmd, props, _ = parse_command(line)
        assert cmd in {"error", "warning", "notice"}
        assert set(props) <= {"file", "line", "endLine", "title"}
    for f in report.findings:  # escaping loses nothing: each annotation reads back as written
        line = github.annotation(f)
        assert "\n" not in line and "\r" not in line
        _, props, message = parse_command(line)
        assert props.get("file") == f.path if f.path else "file" not in props
        assert props["title"].startswith(f.rule_id)
        assert message.startswith(f.message.strip() or " ".join(f.title.split()))


@PROPS
@given(reports, st.integers(min_value=markdown.MIN_BYTES, max_value=6_000))
def test_property_markdown_marker_and_size(report: Report, limit: int) -> None:
    body = markdown.render(report, replace(LINKED, max_comment_bytes=limit))
    assert body.startswith(markdown.MARKER + "\n")
    assert body.count("<!--") == 1
    assert len(body.encode("utf-8")) <= limit
    assert set(re.findall(r"</?([A-Za-z]+)", body)) <= {"details", "summary"}
    assert re.search(r"@(?=[\w-])", body) is None


@PROPS
@given(reports)
def test_property_gitlab_and_json_hold(report: Report) -> None:
    issues = json.loads(gitlab.render(report, PLAIN))
    prints = [i["fingerprint"] for i in issues]
    assert len(set(prints)) == len(prints) == len(report.findings)
    assert all(i["location"]["path"] for i in issues)
    assert json.loads(json_format.render(report, PLAIN)) == report.to_json()


def test_sarif_builtin_rule_levels_agree_with_their_results() -> None:
    rules = {r["id"]: r for r in sarif.document(full_report(), PLAIN)["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["comind/dead-end"]["defaultConfiguration"]["level"] == "error"  # dead ends are errors
    assert rules["comind/check-not-run"]["defaultConfiguration"]["level"] == "error"


def test_a_check_that_could_not_run_fails_the_sarif_run_with_the_reason() -> None:
    not_run = Finding(
        type="not_run",
        level="error",
        title="Not checked: no eval",
        message="The semgrep check of constraint 1234abcd (must) did not run: semgrep is not installed.",
        fingerprint="fp-not-run",
        record_id="r-1",
    )
    doc = sarif.document(Report(base=None, head="h" * 40, findings=[not_run]), PLAIN)
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "semgrep is not installed" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert doc["runs"][0]["results"][0]["ruleId"] == "comind/check-not-run"
    assert sarif.document(full_report(), PLAIN)["runs"][0]["invocations"][0]["executionSuccessful"] is True
    [issue] = json.loads(gitlab.render(Report(base=None, head="h" * 40, findings=[not_run]), PLAIN))
    assert issue["check_name"] == "comind/check-not-run" and issue["severity"] == "major"
    headline = markdown.render(Report(base=None, head="h" * 40, findings=[not_run]), PLAIN).split("\n\n")[1]
    assert "no constraint broken" not in headline and "1 constraint not checked" in headline


def test_findings_show_their_lines_numbered_in_text_markdown_and_sarif() -> None:
    from comind.checks.findings import snippet_of

    code = "".join(f"line {n}\n" for n in range(1, 21)).replace("line 10", "eval(`x` @team <b>)")
    snippet = snippet_of(code, 10, 11)
    assert [n for n, _ in snippet] == [8, 9, 10, 11, 12, 13]  # two lines of context either side
    f = finding(3, path="src/app.py", line=10, end_line=11, snippet=snippet)
    report = Report(base=BASE, head=HEAD, findings=[f])
    shown = text.render(report, PLAIN)
    assert "    > 10 | eval(`x` @team <b>)\n    > 11 | line 11\n      12 | line 12" in shown
    assert "       8 | line 8\n       9 | line 9\n" in shown
    body = markdown.render(report, PLAIN)
    assert "```text\n   8 | line 8\n" in body and "\n> 10 | eval(`x` @team <b>)\n" in body
    sarif_doc = sarif.document(report, PLAIN)
    SARIF_VALIDATOR.validate(sarif_doc)
    physical = sarif_doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert physical["region"]["snippet"]["text"] == "eval(`x` @team <b>)\nline 11\n"
    assert physical["contextRegion"]["startLine"] == 8 and physical["contextRegion"]["endLine"] == 13
    REPORT_VALIDATOR.validate(report.to_json())
    assert snippet_of(code, 40, None) == ()
