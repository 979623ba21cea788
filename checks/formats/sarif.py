"""``sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run, tool ``comind``. Rules: the seven built-in ones (one per finding type, always listed so
rule indexes and ids stay stable across runs) and, after them in id order, every other rule id a
finding carries (a constraint's own check id). Each finding is one result with ``ruleId``,
``ruleIndex``, ``level`` (note/warning/error as is), ``message.text`` (title, blank line,
message), ``partialFingerprints["comind/v1"]`` (the finding's line-independent fingerprint) and
one location relative to ``%SRCROOT%``.

Decisions:
- A finding without a path is reported at the repository-level file ``.comind.yml`` (no region):
  code scanning needs a location on every result, and a fixed path keeps alerts from churning.
  Its location carries the message "repository-level finding".
- Evidence that names a path becomes a ``relatedLocations`` entry; all evidence (commits, URLs,
  notes) is kept in ``properties.evidence`` with the record id, type, in-diff flag and commands.
- No ``suppressions`` array: the checker never reports a suppressed violation, and an expired or
  unused suppression is a finding of its own (rule ``comind/suppression``).
- Limits: at most 25,000 results per run (the rest are counted in a tool notification) and 1,000
  locations per result (locations plus related locations).
- A constraint whose check could not run is a result (rule ``comind/check-not-run``) and makes
  ``invocations[0].executionSuccessful`` false, its reason a tool execution notification.
- ``automationDetails.id`` is ``<category>/<head>``: code scanning's category is ``comind/check`` unless
  COMIND_SARIF_CATEGORY (the action's ``category`` input) names another; upload-sarif ignores its own
  ``category`` input when the file has an id, so the action passes its input here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import comind
from comind.checks.findings import RULE_IDS, TYPES, Finding, Report
from comind.project import docs_url

from ._base import REPO_LEVEL_PATH, FormatContext, evidence_line, uri_path


def semantic_version(version: str) -> str:
    """A PEP 440 version as SemVer 2.0, which SARIF's semanticVersion is: 0.1.dev3+g1a2b -> 0.1.0-dev3+g1a2b."""
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        return "0.0.0+" + re.sub(r"[^0-9A-Za-z.-]", "-", version)
    core = ".".join(str(n) for n in (*parsed.release, 0, 0)[:3])
    pre = ".".join(
        p
        for p in (
            f"{parsed.pre[0]}{parsed.pre[1]}" if parsed.pre else "",
            f"post{parsed.post}" if parsed.post is not None else "",
            f"dev{parsed.dev}" if parsed.dev is not None else "",
        )
        if p
    )
    return core + (f"-{pre}" if pre else "") + (f"+{parsed.local}" if parsed.local else "")


NAME = "sarif"
DESCRIPTION = "SARIF 2.1.0 for code scanning"

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "comind/v1"
MAX_RESULTS = 25_000
MAX_LOCATIONS = 1_000

