"""Revert markers in commit messages, the "why" of a revert, and subject normalisation.

``revert_markers`` only reads text: it never decides whether a commit really reverts another.
That takes repository context (does the target resolve? is it on the default branch? is the
marker quoted from a squashed PR branch?) and belongs to the harvester. Each marker says what
the text claims and how strong the claim is:

* explicit forms (``This reverts commit <sha>``, ``Revert "<subject>"``, ``Reapply "…"``,
  ``Revert^N "…"``, ``Reverts owner/repo#N``, ``This reverts CL N``, ``Revert #N``,
  ``revert <sha>``, Go's ``revert CL N`` and ``pkg/path: revert "<subject>"`` (the quote
  often without the prefix, kept apart as ``scope``), and Mercurial's ``Back out #N`` /
  ``Backed out changeset <sha>``) have ``needs_target=False``;
* ``revert(scope)!: …`` (Conventional Commits), free-form subjects that merely start with
  "revert" or "back out", and subjects that say a change also reverts one (``fix: x, reverts #N``,
  ``(reverts #N)``, ``…, and revert <sha>``) have ``needs_target=True``: they count only when the
  harvester resolves a target (``revert:`` is also a code-area prefix in projects with a revert
  module).

Body markers record whether their line was indented or a list item (``indented``): squash bodies
list the PR's own commits that way, and such markers are usually not reverts on the default
branch. Lines quoted with ``>`` are skipped. ``Revert "…"`` lines of a body count only under a
subject that is itself a revert (``Revert various PRs (#14339)`` listing what it reverts).

Cut titles: GitHub ends a long title with ``…`` and starts the body with ``…`` and the rest
(``full_subject`` joins them); a quoted subject that stays cut is marked ``truncated`` and
resolved by its prefix (``cut_prefix``). Relands announced in words rather than by a revert of
a revert are read by ``reland_subject`` (the subject) and ``reland_references`` (a body naming
what it relands: ``Reland of #N``, ``This relands <sha>``; ``revert_references``: the revert it
undoes, ``reverted in #N``); ``reland_key`` is the subject key both sides compare.

All patterns are line-anchored (or, for the body references, start at a word) without nested
quantifiers, the subject is examined within a fixed budget, and a nested ``Revert "Revert "…""``
is unwrapped at most ``MAX_DEPTH`` times, so arbitrary input (NUL bytes, megabyte messages) stays
linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from comind.harvest.trailers import parse_trailers
from comind.sanitize import redact_people

MAX_DEPTH = 32
SUBJECT_BUDGET = 4096  # characters of the subject examined for markers

HEX = r"[0-9a-f]{7,40}"
_PARTLY = r"(?:partial(?:ly)?[ \t]+|partly[ \t]+)?"
# What a revert names before the commit: "the change of", "a couple of changes introduced in"
_CHANGES_OF = (
    r"(?:(?:the|a[ \t]+couple[ \t]+of|some|part[ \t]+of)[ \t]+)?(?:changes?|parts?|edits?)[ \t]+"
    r"(?:(?:made|introduced|added)[ \t]+)?(?:of|in|from|by)[ \t]+"
)
_QUOTES = {'"': '"', "“": "”"}

_THIS_REVERTS = re.compile(
    rf"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)"
    rf"(?:this[ \t]+(?:(?:commit|cl|change|patch|pr)[ \t]+)?{_PARTLY}reverts?|reverts)[ \t]+"
    rf"(?:{_CHANGES_OF})?(?:commit(?:[ \t]*\n)?[ \t]*)?(?:<?https?://[^\s]{{1,200}}?/commits?/)?(?P<sha>{HEX})\b(?P<rest>[^\n]*)",
    re.IGNORECASE | re.MULTILINE,
)
_REVERSING = re.compile(rf"[ \t]*reversing\s+changes\s+made\s+to\s+({HEX})\b", re.IGNORECASE)
_REFERENCE = re.compile(r"[ \t]*\((.*), (\d{4}-\d{2}-\d{2})\)\.?[ \t]*$")
_GITHUB_REVERTS = re.compile(
    r"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)(?:This[ \t]+(?:(?:pr|pull[ \t]+request|change|commit)[ \t]+)?)?"
    rf"{_PARTLY}Reverts[ \t]+(?:pr[ \t]+)?(?P<repo>[\w.-]+/[\w.-]+)?#(?P<pr>\d{{1,9}})\b[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
_GERRIT_CL = re.compile(
    r"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)This[ \t]+reverts[ \t]+CL[ \t]+(?P<cl>\d{1,12})\b[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
_GERRIT_SUBMISSION_BODY = re.compile(r"^Reverted changes: /q/submissionid:(\S+)", re.MULTILINE)
_CONVENTIONAL = re.compile(r"(?P<type>[A-Za-z][\w-]{0,30})(?:\([^)\n]{0,100}\))?(?P<bang>!)?:[ \t]+")
# Go's and Gerrit's package-path prefix: "go/packages: ", "cmd/go, cmd/link: ".
_PATH_PREFIX = re.compile(r"[\w.-]+(?:/[\w.-]+)+(?:,[ \t]*[\w./-]+)*:[ \t]+|\[[^\]\n]{1,40}\][ \t]+")
_REVERT_N = re.compile(r"revert\^(\d{1,4})[ \t]*", re.IGNORECASE)
# Mercurial's and Mozilla's word for a revert: "Back out #850", "Backed out changeset 0b5d1d9c4b4f (bug 1)".
_BACK_OUT = r"back(?:ed|s|ing)?[ \t-]?out"
_REVERT_WORD = re.compile(rf"(?:revert|{_BACK_OUT}),?[ \t]*", re.IGNORECASE)  # 'fix: revert, "…"' is seen
_REAPPLY_WORD = re.compile(r"reapply[ \t]*", re.IGNORECASE)
# Review change numbers: Gerrit's "CL 40403", a short link on any host, "<host>/cl/731503", and
# Phabricator's revisions, "D12345" (a capital D: `d1234567` is a commit).
_HOST = r"[\w-]+(?:\.[\w-]+)+"
_CL_LINK = rf"(?:https?://)?{_HOST}/cl/"
_GERRIT = rf"(?:cl[ \t]+|{_CL_LINK})"
_CL = rf"(?:{_GERRIT}|(?-i:D)(?=\d))"
# A revision only where Phabricator's forms put one, before a colon or at the end (`Revert D123: x`,
# `Back out D123`): `Revert D3 upgrade` and `Revert D8 desugaring` name a library and a tool.
_REVISION = r"(?-i:D)\d{1,12}(?=[ \t]*(?:$|[:,&)]|\.(?!\w)|and[ \t]+(?-i:D)\d))"
_REF = (
    rf"(?:#\d{{1,9}}\b|(?:pr|pull[ \t]+request)[ \t]+#?\d{{1,9}}\b|{_GERRIT}\d{{1,12}}\b|{_REVISION}"
    rf"|(?:(?:commit|changeset)[ \t]+)?{HEX}\b)"
)
_REF_SUBJECT = re.compile(
    rf"{_PARTLY}(?:revert|reverts|reverting|reverted|undo|{_BACK_OUT})[ \t]+(?:of[ \t]+|{_CHANGES_OF})?"
    rf"(?P<refs>{_REF}(?:(?:[ \t]*,[ \t]*|[ \t]+and[ \t]+|[ \t]*&[ \t]*){_REF})*)",
    re.IGNORECASE,
)
# A change that also reverts one, said after a comma, a parenthesis or "and" ("fix: x, reverts #N").
# (A blank run is entered at its start only: tried from each of its blanks, a long one is quadratic.)
_INLINE_REF = re.compile(
    rf"(?:[,;:(][ \t]*|(?<![ \t])[ \t]+(?:and|&|by)[ \t]+){_PARTLY}(?:revert|reverts|reverting)[ \t]+(?:{_CHANGES_OF})?"
    rf"(?P<refs>{_REF}(?:(?:[ \t]*,[ \t]*|[ \t]+and[ \t]+|[ \t]*&[ \t]*){_REF})*)",
    re.IGNORECASE,
)
_ONE_REF = re.compile(
    rf"#(\d+)|(?:pr|pull[ \t]+request)[ \t]+#?(\d+)|{_CL}(\d+)|(?:(?:commit|changeset)[ \t]+)?({HEX})",
    re.IGNORECASE,
)
_FREE_FORM = re.compile(rf"{_PARTLY}(?:(?:re-?)?(?:revert|reverts|reverted|reverting)|{_BACK_OUT})\b", re.IGNORECASE)
_PR_SUFFIX = re.compile(r"\((?P<repo>[\w.-]+/[\w.-]+)?#(\d{1,9})\)[ \t]*$")
_PR_GROUP = re.compile(r"\((?:[\w.-]+/[\w.-]+)?#\d{1,9}\)")
_GERRIT_SUBMISSION = re.compile(r"revert[ \t]+submission[ \t]+(\S+)", re.IGNORECASE)
# A rollback tool's subjects (histories exported from a monorepo): `Automated rollback of commit
# <sha>.`, `Automated g4 rollback of changelist <n>.`, `Rollback of <sha>`, `*** Reason for rollback
# ***`; and its roll forwards, `Roll forward of <sha>`, `Automated rollforward`. The body describes the
# change under `*** Original change description ***`.
_ROLLBACK = re.compile(
    rf"(?:automated[ \t]+(?:g4[ \t]+)?roll[ \t-]?back|roll[ \t-]?back(?=[ \t]+of[ \t]))"
    rf"(?:[ \t]+of(?:[ \t]+(?:commit|changelist|cl))?[ \t]+(?P<ref>{HEX}|\d{{1,12}})\b)?[ \t.]*"
    r"|\*\*\*[ \t]*reason[ \t]+for[ \t]+rollback[ \t]*\*\*\*[ \t]*",
    re.IGNORECASE,
)
_ROLLFORWARD = re.compile(r"(?:automated[ \t]+)?roll[ \t-]?forward\b", re.IGNORECASE)
_ORIGINAL_CHANGE = re.compile(r"^\*\*\*[ \t]*original[ \t]+change[ \t]+description[ \t]*\*\*\*[ \t]*$", re.I | re.M)

# Conventional Commits types stripped by normalise_subject: a fixed list, so Gerrit-style
# "pkg: …" prefixes of different packages do not collapse into one subject.
CONVENTIONAL_TYPES = frozenset(
    {
        "feat",
        "feature",
        "fix",
        "bugfix",
        "hotfix",
        "chore",
        "docs",
        "doc",
        "style",
        "refactor",
        "perf",
        "test",
        "tests",
        "build",
        "ci",
        "revert",
        "release",
        "deps",
        "types",
        "wip",
        "security",
    }
)


@dataclass(frozen=True)
class RevertMarker:
    kind: str  # see the module docstring and KINDS
    sha: str | None  # target commit (abbreviated or full, lower case)
    pr: int | None  # target pull/merge request number
    cl: int | None  # target Gerrit change number
    quoted_subject: str | None  # the subject quoted by the marker (literal text inside the quotes)
    is_reland: bool  # True when the commit re-applies the original (revert of a revert)
    text: str  # the line the marker was read from
    needs_target: bool = False  # True: a revert only if the harvester resolves a target
    source: str = "subject"  # "subject" or "body"
    indented: bool = False  # body marker on an indented or list line (squash-body style)
    base_sha: str | None = None  # merge reverts: "reversing changes made to <sha>"
    repo: str | None = None  # "owner/repo" of a GitHub ``Reverts owner/repo#N``
    depth: int = 1  # revert nesting: Revert "Revert "x"" is 2, Reapply "x" is 2, Revert^3 is 3
    truncated: bool = False  # the quoted subject was cut (ends with "…"): resolved by its prefix
    described: str | None = None  # conventional / free-form: the reverted change as the subject describes it
    scope: str | None = None  # the prefix before a quoted revert ("pkg/x: "), which the quote may leave out


KINDS = (
    "this-reverts-commit",  # body: This reverts commit <sha>[, reversing changes made to <sha>] / --reference form
    "subject-revert-quoted",  # subject: Revert "<subject>"
    "revert-of-revert",  # subject: Revert "Revert "…"", Reapply "…", Revert^N "…" (N >= 2)
    "github-reverts-pr",  # body: Reverts owner/repo#N, Reverts #N
    "gerrit-reverts-cl",  # body: This reverts CL N
    "gerrit-revert-submission",  # subject: Revert submission <id>
    "subject-revert-ref",  # subject: Revert #N, Revert PR N, revert <sha>[ and <sha>], revert CL N, Back out #N
    "inline-revert-ref",  # subject: "fix: x, reverts #N", "(reverts #N)", "…, and revert <sha>"  (needs_target)
    "conventional-revert",  # subject: revert(scope)!: <description>   (needs_target)
    "free-form",  # subject starting with revert/reverting/reverted/re-revert  (needs_target)
    "body-revert-quoted",  # body: [* ]Revert "<subject>", under a revert-like subject  (needs_target)
)


def _unquote(text: str) -> tuple[str | None, str]:
    """Split ``"quoted" rest`` into (quoted, rest); the closing quote is the last one in text."""
    if not text:
        return None, text
    close = _QUOTES.get(text[0])
    if close is None:
        return None, text
    end = text.rfind(close)
    cut = text.rfind("…")
    if cut > max(end, 0):  # cut by GitHub after the closing quote was lost: the quote ends at the "…"
        return text[1 : cut + 1], text[cut + 1 :]
    if end <= 0:
        return text[1:], ""  # unterminated (a truncated title): take the rest
    return text[1:end], text[end + 1 :]


def _wrapper(subject: str) -> tuple[int, str, str | None] | None:
    """One ``Revert "…"`` / ``Reapply "…"`` / ``Revert^N "…"`` wrapper: (depth, form, quoted)."""
    m = _REVERT_N.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end() :])
        return (max(int(m.group(1)), 1), "revert^n", quoted) if quoted is not None else None
    m = _REAPPLY_WORD.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end() :])
        return (2, "reapply", quoted) if quoted is not None else None
    m = _REVERT_WORD.match(subject)
    if m:
        quoted, _ = _unquote(subject[m.end() :])
        return (1, "revert", quoted) if quoted is not None else None
    return None


def _nesting(subject: str) -> tuple[int, str | None, str, str | None]:
    """Total revert depth, the outermost quoted text, the outermost form, the innermost quoted text."""
    first = _wrapper(subject)
    if first is None:
        return 0, None, "", None
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
    if inner is not None and _reverts_in_words(inner):
        depth += 1  # `Revert "Revert use of X"` said in words: what it quotes was a revert too
    return depth, quoted, form, inner


def _reverts_in_words(subject: str) -> bool:
    """Is an unquoted subject a revert by its words (`Revert use of x`, `revert: x`, `Back out #12`)?"""
    s = subject.strip()
    if _wrapper(s) is not None:
        return False
    return any(m.kind in ("free-form", "conventional-revert", "subject-revert-ref") for m in _subject_markers(s))


def trailing_pr(subject: str) -> int | None:
    """The pull request number of a squash subject's trailing ``(#N)``; None without one, or when
    the suffix names another repository (``(owner/repo#N)``)."""
    return _pr_in(subject.split("\n", 1)[0][:SUBJECT_BUDGET].rstrip())


def _pr_in(text: str | None) -> int | None:
    if not text:
        return None
    m = _PR_SUFFIX.search(text)
    return int(m.group(2)) if m and not m.group("repo") else None  # "(owner/repo#N)" is another repository


_PR_TAIL = re.compile(r"(?:[ \t]*\((?:[\w.-]+/[\w.-]+)?#\d{1,9}\))+[ \t]*$")
_BARE_PR = re.compile(r"(?<![\w/])(?:(?P<word>[A-Za-z]+)[ \t]+)?#(?P<pr>\d{1,9})[ \t]*$")
_ISSUE_WORDS = frozenset(
    {
        "fix",
        "fixes",
        "fixed",
        "close",
        "closes",
        "closed",
        "resolve",
        "resolves",
        "resolved",
        "see",
        "ref",
        "refs",
        "issue",
        "for",
        # a preposition makes it a reference too (`cleanup after #1678`)
        "after",
        "since",
        "before",
        "from",
        "in",
        "on",
        "of",
        "to",
        "with",
        "by",
        "like",
        "following",
        "than",
        "via",
        "vs",
    }
)


def _quoted_pr(quoted: str | None) -> int | None:
    """The PR a quoted subject names: its trailing ``(#N)``, else a bare ``#N`` ending it (``never
    type check the info command #6978``) unless an issue word or a preposition introduces it (``fix #12``,
    ``after #12``)."""
    if not quoted:
        return None
    pr = _pr_in(quoted.rstrip())
    if pr is not None:
        return pr
    m = _BARE_PR.search(quoted)
    if m and (m.group("word") or "").lower() not in _ISSUE_WORDS:
        return int(m.group("pr"))
    return None


def _described(description: str) -> tuple[str, int | None]:
    """A conventional or free-form revert's description: (the reverted change as described, its PR).
    ``thing (#12) (#34)``: the last ``(#N)`` is the revert's own, the one before the target's;
    ``thing #12 (#34)`` likewise."""
    text = description.strip()
    first = _PR_SUFFIX.search(text)
    if first is None:
        return text, None
    before = text[: first.start()].rstrip()
    pr = _pr_in(before)
    if pr is None and (m := _BARE_PR.search(before)) and (m.group("word") or "").lower() not in _ISSUE_WORDS:
        pr = int(m.group("pr"))
    return before, pr


def is_cut(text: str | None) -> bool:
    """Does a (quoted) subject end where GitHub or a mail client cut it (``…``, ``...``)?"""
    if not text:
        return False
    t = text.rstrip().rstrip('"”').rstrip()
    return t.endswith(("…", "..."))


_PARTIAL_TAIL = re.compile(r"[ \t]*\((?:[\w.-]{0,100}/?[\w.-]{0,100})?#?\d{0,9}$")  # "(#263", "(owner/re"
MIN_PREFIX = 16  # characters of a cut subject's normalised prefix needed to look it up


def cut_prefix(text: str | None) -> str | None:
    """The normalised prefix of a cut subject (``fix(x): send ws ping frames (#263…`` -> ``send ws
    ping frames``), to be matched against whole subjects; None when it is not cut or too short."""
    if not is_cut(text):
        return None
    assert text is not None
    t = text.rstrip().rstrip('"”').rstrip()
    t = t[:-1] if t.endswith("…") else t[:-3]
    t = _PARTIAL_TAIL.sub("", t[:SUBJECT_BUDGET])
    key = normalise_subject(t)
    return key if len(key) >= MIN_PREFIX else None


def full_subject(subject: str, body: str) -> tuple[str, str]:
    """GitHub cuts a long title at about 70 characters: the subject ends with ``…`` (then perhaps the
    squash ``(#N)``) and the body starts with ``…`` and the rest. Returns the title made whole and
    the body without that line; anything else unchanged."""
    cut = subject.rfind("…")
    if cut < 0 or not body.startswith("…"):
        return subject, body
    after = subject[cut + 1 :]
    if after.strip() and not _PR_TAIL.fullmatch(after):
        return subject, body
    line, _, rest = body.partition("\n")
    return subject[:cut] + line[1:].rstrip() + after, rest.lstrip("\n")


# The merge commits forges write, each with the request's title first in the body: GitHub's merge
# button, bors (`Auto merge of #N - user:branch, r=x`), bors-ng (`Merge #N`, its body `N: title r=x
# a=y`) and GitLab (`… See merge request group/p!N`).
_FORGE_MERGE = re.compile(
    r"Merge pull request #(?P<pr>\d{1,9}) from \S+$"
    r"|Auto merge of #(?P<bors>\d{1,9}) - \S+"
    r"|Merge #(?P<borsng>\d{1,9})$"
    r"|Merge branch '[^'\n]+' into '[^'\n]+'$"
)
_BORS_NG_LINE = re.compile(r"(?P<number>\d{1,9}): (?P<title>.+?)(?: r=\S+)?(?: a=\S+)?")
_MERGE_REQUEST = re.compile(r"^See merge request \S*!(\d{1,9})\s*$", re.M)


def merge_title(subject: str, body: str) -> str | None:
    """The title of the request a forge's merge commit landed, with its number (`Reload the config
    on change (#1234)`), or None for any other commit, or a body not shaped so (its
    first line a person trailer, or a link alone). People are left out (`redact_people`)."""
    m = _FORGE_MERGE.match(subject.strip())
    if m is None:
        return None
    line = request_line(body)
    title = " ".join(redact_people(line).split())
    if not title or _LINK.fullmatch(title) or title.startswith("See merge request"):
        return None
    title = title if len(title) <= _TITLE_BUDGET else title[: _TITLE_BUDGET - 1] + "…"  # (the number stays)
    if number := m.group("pr") or m.group("bors") or m.group("borsng"):
        return f"{title} (#{number})"
    request = _MERGE_REQUEST.search(body)
    return f"{title} (!{request.group(1)})" if request else None


def request_line(body: str) -> str:
    """A merge body's first line, the request's title as a forge writes it there; bors-ng's `N: title
    r=x a=y` read as the title alone (its reviewers and author are people, its number the subject's)."""
    line = next((line.strip() for line in body.split("\n") if line.strip()), "")
    bors = _BORS_NG_LINE.fullmatch(line)
    return bors.group("title").strip() if bors else line


_LINK = re.compile(r"<?https?://\S+>?")
_TITLE_BUDGET = 100


def revert_depth(subject: str) -> int:
    """How many reverts deep a subject is: 0 for an ordinary one, 1 for ``Revert "x"``, 2 for a reland
    (``Reapply "x"``, ``Revert "Revert "x""``), and so on; conventional ``revert:`` counts 1."""
    s = subject.split("\n", 1)[0][:SUBJECT_BUDGET].strip()
    markers = _subject_markers(s)  # (whose cheap pre-filter keeps most subjects out)
    if not markers:
        return 0
    m = markers[0]
    return m.depth if m.kind in ("subject-revert-quoted", "revert-of-revert") else 1


def _quoted_marker(depth: int, quoted: str | None, form: str, inner: str | None, text: str) -> RevertMarker:
    kind = "subject-revert-quoted" if depth == 1 and form == "revert" else "revert-of-revert"
    return RevertMarker(
        kind, None, _quoted_pr(quoted), None, quoted, depth % 2 == 0, text, depth=depth, truncated=is_cut(inner)
    )


def _subject_markers(subject: str) -> list[RevertMarker]:
    s = subject[:SUBJECT_BUDGET].strip()
    low = s.lower()
    if "revert" not in low and "reapply" not in low and "back" not in low and "undo" not in low:  # every form has one
        return []
    text = s

    m = _GERRIT_SUBMISSION.match(s)
    if m:
        return [RevertMarker("gerrit-revert-submission", None, None, None, None, False, text)]

    depth, quoted, form, inner = _nesting(s)
    if depth:
        return [_quoted_marker(depth, quoted, form, inner, text)]

    prefix = _CONVENTIONAL.match(s) or _PATH_PREFIX.match(s)
    rest = s[prefix.end() :] if prefix else s
    if prefix and prefix.re is _CONVENTIONAL and prefix.group("type").lower() == "revert":
        description = rest.strip()
        q, _ = _unquote(description)
        pr = _pr_in(q) if q is not None else None
        described = q
        if q is None:
            # "revert: fix(x): thing (#orig) (#self)": two trailing PR numbers, the inner one is the target
            described, pr = _described(description)
        sha = None
        if q is None and (h := re.match(rf"(?:commit[ \t]+)?({HEX})\b", description, re.IGNORECASE)):
            sha = h.group(1).lower()
        return [
            RevertMarker(
                "conventional-revert",
                sha,
                pr,
                None,
                q if q is not None else description,
                False,
                text,
                needs_target=True,
                truncated=is_cut(described),
                described=described,
            )
        ]
    if prefix:
        # 'docs: revert "…" (#N)', 'go/packages: revert "x"' (x without the prefix), "fix: reverts #8278"
        depth, quoted, form, inner = _nesting(rest)
        if depth:
            return [replace(_quoted_marker(depth, quoted, form, inner, text), scope=s[: prefix.end()])]

    m = _REF_SUBJECT.match(rest)
    if m and (refs := _refs(m.group("refs"))):
        return [RevertMarker("subject-revert-ref", sha, pr, cl, None, False, text) for sha, pr, cl in refs]
    if (f := _FREE_FORM.match(rest)) is not None:
        described, pr = _described(rest[f.end() :])
        if described.lower().startswith("back to ") or described.lower().startswith("to "):
            described = ""  # "revert to v1.2", "revert back to …": a state, not a change's subject
        return [
            RevertMarker(
                "free-form",
                None,
                pr,
                None,
                None,
                False,
                text,
                needs_target=True,
                truncated=is_cut(described),
                described=described or None,
            )
        ]
    for m in _INLINE_REF.finditer(rest):
        before = rest[max(0, m.start() - 20) : m.start()].rsplit(None, 1)
        if m.group().lstrip().lower().startswith("by") and before and before[-1].lower() in _CAUSED:
            continue  # "a failure caused by reverting <sha>": what this commit fixes, not what it does
        return [
            RevertMarker("inline-revert-ref", sha, pr, cl, None, False, text, needs_target=True)
            for sha, pr, cl in _refs(m.group("refs"))
        ]
    return []


# Words before "by reverting" that make the revert another commit's doing, told as a cause.
_CAUSED = frozenset(
    ("caused", "introduced", "broken", "broke", "exposed", "revealed", "uncovered", "triggered", "regressed")
)


def _refs(text: str) -> list[tuple[str | None, int | None, int | None]]:
    """(sha, PR number, CL number) of each reference in a list of them (`#12 and #13`, `8e6e47af,
    c121b98c`, `CL 40403`)."""
    return [
        (r.group(4).lower(), None, None)
        if r.group(4)
        else (None, None, int(r.group(3)))
        if r.group(3)
        else (None, int(r.group(1) or r.group(2)), None)
        for r in _ONE_REF.finditer(text)
    ]


_BODY_REVERT = re.compile(
    r"^(?P<indent>[ \t]*(?:[-*+][ \t]+)?)(?P<line>Revert[ \t]+[\"“][^\n]*)", re.IGNORECASE | re.MULTILINE
)


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
        line = body[m.start() : end].strip()
        out.append(
            (
                m.start(),
                RevertMarker(
                    "this-reverts-commit",
                    m.group("sha").lower(),
                    None,
                    None,
                    quoted,
                    False,
                    line,
                    source="body",
                    indented=bool(indent),
                    base_sha=base,
                ),
            )
        )
    for m in _GITHUB_REVERTS.finditer(body):
        out.append(
            (
                m.start(),
                RevertMarker(
                    "github-reverts-pr",
                    None,
                    int(m.group("pr")),
                    None,
                    None,
                    False,
                    m.group(0).strip(),
                    source="body",
                    indented=bool(m.group("indent")),
                    repo=m.group("repo"),
                ),
            )
        )
    for m in _GERRIT_CL.finditer(body):
        out.append(
            (
                m.start(),
                RevertMarker(
                    "gerrit-reverts-cl",
                    None,
                    None,
                    int(m.group("cl")),
                    None,
                    False,
                    m.group(0).strip(),
                    source="body",
                    indented=bool(m.group("indent")),
                ),
            )
        )
    out.sort(key=lambda pair: pair[0])
    return [marker for _, marker in out]


def _body_quoted(body: str) -> list[RevertMarker]:
    """``Revert "<subject>"`` lines of a body (a squash of several reverts lists them so)."""
    out = []
    for m in _BODY_REVERT.finditer(body):
        line = m.group("line")[:SUBJECT_BUDGET].strip()
        depth, quoted, form, inner = _nesting(line)
        if depth != 1 or form != "revert" or not quoted:
            continue  # a reland listed in the body: the subject says what the commit is
        out.append(
            RevertMarker(
                "body-revert-quoted",
                None,
                _quoted_pr(quoted),
                None,
                quoted,
                False,
                line,
                needs_target=True,
                source="body",
                indented=bool(m.group("indent")),
                truncated=is_cut(inner),
            )
        )
    return out


def _revert_feature(subject: str) -> bool:
    """Rule R3: does the subject name a feature or command called revert (`Add a revert command`)?"""
    if "evert" not in subject and "EVERT" not in subject:
        return False
    from comind.rulebook import DEFAULT, RevertFeature  # on use: the rulebook is a heavy import

    return DEFAULT.get(RevertFeature).judge(subject)


def _rollback_markers(subject: str, body: str) -> list[RevertMarker]:
    """A rollback tool's rollback (the commit it names, else the change its body describes) or roll
    forward (a reland of the change described: the innermost description that is not a rollback). A
    rollback whose description is a rollback rolls that one back: a reland too."""
    rollback = _ROLLBACK.fullmatch(subject)
    if rollback is None and _ROLLFORWARD.match(subject) is None:
        return []
    # (each description's first line: the subject the change landed with)
    described = [body[m.end() :].lstrip("\r\n").split("\n", 1)[0].strip() for m in _ORIGINAL_CHANGE.finditer(body)]
    nested = next((n for n, d in enumerate(described) if d and _ROLLBACK.fullmatch(d) is None), len(described))
    original = described[nested] if nested < len(described) else None
    ref = rollback.group("ref") if rollback is not None else None
    if ref and not ref.isdigit():  # (a changelist's number is no commit)
        return [RevertMarker("subject-revert-ref", ref.lower(), None, None, original, False, subject)]
    if original is None:
        return []
    if rollback is None or nested % 2:  # rolled forward, or a rollback rolled back
        return [RevertMarker("revert-of-revert", None, None, None, original, True, subject, depth=2)]
    return [RevertMarker("subject-revert-quoted", None, None, None, original, False, subject)]


def revert_markers(subject: str, body: str) -> list[RevertMarker]:
    """Every revert marker of a commit message: subject markers first, then body markers in order.

    ``Revert "…"`` lines of the body count only under a subject that is itself a revert (``Revert
    various PRs (#14339)`` listing what it reverts): under any other subject they are the PR
    branch's own history quoted by a squash."""
    first = subject.split("\n", 1)[0]
    if _revert_feature(first):
        return []  # its message may show what the command writes (`This reverts commit …`)
    markers = _subject_markers(first)
    # (a subject that only has "oll" in it, `Fix scroll`, `Collections`, still reads its body)
    if (
        not markers
        and ("oll" in first or "OLL" in first)
        and (rolled := _rollback_markers(first[:SUBJECT_BUDGET].strip(), body))
    ):
        return rolled
    if "evert" in body or "EVERT" in body:  # cheap pre-filter: every body form contains "revert"
        markers.extend(_body_markers(body))
        if markers and markers[0].source == "subject" and not markers[0].is_reland:
            markers.extend(_body_quoted(body))
    return markers


_BOILERPLATE = (
    _THIS_REVERTS,
    # git wraps a merge revert's "…, reversing\nchanges made to <sha>." onto a line of its own
    re.compile(rf"^[ \t]*changes[ \t]+made[ \t]+to[ \t]+{HEX}\b\.?[ \t]*$", re.IGNORECASE | re.MULTILINE),
    _GITHUB_REVERTS,
    _GERRIT_CL,
    _GERRIT_SUBMISSION_BODY,
    re.compile(r"^\(cherry picked from commit [0-9a-f]+\)[^\n]*", re.MULTILINE),
    re.compile(r"^-{3,}[ \t]*$", re.MULTILINE),  # GitHub's squash: the rule before the co-authors
)
# Gerrit's `Reason for revert:`, a rollback tool's `*** Reason for rollback ***`; and what follows the
# why, the change's own description (Gerrit's, a rollback tool's, an undo's `««« … »»»`)
_REASON_RE = re.compile(
    r"^(?:Reason for revert:|\*\*\*[ \t]*Reason for rollback[ \t]*\*\*\*)[ \t]*", re.IGNORECASE | re.MULTILINE
)
_ORIGINAL_DESC = re.compile(
    r"^(?:Original change's description:|\*\*\*[ \t]*Original change description[ \t]*\*\*\*"
    r"|««« original CL description)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)


def _paragraph_from(text: str, start: int) -> str:
    end = text.find("\n\n", start)
    chunk = text[start:] if end < 0 else text[start:end]
    return " ".join(line.strip() for line in chunk.split("\n")).strip()


def revert_reason(subject: str, body: str) -> str:
    """Why the revert happened, as written: Gerrit's ``Reason for revert:`` paragraph, else the body
    without marker lines, trailers, quotes and boilerplate; with git's ``--reference`` form the
    subject is the author's why. Empty when nothing is left. People are left out (redact_people).
    CRLF line ends are read as LF (the patterns and paragraphs are of lines)."""

    return redact_people(_revert_reason(subject.replace("\r\n", "\n"), body.replace("\r\n", "\n"))).strip()


def _revert_reason(subject: str, body: str) -> str:
    m = _REASON_RE.search(body)
    if m:
        reason = _paragraph_from(body, m.end())
        if not reason:  # "Reason for revert:" alone on its line: the next paragraph
            after = body[m.end() :].lstrip("\n")
            reason = _paragraph_from(after, 0)
        if reason:
            return reason

    text = body
    desc = _ORIGINAL_DESC.search(text)
    if desc:
        text = text[: desc.start()]
    trailers = parse_trailers(subject + "\n\n" + text)
    if trailers:
        lines = text.split("\n")
        first = trailers[0].line - 3  # line numbers count the subject and the blank line
        if 0 <= first < len(lines):
            text = "\n".join(lines[:first])
    for pattern in _BOILERPLATE:
        text = pattern.sub("", text)
    text = _without_other_subjects(text)
    kept = [line for line in text.split("\n") if not line.lstrip().startswith(">") and not _echoed(line)]
    paragraphs = [" ".join(p.split()) for p in "\n".join(kept).split("\n\n")]
    reason = "\n\n".join(p for p in paragraphs if p)
    markers = _subject_markers(subject.split("\n", 1)[0])
    reference = bool(_THIS_REVERTS.search(body)) and any(
        mk.kind == "this-reverts-commit" and mk.quoted_subject for mk in _body_markers(body)
    )
    if reference and not markers and subject.strip():
        reason = subject.strip() + ("\n\n" + reason if reason else "")
    return reason


_ITEM = re.compile(r"^\* (?=\S)", re.MULTILINE)  # a squash body's item: GitHub's `* subject`


def _without_other_subjects(text: str) -> str:
    """Rule: a squash body lists its pull request's commits as items, each commit's body under its
    subject. Where one item is a `git revert` commit's (`* Revert "x"`), an item with nothing under
    it but person trailers that is no such revert is another commit's subject (`* Changeset`, `* fix: adjust
    for feedback`, `* chore: revert env change`): what else the pull request did, not why it
    reverted. An item with a body stays (more one-line items under it are none), and so does a list
    someone wrote (no such revert in it)."""

    def opens_item(at: int) -> bool:  # GitHub joins the commits with a blank line: an item right under
        # a line of text is a list written in a commit's body (`It broke:` / `* the cold start`)
        return at == 0 or not text[text.rfind("\n", 0, at - 1) + 1 : at - 1].strip()

    starts = [m.start() for m in _ITEM.finditer(text) if opens_item(m.start())]
    if not starts:
        return text
    sections = [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)], strict=True)]
    items = sections[1:]

    def subject(item: str) -> str:
        return _ITEM.sub("", item.split("\n", 1)[0], count=1).strip()

    def body(item: str) -> str:  # (person trailers, `Co-authored-by: …`, or more one-line items say nothing)
        lines = redact_people(item.partition("\n")[2]).split("\n")
        return "\n".join(line for line in lines if not _ITEM.match(line)).strip()

    reverts = [any(m.quoted_subject for m in _subject_markers(subject(item))) for item in items]
    if not any(reverts):
        return text  # no `git revert` commit among the items: a list someone wrote
    kept = [item for item, quoted in zip(items, reverts, strict=True) if quoted or body(item)]
    return "".join([sections[0], *kept])


