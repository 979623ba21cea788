"""Revert markers in commit messages, the "why" of a revert, and subject normalisation.

``revert_markers`` only reads text: it never decides whether a commit really reverts another.
That takes repository context (does the target resolve? is it on the default branch? is the
marker quoted from a squashed PR branch?) and belongs to the harvester. Each marker says what
the text claims and how strong the claim is:

* explicit forms (``This reverts commit <sha>``, ``Revert "<subject>"``, ``Reapply "…"``,
  ``Revert^N "…"``, ``Reverts owner/repo#N``, ``This reverts CL N``, ``Revert #N``,
  ``revert <sha>``) have ``needs_target=False``;
* ``revert(scope)!: …`` (Conventional Commits) and free-form subjects that merely start with
  "revert" have ``needs_target=True``: they count only when the harvester resolves a target
  (``revert:`` is also a code-area prefix in projects with a revert module).

Body markers record whether their line was indented or a list item (``indented``): squash bodies
list the PR's own commits that way, and such markers are usually not reverts on the default
branch. Lines quoted with ``>`` are skipped.

All patterns are line-anchored without nested quantifiers, the subject is examined within a
fixed budget, and a nested ``Revert "Revert "…""`` is unwrapped at most ``MAX_DEPTH`` times, so
arbitrary input (NUL bytes, megabyte messages) stays linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from comind.harvest.trailers import parse_trailers

MAX_DEPTH = 32
SUBJECT_BUDGET = 4096  # characters of the subject examined for markers

HEX = r"[0-9a-f]{7,40}"
_QUOTES = {'"': '"', "“": "”"}

_THIS_REVERTS = re.compile(
    rf"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)(?:this[ \t]+(?:commit[ \t]+)?reverts?|reverts)[ \t]+(?:commit[ \t]+)?"
    rf"(?P<sha>{HEX})\b(?P<rest>[^\n]*)",
    re.IGNORECASE | re.MULTILINE,
)
_REVERSING = re.compile(rf"[ \t]*reversing\s+changes\s+made\s+to\s+({HEX})\b", re.IGNORECASE)
_REFERENCE = re.compile(r"[ \t]*\((.*), (\d{4}-\d{2}-\d{2})\)\.?[ \t]*$")
_GITHUB_REVERTS = re.compile(
    r"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)Reverts[ \t]+(?P<repo>[\w.-]+/[\w.-]+)?#(?P<pr>\d{1,9})\b[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
_GERRIT_CL = re.compile(
    r"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)This[ \t]+reverts[ \t]+CL[ \t]+(?P<cl>\d{1,12})\b[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
_GERRIT_SUBMISSION_BODY = re.compile(r"^Reverted changes: /q/submissionid:(\S+)", re.MULTILINE)
_CONVENTIONAL = re.compile(r"(?P<type>[A-Za-z][\w-]{0,30})(?:\([^)\n]{0,100}\))?(?P<bang>!)?:[ \t]+")
_REVERT_N = re.compile(r"revert\^(\d{1,4})[ \t]*", re.IGNORECASE)
_REVERT_WORD = re.compile(r"revert,?[ \t]*", re.IGNORECASE)  # 'fix: revert, "…"' is seen
_REAPPLY_WORD = re.compile(r"reapply[ \t]*", re.IGNORECASE)
_REF = rf"(?:#\d{{1,9}}\b|(?:pr|pull[ \t]+request)[ \t]+#?\d{{1,9}}\b|(?:commit[ \t]+)?{HEX}\b)"
_REF_SUBJECT = re.compile(
    rf"(?:partial(?:ly)?[ \t]+)?(?:revert|reverts|reverting|reverted)[ \t]+"
    rf"(?P<refs>{_REF}(?:(?:[ \t]*,[ \t]*|[ \t]+and[ \t]+|[ \t]*&[ \t]*){_REF})*)",
    re.IGNORECASE,
)
_ONE_REF = re.compile(rf"#(\d+)|(?:pr|pull[ \t]+request)[ \t]+#?(\d+)|(?:commit[ \t]+)?({HEX})", re.IGNORECASE)
_FREE_FORM = re.compile(r"(?:partial(?:ly)?[ \t]+)?(?:re-?)?(?:revert|reverts|reverted|reverting)\b", re.IGNORECASE)
_PR_SUFFIX = re.compile(r"\((?P<repo>[\w.-]+/[\w.-]+)?#(\d{1,9})\)[ \t]*$")
_PR_GROUP = re.compile(r"\((?:[\w.-]+/[\w.-]+)?#\d{1,9}\)")
_GERRIT_SUBMISSION = re.compile(r"revert[ \t]+submission[ \t]+(\S+)", re.IGNORECASE)

# Conventional Commits types stripped by normalise_subject: a fixed list, so Gerrit-style
# "pkg: …" prefixes of different packages do not collapse into one subject.
CONVENTIONAL_TYPES = frozenset({
    "feat", "feature", "fix", "bugfix", "hotfix", "chore", "docs", "doc", "style", "refactor", "perf",
    "test", "tests", "build", "ci", "revert", "release", "deps", "types", "wip", "security",
})


@dataclass(frozen=True)
class RevertMarker:
    kind: str                   # see the module docstring and KINDS
    sha: str | None             # target commit (abbreviated or full, lower case)
    pr: int | None              # target pull/merge request number
    cl: int | None              # target Gerrit change number
    quoted_subject: str | None  # the subject quoted by the marker (literal text inside the quotes)
    is_reland: bool             # True when the commit re-applies the original (revert of a revert)
    text: str                   # the line the marker was read from
    needs_target: bool = False  # True: a revert only if the harvester resolves a target
    source: str = "subject"     # "subject" or "body"
    indented: bool = False      # body marker on an indented or list line (squash-body style)
    base_sha: str | None = None  # merge reverts: "reversing changes made to <sha>"
    repo: str | None = None     # "owner/repo" of a GitHub ``Reverts owner/repo#N``
    depth: int = 1              # revert nesting: Revert "Revert "x"" is 2, Reapply "x" is 2, Revert^3 is 3


KINDS = (
    "this-reverts-commit",      # body: This reverts commit <sha>[, reversing changes made to <sha>] / --reference form
    "subject-revert-quoted",    # subject: Revert "<subject>"
    "revert-of-revert",         # subject: Revert "Revert "…"", Reapply "…", Revert^N "…" (N >= 2)
    "github-reverts-pr",        # body: Reverts owner/repo#N, Reverts #N
    "gerrit-reverts-cl",        # body: This reverts CL N
    "gerrit-revert-submission",  # subject: Revert submission <id>
    "subject-revert-ref",       # subject: Revert #N, Revert PR N, revert <sha>[ and <sha>]
    "conventional-revert",      # subject: revert(scope)!: <description>   (needs_target)
    "free-form",                # subject starting with revert/reverting/reverted/re-revert  (needs_target)
)


def _unquote(text: str) -> tuple[str | None, str]:
    """Split ``"quoted" rest`` into (quoted, rest); the closing quote is the last one in text."""
    if not text:
        return None, text
    close = _QUOTES.get(text[0])
    if close is None:
        return None, text
    end = text.rfind(close)
    if end <= 0:
        return text[1:], ""  # unterminated (a truncated title): take the rest
    return text[1:end], text[end + 1:]


def _wrapper(subject: str) -> tuple[int, str, str | None] | None:
    """One ``Revert "…"`` / ``Reapply "…"`` / ``Revert^N "…"`` wrapper: (depth, form, quoted)."""
    m = _REVERT_N.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end():])
        return (max(int(m.group(1)), 1), "revert^n", quoted) if quoted is not None else None
    m = _REAPPLY_WORD.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end():])
        return (2, "reapply", quoted) if quoted is not None else None
    m = _REVERT_WORD.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end():])
        return (1, "revert", quoted) if quoted is not None else None
    return None


def _nesting(subject: str) -> tuple[int, str | None, str]:
    """Total revert depth, the outermost quoted text, the outermost form."""
    first = _wrapper(subject)
    if first is None:
        return 0, None, ""
    depth, form, quoted = first
    inner = quoted
    for _ in range(MAX_DEPTH):
        if inner is None:
            break
        nxt = _wrapper(inner)
        if nxt is None:
            break
        depth += nxt[0]
        inner = nxt[2]
    return depth, quoted, form


def trailing_pr(subject: str) -> int | None:
    """The pull request number of a squash subject's trailing ``(#N)``; None without one, or when
    the suffix names another repository (``(owner/repo#N)``)."""
    return _pr_in(subject.split("\n", 1)[0][:SUBJECT_BUDGET].rstrip())


def _pr_in(text: str | None) -> int | None:
    if not text:
        return None
    m = _PR_SUFFIX.search(text)
    return int(m.group(2)) if m and not m.group("repo") else None  # "(owner/repo#N)" is another repository


def _subject_markers(subject: str) -> list[RevertMarker]:
    s = subject[:SUBJECT_BUDGET].strip()
    low = s.lower()
    if "revert" not in low and "reapply" not in low:  # every subject form has one of them
        return []
    text = s

    m = _GERRIT_SUBMISSION.match(s)
    if m:
        return [RevertMarker("gerrit-revert-submission", None, None, None, None, False, text)]

    depth, quoted, form = _nesting(s)
    if depth:
        kind = "subject-revert-quoted" if depth == 1 and form == "revert" else "revert-of-revert"
        return [RevertMarker(kind, None, _pr_in(quoted), None, quoted, depth % 2 == 0, text, depth=depth)]

    conventional = _CONVENTIONAL.match(s)
    rest = s
    if conventional:
        rest = s[conventional.end():]
        if conventional.group("type").lower() == "revert":
            description = rest.strip()
            q, _ = _unquote(description)
            pr = _pr_in(q) if q is not None else None
            if q is None:
                # "revert: fix(x): thing (#orig) (#self)": two trailing PR numbers, the inner one is the target
                first = _PR_SUFFIX.search(description)
                if first:
                    before = description[:first.start()]  # the last (#N) is the revert's own PR
                    pr = _pr_in(before.rstrip())
            sha = None
            if q is None and (h := re.match(rf"(?:commit[ \t]+)?({HEX})\b", description, re.IGNORECASE)):
                sha = h.group(1).lower()
            return [RevertMarker("conventional-revert", sha, pr, None, q if q is not None else description,
                                 False, text, needs_target=True)]
        # "docs: revert "…" (#N)", "fix: reverts #8278": the description carries the marker
        depth, quoted, form = _nesting(rest)
        if depth:
            kind = "subject-revert-quoted" if depth == 1 and form == "revert" else "revert-of-revert"
            return [RevertMarker(kind, None, _pr_in(quoted), None, quoted, depth % 2 == 0, text, depth=depth)]

    m = _REF_SUBJECT.match(rest)
    if m:
        out: list[RevertMarker] = []
        for r in _ONE_REF.finditer(m.group("refs")):
            if r.group(3):
                out.append(RevertMarker("subject-revert-ref", r.group(3).lower(), None, None, None, False, text))
            else:
                pr = int(r.group(1) or r.group(2))
                out.append(RevertMarker("subject-revert-ref", None, pr, None, None, False, text))
        if out:
            return out
    if _FREE_FORM.match(rest):
        return [RevertMarker("free-form", None, None, None, None, False, text, needs_target=True)]
    return []


def _body_markers(body: str) -> list[RevertMarker]:
    out: list[tuple[int, RevertMarker]] = []
    for m in _THIS_REVERTS.finditer(body):
        indent = m.group("indent")
        rest = m.group("rest")
        base = None
        quoted = None
        end = m.end()
        r = _REVERSING.match(body, m.end("sha") + 1) if rest.startswith(",") else None
        if r:
            base = r.group(1).lower()
            end = r.end()
        else:
            ref = _REFERENCE.match(rest)
            if ref:
                quoted = ref.group(1)
        line = body[m.start():end].strip()
        out.append((m.start(), RevertMarker(
            "this-reverts-commit", m.group("sha").lower(), None, None, quoted, False, line,
            source="body", indented=bool(indent), base_sha=base)))
    for m in _GITHUB_REVERTS.finditer(body):
        out.append((m.start(), RevertMarker(
            "github-reverts-pr", None, int(m.group("pr")), None, None, False, m.group(0).strip(),
            source="body", indented=bool(m.group("indent")), repo=m.group("repo"))))
    for m in _GERRIT_CL.finditer(body):
        out.append((m.start(), RevertMarker(
            "gerrit-reverts-cl", None, None, int(m.group("cl")), None, False, m.group(0).strip(),
            source="body", indented=bool(m.group("indent")))))
    out.sort(key=lambda pair: pair[0])
    return [marker for _, marker in out]


def revert_markers(subject: str, body: str) -> list[RevertMarker]:
    """Every revert marker of a commit message: subject markers first, then body markers in order."""
    markers = _subject_markers(subject.split("\n", 1)[0])
    if "evert" in body or "EVERT" in body:  # cheap pre-filter: every body form contains "revert"
        markers.extend(_body_markers(body))
    return markers


_BOILERPLATE = (
    _THIS_REVERTS, _GITHUB_REVERTS, _GERRIT_CL, _GERRIT_SUBMISSION_BODY,
    re.compile(r"^\(cherry picked from commit [0-9a-f]+\)[^\n]*", re.MULTILINE),
)
_REASON_RE = re.compile(r"^Reason for revert:[ \t]*", re.IGNORECASE | re.MULTILINE)
_ORIGINAL_DESC = re.compile(r"^Original change's description:[ \t]*$", re.IGNORECASE | re.MULTILINE)


def _paragraph_from(text: str, start: int) -> str:
    end = text.find("\n\n", start)
    chunk = text[start:] if end < 0 else text[start:end]
    return " ".join(line.strip() for line in chunk.split("\n")).strip()


def revert_reason(subject: str, body: str) -> str:
    """Why the revert happened, as written: Gerrit's ``Reason for revert:`` paragraph, else the body
    without marker lines, trailers, quotes and boilerplate; with git's ``--reference`` form the
    subject is the author's why. Empty when nothing is left."""
    m = _REASON_RE.search(body)
    if m:
        reason = _paragraph_from(body, m.end())
        if not reason:  # "Reason for revert:" alone on its line: the next paragraph
            after = body[m.end():].lstrip("\n")
            reason = _paragraph_from(after, 0)
        if reason:
            return reason

    text = body
    desc = _ORIGINAL_DESC.search(text)
    if desc:
        text = text[:desc.start()]
    trailers = parse_trailers(subject + "\n\n" + text)
    if trailers:
        lines = text.split("\n")
        first = trailers[0].line - 3  # line numbers count the subject and the blank line
        if 0 <= first < len(lines):
            text = "\n".join(lines[:first])
    for pattern in _BOILERPLATE:
        text = pattern.sub("", text)
    kept = [line for line in text.split("\n") if not line.lstrip().startswith(">")]
    paragraphs = [" ".join(p.split()) for p in "\n".join(kept).split("\n\n")]
    reason = "\n\n".join(p for p in paragraphs if p)
    markers = _subject_markers(subject.split("\n", 1)[0])
    reference = bool(_THIS_REVERTS.search(body)) and any(
        mk.kind == "this-reverts-commit" and mk.quoted_subject for mk in _body_markers(body))
    if reference and not markers and subject.strip():
        reason = subject.strip() + ("\n\n" + reason if reason else "")
    return reason


def normalise_subject(subject: str) -> str:
    """Subject key for matching a subject-only revert to its target.

    Strips ``Revert "…"`` / ``Reapply "…"`` / ``Revert^N "…"`` wrappers, Conventional Commits
    prefixes of the usual types (``fix(scope)!:``), trailing ``(#N)`` / ``(owner/repo#N)``, then
    folds case and whitespace and drops a final period. Repeats until nothing changes.
    """
    s = subject.split("\n", 1)[0][:SUBJECT_BUDGET].strip()
    # Each step runs only when its cheap precondition holds: most subjects need none.
    for _ in range(MAX_DEPTH):
        before = s
        while s.endswith(")") and _PR_GROUP.fullmatch(s, s.rfind("(")):
            s = s[:s.rfind("(")].rstrip()
        if s[:7].lower().startswith(("revert", "reapply")) and (w := _wrapper(s)) is not None and w[2] is not None:
            s = w[2].strip()
        if ":" in s and (c := _CONVENTIONAL.match(s)) and c.group("type").lower() in CONVENTIONAL_TYPES:
            s = s[c.end():].strip()
        if s.startswith(('"', "“")):
            q, rest = _unquote(s)
            if q is not None and not rest.strip():
                s = q.strip()
        if s == before:
            break
    return " ".join(s.split()).lower().rstrip(".").rstrip()