# Built-in rules, one per finding type: name, short and full description, help, default level,
# precision (how often a result of this rule is right) and tags.
_BUILTIN: dict[str, dict[str, Any]] = {
    "dead_end": {
        "name": "DeadEndReproposed",
        "level": "error",
        "precision": "medium",
        "short": "The change re-proposes an approach that was tried and reverted.",
        "full": "The change re-adds enough of what a reverted change added (the same lines, symbols or "
        "dependency changes) that it looks like the same attempt again. The finding quotes the "
        "attempt record, the revert and its reason.",
        "help": "Read the attempt record and the revert it cites. If the reason no longer holds, say so: "
        "retract or supersede the attempt record, or record why this time is different; "
        "otherwise take another approach.",
    },
    "violation": {
        "name": "ConstraintViolation",
        "level": "error",
        "precision": "very-high",
        "short": "The change breaks a constraint's compiled check.",
        "full": "A constraint record carries a compiled check (import graph, dependency range, ast-grep or "
        "semgrep rule, or a named test) and the change introduces a violation of it.",
        "help": "Change the code so the check passes, or, if the constraint no longer applies, retract or "
        "supersede the constraint record; a justified exception is a suppression record with a "
        "reason, an owner and an expiry.",
    },
    "not_run": {
        "name": "CheckNotRun",
        "level": "error",
        "precision": "very-high",
        "short": "A constraint's compiled check could not run, so the constraint was not checked.",
        "full": "The check of a constraint did not run (its tool is not installed, it failed or it timed "
        "out). A must constraint that was not checked is an error, a should constraint a warning: an "
        "unchecked constraint is not a passing one.",
        "help": "Make the check runnable (install the tool, e.g. comind[semgrep], or raise the timeout) "
        "and run comind check again; the message says why it did not run.",
    },
    "stale": {
        "name": "StaleRecord",
        "level": "warning",
        "precision": "high",
        "short": "The change makes a record stale.",
        "full": "The code a record is anchored to changed (its body drifted past the threshold, or an "
        "evidence, context or dependency anchor changed), so the record may no longer be true.",
        "help": "Check that the record still holds and confirm it, or update, supersede or retract it.",
    },
    "orphaned": {
        "name": "OrphanedRecord",
        "level": "warning",
        "precision": "high",
        "short": "The change removes the symbol a record is about.",
        "full": "The subject symbol of a record is gone and could not be followed through a rename or move.",
        "help": "Re-anchor the record to where the code went, or retract it if it no longer applies.",
    },
    "retry": {
        "name": "RetryConditionMet",
        "level": "note",
        "precision": "high",
        "short": "A failed attempt's retry condition is now met.",
        "full": "An attempt record said when to try again (for example a dependency version range) and "
        "that condition now holds.",
        "help": "The approach the attempt describes may work now; read the record before trying it again.",
    },
    "reland": {
        "name": "DeadEndRelanded",
        "level": "note",
        "precision": "very-high",
        "short": "The change relands a reverted change, and says so.",
        "full": "A commit of the change re-applies a change that was reverted (a revert of the revert, or "
        "a reland naming it), which retires the attempt record. The finding quotes why it was "
        "reverted.",
        "help": "Check that the change fixes what the revert's reason names before it lands again.",
    },
    "suppression": {
        "name": "SuppressionToReview",
        "level": "warning",
        "precision": "very-high",
        "short": "A suppression is expired, unused or incomplete.",
        "full": "Suppressions are records with a rule, a reason, an owner and an expiry; this one has "
        "expired, no longer matches any violation, or lacks a required field.",
        "help": "Renew the suppression with a new expiry and reason, or remove it.",
    },
    "context": {
        "name": "RelatedRecord",
        "level": "note",
        "precision": "medium",
        "short": "A record relevant to the changed code.",
        "full": "A decision, gotcha or other record is anchored to code this change touches.",
        "help": "Read the record: it explains a decision or a pitfall around this code.",
    },
}


def _rule_name(rule_id: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", rule_id)
    return "".join(w[:1].upper() + w[1:] for w in words) or "Rule"


def _builtin_rule(kind: str) -> dict[str, Any]:
    spec = _BUILTIN[kind]
    return {
        "id": RULE_IDS[kind],
        "name": spec["name"],
        "shortDescription": {"text": spec["short"]},
        "fullDescription": {"text": spec["full"]},
        "help": {"text": spec["help"], "markdown": spec["help"]},
        "defaultConfiguration": {"level": spec["level"]},
        "properties": {"tags": ["comind", kind.replace("_", "-")], "precision": spec["precision"]},
    }


def _custom_rule(rule_id: str, first: Finding) -> dict[str, Any]:
    title = " ".join(first.title.split()) or rule_id
    spec = _BUILTIN.get(first.type, _BUILTIN["violation"])
    return {
        "id": rule_id,
        "name": _rule_name(rule_id),
        "shortDescription": {"text": title},
        "fullDescription": {"text": f"{spec['short']} {title}"},
        "help": {"text": spec["help"], "markdown": spec["help"]},
        "defaultConfiguration": {"level": first.level},
        "properties": {"tags": ["comind", first.type.replace("_", "-")], "precision": spec["precision"]},
    }


def _rules(findings: list[Finding]) -> list[dict[str, Any]]:
    rules = [_builtin_rule(kind) for kind in TYPES]
    known = {r["id"] for r in rules}
    custom: dict[str, Finding] = {}
    for f in findings:  # sorted: the first finding of a rule is its most severe
        if f.rule_id not in known:
            custom.setdefault(f.rule_id, f)
    rules += [_custom_rule(rule_id, custom[rule_id]) for rule_id in sorted(custom)]
    return rules


def _physical(path: str, line: int | None, end_line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri_path(path), "uriBaseId": "%SRCROOT%"}}
    if line and line > 0:
        physical["region"] = {"startLine": line, "endLine": end_line if end_line and end_line >= line else line}
    return physical