def _echoed(line: str) -> bool:
    """A line that is only a revert commit's subject: a squash body's item (`* Revert "…" (#12)`), or
    the whole body of a one-commit squash (`Revert "…" (#11)`, no bullet): the revert's own subject
    again. One that goes on after the quote says why, and is kept."""
    text = line.strip()
    if text[:1] in ("*", "-", "+") and text[1:2] in (" ", "\t"):
        text = text[2:].lstrip()
    m = _REVERT_N.match(text) or _REAPPLY_WORD.match(text) or _REVERT_WORD.match(text)
    if m is None:
        return False
    quoted, rest = _unquote(text[m.end() :])
    return quoted is not None and _REFERENCES_ONLY.fullmatch(rest) is not None


# What may follow an echoed revert subject: punctuation and references (`(#12)`, `[#3]`, `(!7)`, `(GH-9)`)
_REFERENCES_ONLY = re.compile(r"(?:[\s.,;:]|\((?:[\w./-]*[#!]|GH-)\d{1,9}\)|\[[\w./-]*#?\d{1,9}\])*", re.IGNORECASE)


@lru_cache(maxsize=1 << 15)  # each subject is asked for by the history index, then by the reland lookups
def normalise_subject(subject: str) -> str:
    """Subject key for matching a subject-only revert to its target.

    Strips ``Revert "…"`` / ``Back out "…"`` / ``Reapply "…"`` / ``Revert^N "…"`` wrappers, Conventional Commits
    prefixes of the usual types (``fix(scope)!:``), trailing ``(#N)`` / ``(owner/repo#N)``, then
    folds case and whitespace and drops a final period. Repeats until nothing changes.
    """
    s = subject.split("\n", 1)[0][:SUBJECT_BUDGET].strip()
    # Each step runs only when its cheap precondition holds: most subjects need none.
    for _ in range(MAX_DEPTH):
        before = s
        while s.endswith(")") and _PR_GROUP.fullmatch(s, s.rfind("(")):
            s = s[: s.rfind("(")].rstrip()
        if (
            s[:7].lower().startswith(("revert", "reapply", "back"))
            and (w := _wrapper(s)) is not None
            and w[2] is not None
        ):
            s = w[2].strip()
        if ":" in s and (c := _CONVENTIONAL.match(s)) and c.group("type").lower() in CONVENTIONAL_TYPES:
            s = s[c.end() :].strip()
        if s.startswith(('"', "“")):
            q, rest = _unquote(s)
            if q is not None and not rest.strip():
                s = q.strip()
        if s == before:
            break
    if "`" in s:  # markdown code spans: `ReadableStream`s and ReadableStreams are one title
        s = s.replace("`", "")
    return " ".join(s.split()).lower().rstrip(".").rstrip()


