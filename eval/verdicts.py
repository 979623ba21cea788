"""A person's verdicts on the flags of `comind eval replay` (`--audit FILE`).

The replay's positives are relands named by their subjects, so a flag on any other commit counts as
false — including a commit that does bring a reverted change back under a new title (`bring back json
ops`, `re-enable wgpu_sync`, a merge whose conflict resolution restores a reverted test). Every flag
carries its evidence so that a person can judge it; the audit file records those judgements so that
they survive the next run (of a tuned matcher, say) and the report can say what is left:

    # comind eval replay --audit: verdicts on the flags of ordinary commits
    c0d4b23cea43:
      verdict: re-proposal     # the commit brings the reverted change back: the flag is right
      why: the merge's conflict resolution restores the reverted max_retries test, 9 of 9 lines
    9cd2d3348915:
      verdict: false           # the shared lines are incidental: the flag is noise
      why: deletes the Azure pipeline files the attempt edited; adds none of its lines

Keys are commit ids (7 hex digits or more, unique among the flags). A flag with no verdict counts as
false, so an audit can only lower the false-flag rate by naming each flag it clears, with a reason.
The subject-based figures are reported unchanged next to the audited ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from comind.errors import ComindError

VERDICTS = ("re-proposal", "false")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
# An unquoted `why: … #1234 …`: YAML reads everything from " #" on as a comment and drops it.
_CUT_WHY = re.compile(r"[ \t]+why:[ \t]+[^\s\"'|>#][^\n]*?[ \t]#")


@dataclass(frozen=True)
class Verdict:
    commit: str  # as written in the file: a full id or a prefix of 7 or more
    verdict: str  # one of VERDICTS
    why: str


def parse(text: str, name: str = "audit file") -> dict[str, Verdict]:
    """The verdicts of an audit file's text, by commit; ComindError naming the first problem."""
    import yaml

    for n, line in enumerate(text.splitlines(), 1):
        if _CUT_WHY.match(line):
            raise ComindError(f"{name}: line {n}: `why` would end at ' #' (YAML reads the rest as a comment): quote it")
    try:  # every scalar read as a string: `false` is a verdict and 0123456 a commit, not a bool or a number
        data = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ComindError(f"{name}: not valid YAML{where} ({first})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ComindError(f"{name}: must map commit ids to verdicts, not be a {type(data).__name__}")
    out: dict[str, Verdict] = {}
    for key, entry in data.items():
        commit = str(key).strip().lower()
        if not _COMMIT.fullmatch(commit):
            raise ComindError(f"{name}: {str(key)[:60]!r} is not a commit id (7 to 40 hex digits)")
        if not isinstance(entry, dict) or set(entry) != {"verdict", "why"}:
            raise ComindError(f"{name}: {commit}: give exactly `verdict` and `why`")
        verdict, why = entry["verdict"], entry["why"]
        if verdict not in VERDICTS:
            raise ComindError(f"{name}: {commit}: verdict must be {' or '.join(VERDICTS)}, not {str(verdict)[:40]!r}")
        if not isinstance(why, str) or not why.strip():
            raise ComindError(f"{name}: {commit}: `why` must say why, in words")
        if any(commit.startswith(c) or c.startswith(commit) for c in out):
            raise ComindError(f"{name}: {commit}: given twice")
        out[commit] = Verdict(commit, verdict, why.strip())
    return out


def load(path: Path) -> dict[str, Verdict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ComindError(f"cannot read the audit file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ComindError(f"cannot read the audit file {path}: not UTF-8 text") from None
    return parse(text, path.name)


def audited(report: dict[str, Any], verdicts: dict[str, Verdict], name: str) -> dict[str, Any]:
    """The replay's JSON report with the verdicts applied: each ordinary flag gets its verdict, and an
    `audit` section counts them (`false_flags` there = judged false + not judged) next to the
    subject-based `false_flags`, which stay as they are. Verdicts naming no ordinary flag are listed
    as stale (the history moved on, or the matcher no longer flags the commit), and a prefix naming
    several as ambiguous (neither is judged)."""
    flags = [f for f in report["flags"] if f["kind"] == "ordinary"]
    used: set[str] = set()
    counts = dict.fromkeys(VERDICTS, 0)
    named = {c: [f for f in flags if f["commit"].startswith(c)] for c in verdicts}
    ambiguous = sorted(c for c, matched in named.items() if len(matched) > 1)
    for commit, matched in named.items():
        if len(matched) == 1:
            v = verdicts[commit]
            used.add(commit)
            counts[v.verdict] += 1
            matched[0]["verdict"] = {"verdict": v.verdict, "why": v.why}
    unaudited = len(flags) - sum(counts.values())
    false = counts["false"] + unaudited
    ordinary = report["ordinary_commits"]
    report["audit"] = {
        "file": name,
        "flags": len(flags),
        "re_proposals": counts["re-proposal"],
        "judged_false": counts["false"],
        "unaudited": unaudited,
        "false_flags": false,
        "false_flags_per_1000": round(1000 * false / ordinary, 3) if ordinary else 0.0,
        "stale": sorted(set(verdicts) - used - set(ambiguous)),
        "ambiguous": ambiguous,
    }
    return report
