"""Constraint violations for `comind check`: compile every live constraint's check, evaluate them
diff-aware (`comind.checks.evaluate`), and turn what the change introduces into findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from comind.checks.findings import Finding, Report
from comind.query import current_time
from comind.records import short_id

if TYPE_CHECKING:
    from comind.checks.run import CheckRun

LIVE = ("active", "dormant", "stale", "orphaned", "unverifiable")  # not retracted, superseded or quarantined


def report_violations(run: CheckRun, report: Report) -> None:
    candidates = [r for r in run.records if (r.kind == "constraint" and "check" in r.fields) or r.kind == "suppression"]
    if not candidates:
        return
    # imported on use: a ledger without a compiled check (preflight's start-up) loads no check machinery
    from comind.checks.context import CheckContext
    from comind.checks.evaluate import evaluate
    from comind.checks.types import compile_checks

    derived = run.statuses(candidates)
    live = [r for r in candidates if derived[r.id].state in LIVE]
    checks = compile_checks(r for r in live if r.kind == "constraint")  # CheckError (exit 2) names the record
    suppressions = [r for r in live if r.kind == "suppression"]
    if not checks and not suppressions:
        return

    ctx = CheckContext(run.ws.index, work_tree=run.ws.root)
    outcome = evaluate(
        checks, ctx, base=run.base, head=run.head, suppressions=suppressions, today=current_time().date()
    )
    records = {r.id: r for r in live}
    for v in outcome.violations:
        record = records.get(v.record_id)
        severity = record.fields.get("severity") if record else "must"
        rule = record.fields.get("rule", "") if record else ""
        title = record.title if record else v.rule
        message = v.message
        if rule and rule not in message:
            message = f"{message} — the constraint: {rule}"
        report.findings.append(
            Finding(
                type="violation",
                level="error" if severity == "must" else "warning",
                title=f"Breaks a constraint: {title}",
                message=message,
                fingerprint=v.fingerprint,
                record_id=v.record_id or None,
                rule=v.rule,
                path=v.path,
                line=v.line,
                end_line=v.end_line,
                in_diff=run.in_diff(v.path, v.line),
                evidence=tuple(record.shown_evidence) if record else (),
                commands=(f"comind show {short_id(v.record_id)}",) if v.record_id else (),
            )
        )
    report.findings.extend(outcome.findings)
    report.warnings.extend(outcome.warnings)
    run.enforced.update(outcome.passing)
    if run.record_enforced:
        run.ledger.set_enforced(run.head, run.enforced)
    report.stats["constraints"] = {
        "checked": len(checks),
        "passing": len(outcome.passing),
        "failing": len(outcome.failing),
        "baseline": outcome.baseline,
        "suppressed": len(outcome.suppressed),
    }