_ASIDE = re.compile(r"\([^()\n]{0,200}\)")


def reland_key(subject: str) -> str:
    """A subject as relands repeat it: `normalise_subject`, then without parenthesised asides
    (`(fix: #3288)`, `(#12)` in the middle, `(again)`), which relands often change."""
    key = normalise_subject(subject)
    if "(" not in key:
        return key
    loose = " ".join(_ASIDE.sub(" ", key).split())
    return loose or key


# (a Conventional Commits type, or an area in brackets: `[clang] Reland "x"`)
_RELAND_PREFIX = re.compile(r"[A-Za-z][\w-]{0,30}(?:\([^)\n]{0,100}\))?!?:[ \t]+|\[[^\]\n]{1,40}\][ \t]+")
_RELAND_WORD = re.compile(
    r"(?P<word>re-?land(?:ed|s|ing)?|re-?apply|re-?commit|redo|restore|(?:bring|add|put)[ \t]+back|readd|reenable"
    r"|reintroduce|refix|re-(?P<verb>[a-z]{2,20}))\b[ \t]*(?:[:,\-–][ \t]*)?(?P<rest>.*)",
    re.IGNORECASE,
)
# The words that end `x again` / `x, take 2` / `x (second try)`, found at the end of the subject; what
# comes before them, less one bracket, one separator and the spaces around it, is what is relanded.
# (One pattern for the whole subject, `(?P<rest>.*?)[ \t]*[,:;\-–]?[ \t]*…`, took minutes on a
# subject of `again` and 4,000 spaces: the lazy rest and the two runs of spaces split them every way.)
_AGAIN = re.compile(
    r"\b(?:again|(?:take|try|attempt)[ \t]*#?(?:two|2|3|three)|(?:second|2nd|third|3rd)[ \t]+(?:try|attempt))"
    r"[)\]]?[ \t.!]*\Z",
    re.IGNORECASE,
)
_RELAND_FORMS = {
    "reapply": "reapply",
    "re-apply": "reapply",
    "recommit": "reapply",
    "re-commit": "reapply",
    "redo": "redo",
    "restore": "restore",
    "readd": "add",
    "reenable": "enable",
    "reintroduce": "introduce",
    "refix": "fix",
}