def _message(f: Finding) -> str:
    title = " ".join(f.title.split())
    text = f"{title}\n\n{f.message}" if f.message.strip() and f.message.strip() != title else title
    return text or f.rule_id


def _result(f: Finding, rule_index: int) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": _physical(f.path or REPO_LEVEL_PATH, f.line, f.end_line)}
    if f.snippet and f.line and "region" in location["physicalLocation"]:
        region = location["physicalLocation"]["region"]
        own = [t for n, t in f.snippet if region["startLine"] <= n <= region["endLine"]]
        if own:
            region["snippet"] = {"text": "\n".join(own) + "\n"}
        location["physicalLocation"]["contextRegion"] = {
            "startLine": f.snippet[0][0],
            "endLine": f.snippet[-1][0],
            "snippet": {"text": "\n".join(t for _, t in f.snippet) + "\n"},
        }
    if not f.path:
        location["message"] = {"text": "repository-level finding"}
    result: dict[str, Any] = {
        "ruleId": f.rule_id,
        "ruleIndex": rule_index,
        "level": f.level,
        "message": {"text": _message(f)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
    }
    related: list[dict[str, Any]] = []
    for item in f.evidence:
        if len(related) >= MAX_LOCATIONS - 1:
            break
        path, line = item.get("path"), item.get("line")
        if not path or not isinstance(path, str):
            continue
        related.append(
            {
                "id": len(related) + 1,
                "physicalLocation": _physical(path, line if isinstance(line, int) else None, None),
                "message": {"text": evidence_line(item)},
            }
        )
    if related:
        result["relatedLocations"] = related
    properties: dict[str, Any] = {"type": f.type, "inDiff": f.in_diff}
    if f.record_id:
        properties["recordId"] = f.record_id
    if f.evidence:
        properties["evidence"] = [dict(e) for e in f.evidence]
    if f.commands:
        properties["commands"] = list(f.commands)
    result["properties"] = properties
    return result


def document(report: Report, context: FormatContext) -> dict[str, Any]:
    findings = report.sorted()
    rules = _rules(findings)
    index = {r["id"]: i for i, r in enumerate(rules)}
    kept = findings[:MAX_RESULTS]
    # A check that could not run makes the run unsuccessful, whatever else it found (the reason
    # is a notification as well as a result).
    not_run = [f for f in findings if f.type == "not_run"]
    notifications: list[dict[str, Any]] = [
        {"level": "error", "message": {"text": f.message}, "associatedRule": {"id": f.rule_id}} for f in not_run
    ]
    notifications += [{"level": "warning", "message": {"text": w}} for w in report.warnings]
    if len(findings) > len(kept):
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{len(findings) - len(kept)} more findings not included: SARIF consumers accept at most "
                    f"{MAX_RESULTS} results per run; see the json output for all of them."
                },
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "comind",
                "version": comind.__version__,
                "semanticVersion": semantic_version(comind.__version__),
                "informationUri": docs_url("checks.md"),
                "rules": rules,
            }
        },
        "automationDetails": {"id": f"{context.sarif_category}/{report.head}"},
        "invocations": [{"executionSuccessful": not not_run, "toolExecutionNotifications": notifications}],
        "results": [_result(f, index[f.rule_id]) for f in kept],
        "columnKind": "unicodeCodePoints",
        "properties": {"base": report.base, "head": report.head},
    }
    if context.repo_root is not None:
        root = context.repo_root.resolve().as_uri().rstrip("/") + "/"
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": root}}
    if context.server_url and context.repository:
        provenance: dict[str, Any] = {
            "repositoryUri": f"{context.server_url.rstrip('/')}/{context.repository.strip('/')}",
            "revisionId": report.head,
        }
        run["versionControlProvenance"] = [provenance]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report, context: FormatContext) -> str:
    return json.dumps(document(report, context), indent=2, ensure_ascii=False, default=str) + "\n"