def _all_quoted(text: str) -> bool:
    """Is the text one quoted subject (and perhaps a PR suffix): `"Add caching" (#12)`, not
    `"compile_windows_ext" test`?"""
    q, rest = _unquote(text)
    return bool(q) and (not rest.strip() or bool(_PR_TAIL.fullmatch(rest)))


# A change named by reference: a pull request, a GitHub pull URL, a Gerrit CL (number, short link,
# a review host's URL) or a commit.
_CHANGE_REF = (
    r"(?:commit[ \t]+)?"
    r"(?:(?:[\w.-]+/[\w.-]+)?#(?P<pr>\d{1,9})|https?://github\.com/[\w.-]+/[\w.-]+/pull/(?P<pull>\d{1,9})"
    rf"|{_CL_LINK}(?P<link>\d{{1,12}})|CL[ \t]*(?P<cl>\d{{1,12}})"
    rf"|https?://(?:{_HOST}/c/[\w.-]+(?:/[\w.-]+)*/\+/|(?=[\w.-]*(?:review|gerrit))[\w.-]*/(?:c/[\w.-]+(?:/[\w.-]+)*/\+/)?)"
    r"(?P<review>\d{1,12})"
    rf"|(?P<sha>{HEX}))\b"
)

# A body saying what it relands by reference: "Reland of #33158", "This relands 0fdde844a", "Reapply
# <host>/cl/731503", "Brings back commit 1a2e774", "…, bringing back #16383", "Re-attempt at #21284",
# "Second attempt at CL 509560", "another take at #7810 which was reverted", "Reopening #2408 after the
# revert", "reapplying CL121995".
_RELAND_REF = re.compile(
    r"(?<![\w-])(?:re-?lands?|relanding|re-?appl(?:y|ies|ying)|bring(?:s|ing)?[ \t]+back|re-?attempt|reopen(?:s|ing)?"
    r"|(?:second|2nd|third|3rd|another)[ \t]+(?:attempt|take|try|go)[ \t]+(?:at|of))(?:[ \t]*:)?[ \t]+"
    r"(?:(?:of|at)[ \t]+)?" + _CHANGE_REF,
    re.IGNORECASE,
)

# A reland's body naming the revert it undoes: "a reland of #14734 after it was reverted in #16366",
# "reverted by 1a2e774", "which was reverted with <host>/cl/5", "after the full revert in #34077".
_REVERTED_IN = re.compile(r"(?<![\w-])revert(?:ed)?[ \t]+(?:in|by|with|via)[ \t]+" + _CHANGE_REF, re.IGNORECASE)


def _references(pattern: re.Pattern[str], body: str) -> list[tuple[str | None, int | None, int | None]]:
    out = []
    for m in pattern.finditer(body):
        pr, cl = m.group("pr") or m.group("pull"), m.group("link") or m.group("cl") or m.group("review")
        out.append(
            (m.group("sha").lower() if m.group("sha") else None, int(pr) if pr else None, int(cl) if cl else None)
        )
    return out


# The letters `re` matches to an ASCII letter case-insensitively that casefold() does not turn into
# it (ſ and the Kelvin sign it does): İ and ı are an "i" to a search.
_DOTTED_I = {0x130: "i", 0x131: "i"}


def _folded(text: str) -> str:
    """The text as an IGNORECASE pattern's ASCII words are found in it with `in`."""
    return text.lower() if text.isascii() else text.translate(_DOTTED_I).casefold()


# Every form of `_RELAND_REF` holds one of these (folded): most bodies, none.
_RELAND_REF_WORDS = ("land", "appl", "bring", "attempt", "reopen", "second", "2nd", "third", "3rd", "another")


def reland_references(body: str) -> list[tuple[str | None, int | None, int | None]]:
    """(sha, PR number, CL number) of each change a body says it relands, in order."""
    low = _folded(body)
    if not any(word in low for word in _RELAND_REF_WORDS):
        return []
    return _references(_RELAND_REF, body)


def revert_references(body: str) -> list[tuple[str | None, int | None, int | None]]:
    """(sha, PR number, CL number) of each revert a body says something was reverted in (`reverted in
    #16366`), in order: what a reland's body names besides the original change."""
    return _references(_REVERTED_IN, body)


# What `reapply` names when it is not a quoted subject: a pull request, a commit, a Gerrit CL.
_REAPPLIED_REF = re.compile(
    rf"(?:(?:[\w.-]+/[\w.-]+)?#\d{{1,9}}|(?:commit[ \t]+)?{HEX}|{_CL_LINK}\d{{1,12}}"
    r"|CL[ \t]+\d{1,12})[ \t.]*",
    re.IGNORECASE,
)


@lru_cache(maxsize=1 << 12)  # asked twice of most commits: by the subject, then beside a body's references
def reland_subject(subject: str) -> tuple[str, str, bool] | None:
    """The reland a subject announces in words, without a revert marker: ``Reland x``, ``Re-land:
    x``, ``fix(y): reland x``, ``Redo "x"``, ``Restore x``, ``Bring back x`` / ``Add back x``,
    ``Re-add x`` / ``Re-enable x`` / ``Re-fix x`` (any ``re-<verb> x``, read as ``<verb> x``),
    ``x again``, ``x, take 2`` (``try 2``, ``attempt 2``, ``second try``). Returns (form, what it
    relands as written, named). named is False for the words that also mean a plain rewrite
    (``redo directive parsing``, ``restore the default``, ``re-enable the test``, ``retry again``,
    ``fix: reapply context after an error``) unless they quote a subject (or, for ``reapply``, name
    a pull request, commit or CL: ``chore: reapply #5930``): those count only when what they name
    is a reverted subject (for ``again`` / ``take 2``: the start of exactly one reverted subject)."""
    s = subject.split("\n", 1)[0][:SUBJECT_BUDGET].strip()
    rest = s
    for _ in range(2):
        if (m := _RELAND_WORD.match(rest)) is not None:
            word = " ".join(m.group("word").lower().split())
            verb = (m.group("verb") or "").lower()
            text = m.group("rest").strip()
            quoted = _all_quoted(text)
            if verb == "revert" or verb == "reverted":
                return None  # a revert of a reland
            if word.startswith(("reland", "re-land")):
                return "reland", text, True
            if word.endswith(" back"):  # bring back, add back, put back
                return word.replace(" ", "-"), text, quoted
            form = _RELAND_FORMS.get(word)
            if form in ("reapply", "redo", "restore"):
                named = quoted or (form == "reapply" and _REAPPLIED_REF.fullmatch(_PR_TAIL.sub("", text)) is not None)
                return form, text, named
            verb = verb or form or ""
            label = f"re-{verb}" if verb in ("add", "enable") else "re-verb"
            return label, text if quoted else f"{verb} {text}".strip(), quoted
        prefix = _RELAND_PREFIX.match(rest)
        if prefix is None:
            break
        rest = rest[prefix.end() :]
    bare = _PR_TAIL.sub("", s) if s.endswith(")") else s
    low = _folded(bare)  # (every form of `_AGAIN` holds one of these words: most subjects, none)
    if not ("again" in low or "take" in low or "try" in low or "attempt" in low):
        return None
    if (m := _AGAIN.search(bare)) is not None and (rest := _before_again(bare[: m.start()])):
        return "again", rest, False
    return None


def _before_again(text: str) -> str:
    """What comes before `again` and its kin: without one bracket, then one separator, nor the spaces."""
    text = text.removesuffix("(") if text.endswith("(") else text.removesuffix("[")
    text = text.rstrip(" \t")
    if text.endswith((",", ":", ";", "-", "–")):
        text = text[:-1]
    return text.strip()
