"""The rulebook: every rule by which comind tells a dead end, a revert and a reland, one class each.

Families: L (which lines say something), D (when a change re-proposes a dead end), R (what the
harvester takes for a revert that tried something), E (what the replay counts as a reland). Each
rule's options are set in `.comind.yml` (`dead_ends: {D5.lines: 50}`); `comind check --list-rules`
prints the book and docs/rules.md is generated from it (`markdown`). What each rule was learnt
from is told in benchmarks/replay-audit/README.md, by rule id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, ClassVar, Protocol, TypeVar

from comind.rule import Match, Option

__all__ = ["RULES", "Match", "Option", "RuleBook", "Verdict", "judge_match", "markdown", "parse_overrides", "rules_of"]


class BaseRule:
    """A rule with its option values (the defaults, unless a setting overrides them)."""

    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    options: ClassVar[tuple[Option, ...]] = ()
    family: ClassVar[str] = ""

    def __init__(self, values: Mapping[str, float] | None = None) -> None:
        values = values or {}
        self._values = {o.name: values.get(o.name, o.default) for o in self.options}

    def value(self, option: str) -> float:
        return self._values[option]

    def count(self, option: str) -> int:
        return int(self._values[option])


# -- L: lines ---------------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# Words that say nothing about an approach on their own: control flow, declarations, literals.
KEYWORDS = frozenset(
    [
        "if",
        "else",
        "elif",
        "elsif",
        "for",
        "foreach",
        "while",
        "do",
        "try",
        "catch",
        "except",
        "finally",
        "return",
        "break",
        "continue",
        "pass",
        "end",
        "then",
        "fi",
        "done",
        "esac",
        "switch",
        "case",
        "default",
        "goto",
        "throw",
        "throws",
        "raise",
        "yield",
        "await",
        "async",
        "with",
        "as",
        "in",
        "of",
        "is",
        "not",
        "and",
        "or",
        "true",
        "false",
        "null",
        "none",
        "nil",
        "undefined",
        "void",
        "self",
        "this",
        "super",
        "new",
        "delete",
        "typeof",
        "instanceof",
        "def",
        "function",
        "fn",
        "func",
        "lambda",
        "class",
        "struct",
        "enum",
        "interface",
        "trait",
        "impl",
        "type",
        "const",
        "let",
        "var",
        "val",
        "mut",
        "static",
        "public",
        "private",
        "protected",
        "internal",
        "final",
        "override",
        "abstract",
        "export",
        "from",
        "package",
        "module",
        "unsafe",
        "pub",
    ]
)


def words(text: str) -> list[str]:
    """The words of a line that are not keywords."""
    return [w for w in _TOKEN.findall(text) if w.lower() not in KEYWORDS]


@lru_cache(maxsize=1 << 16)
def _informative(text: str, chars: int, enough: int) -> bool:
    if len(text) < chars or sum(map(str.isalnum, text)) < chars // 2:
        return False
    found = 0
    for word in _TOKEN.findall(text):
        if word.lower() not in KEYWORDS:
            found += 1
            if found >= enough:
                return True
    return False


class InformativeLine(BaseRule):
    id, name, family = "L1", "informative-line", "lines"
    summary = "A line counts when it has `chars` characters, half of them letters or digits, and `words` non-keywords."
    options = (
        Option("chars", 8, "characters a normalised line needs (`return x`, `i += 1` say too little)", whole=True),
        Option("words", 2, "words that are not keywords a line needs (`} else {`, `cleanUrl,`)", whole=True),
    )

    def judge(self, text: str) -> bool:
        return _informative(text, self.count("chars"), self.count("words"))


class EditedLine(BaseRule):
    id, name, family = "L2", "edited-line", "lines"
    summary = "An attempt's line of `words` words or more counts when the change adds it back with more words."
    options = (
        Option("words", 3, "words an attempt's line needs to be matched inside a longer one", whole=True),
        Option("work", 20000, "line pairs compared word by word per file name, at most", whole=True),
    )

    def judge(self, attempt_words: int) -> bool:
        return attempt_words >= self.count("words")


class Scaffolding(BaseRule):
    id, name, family = "L3", "scaffolding", "lines"
    summary = "A created file mostly made of lines its siblings share is scaffolding: those lines are trivial."
    options = (
        Option("siblings", 2, "same-named files in sibling folders that must hold a line", whole=True),
        Option("share", 0.6, "share of a created file's informative lines that must be such lines"),
    )

    def judge(self, copied: int, informative: int) -> bool:
        return copied > 0 and copied >= self.value("share") * informative


class CopiedFile(BaseRule):
    id, name, family = "L4", "copied-file", "lines"
    summary = "A created file mostly copying the file beside it named most like it copies: those lines are trivial."
    options = (Option("share", 0.6, "share of a created file's informative lines the file beside it holds (0: off)"),)

    def judge(self, copied: int, informative: int) -> bool:
        return copied > 0 and bool(self.value("share")) and copied >= self.value("share") * informative


class Generated(BaseRule):
    id, name, family = "L5", "generated", "lines"
    summary = "A file that says it is generated (`Code generated … DO NOT EDIT.`, `@generated`) has only trivial lines."
    options = (Option("head", 4096, "bytes at the start of a file looked in for the mark (0: off)", whole=True),)

    def judge(self, data: bytes) -> bool:
        return _GENERATED.search(data[: self.count("head")]) is not None


# A generated file's mark (go.dev/s/generatedcode, `@generated`), or "generated … do not edit" on one
# line: in a comment, a line opening as one does. A generator writes the same words in a string
# (`fmt.Fprintln(w, "// Code generated … DO NOT EDIT.")`), and a generator is the approach.
_GENERATED = re.compile(
    rb"^[ \t]*(?://|/\*|\*|#|--|;|%|<!--|\{\{/\*|\{#|\"\"\"|''')[^\n]*?"
    rb"(?:@generated\b|\bgenerated\b[^\n]*\bdo not (?:edit|modify)\b|\bdo not (?:edit|modify)\b[^\n]*\bgenerated\b)",
    re.IGNORECASE | re.MULTILINE,
)


# -- D: dead ends -----------------------------------------------------------------------------


class MatchRule(BaseRule):
    """Says that a change re-proposes an attempt (a qualifier) or that a match falls short (a limit)."""

    family = "dead ends"

    def judge(self, m: Match, book: RuleBook) -> bool:
        raise NotImplementedError

    def why(self, m: Match, book: RuleBook) -> str:
        return ""


def _said(m: Match) -> str:
    return f"it {m.again} of the attempt's {m.total} informative lines"


class Share(MatchRule):
    id, name = "D1", "share"
    summary = "A change re-adds `share` of an attempt's informative lines, and at least `lines` of them."
    options = (
        Option("share", 0.6, "share of the attempt's informative lines (the `dead_end_threshold` setting)"),
        Option("lines", 3, "lines at least (the `dead_end_min_lines` setting)", whole=True),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        return m.matched >= book.min_lines and m.matched / m.total >= book.threshold

    def why(self, m: Match, book: RuleBook) -> str:
        if m.matched < book.min_lines:
            return f"{_said(m)}: a match needs at least {book.min_lines}"
        piece, large, added = book.get(Piece), book.get(LargePiece), book.get(AddedAgain)
        return (
            f"{_said(m)}: a match needs {book.threshold:.0%} of them, or {added.value('of_added'):.0%} of the "
            f"{m.added_total} it added; or, as a part brought back, {piece.value('of_attempt'):.0%} of them making "
            f"{piece.value('of_change'):.0%} of the change's {m.own} own lines, or {large.count('lines')} lines and "
            f"{large.value('of_attempt'):.0%} of them making {large.value('of_change'):.0%}, mostly in its files"
        )


class WholeSmall(MatchRule):
    id, name = "D2", "whole-small"
    summary = "An attempt under D1's `lines` matches only when all of it comes back, in the files it touched."

    def judge(self, m: Match, book: RuleBook) -> bool:
        return m.matched == m.total and m.local == m.total

    def why(self, m: Match, book: RuleBook) -> str:
        return f"{_said(m)}: an attempt under {book.min_lines} lines must come back whole, in the files it touched"


class Recreated(MatchRule):
    id, name = "D3", "recreated-files"
    summary = "An attempt that only created files is re-proposed by a change that creates every one of them again."

    def judge(self, m: Match, book: RuleBook) -> bool:
        return bool(m.recreated)


class Piece(MatchRule):
    id, name = "D4", "piece"
    summary = "A change that is `of_change` a piece of an attempt, `of_attempt` of it or more, brings that piece back."
    options = (
        Option("of_change", 0.9, "share of the change's own informative lines the piece makes"),
        Option("of_attempt", 0.1, "share of the attempt's informative lines the piece is"),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        return (
            m.matched >= book.min_lines
            and m.matched >= self.value("of_change") * m.own
            and m.matched >= self.value("of_attempt") * m.total
        )


class LargePiece(MatchRule):
    id, name = "D5", "large-piece"
    summary = "A change bringing back a large piece of an attempt, mostly in files named like its own, re-proposes it."
    options = (
        Option("lines", 40, "informative lines the piece has at least", whole=True),
        Option("of_attempt", 0.3, "share of the attempt's informative lines the piece is"),
        Option("of_change", 0.4, "share of the change's own informative lines the piece makes"),
        Option("in_place", 0.5, "share of the piece that must be in files named like the attempt's (more than)"),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        return (
            m.matched >= book.min_lines
            and m.matched >= self.count("lines")
            and m.matched >= self.value("of_attempt") * m.total
            and m.matched >= self.value("of_change") * m.own
            and m.local > self.value("in_place") * m.matched
        )


class AddedAgain(MatchRule):
    id, name = "D6", "added-again"
    summary = "A change that adds again `of_added` of what an attempt added, mostly in its files, re-proposes it."
    options = (
        Option("of_added", 0.5, "share of the attempt's added informative lines added again"),
        Option("of_change", 0.25, "share of the change's own informative lines they make"),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        return (
            m.added >= book.min_lines
            and m.added >= self.value("of_added") * m.added_total
            and m.matched >= self.value("of_change") * m.own
            and 2 * m.local > m.matched
        )


class Resemblance(MatchRule):
    id, name = "D13", "resemblance"
    summary = "A change bringing back `score` of an attempt's lines and new names, weighed by rarity, re-proposes it."
    options = (
        Option("score", 1.0, "share of the attempt's evidence, by weight, brought back (1: off)"),
        Option("weight", 3, "weight of that evidence at least: as many lines or names seen nowhere else", whole=True),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        bar = self.value("score")
        return bar < 1 and m.score >= bar and m.weight >= self.value("weight") and m.matched >= book.min_lines


class KeptNames(MatchRule):
    id, name = "D14", "kept-names"
    summary = "A change saying again, in its files, `names` rare identifiers an attempt introduced re-proposes it."
    options = (
        Option("names", 0, "rare identifiers it introduced said again, at least (0: the rule is off)", whole=True),
        Option("rare", 0.7, "weight an identifier needs to be rare (1: said by no other change or file)"),
        Option("share", 0.5, "share of the weight of all the identifiers the attempt introduced"),
        Option("of_change", 0.03, "rare identifiers kept per informative line of the change, at least"),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        needed, total = self.count("names"), sum(m.names)
        rare = sum(1 for w in m.kept if w >= self.value("rare"))
        return (
            needed > 0
            and total > 0
            and rare >= needed
            and sum(m.kept) >= self.value("share") * total
            and rare >= self.value("of_change") * m.own
        )

    def why(self, m: Match, book: RuleBook) -> str:
        rare = sum(1 for w in m.kept if w >= self.value("rare"))
        return (
            f"it says again {len(m.kept)} of the {len(m.names)} identifiers the attempt introduced, {rare} of them "
            f"rare: a match by names needs {self.count('names')} rare ones and {self.value('share'):.0%} by weight"
        )


class WholeEdit(MatchRule):
    id, name = "D7", "whole-edit"
    summary = "An attempt with no informative line is re-proposed by its whole edit made again, alone."

    def judge(self, m: Match, book: RuleBook) -> bool:
        return m.edited > 0

    def why(self, m: Match, book: RuleBook) -> str:
        return "the attempt has no informative lines, and the change does not make its whole edit again, alone"


class SmallMatch(MatchRule):
    id, name = "D8", "small-match"
    summary = "A match of under `lines` lines must make `share` of the change's own lines."
    options = (
        Option("lines", 4, "matches of fewer lines than this are judged against the change's size", whole=True),
        Option("share", 0.25, "share of the change's own informative lines they must make"),
    )

    def judge(self, m: Match, book: RuleBook) -> bool:
        return not (m.matched < self.count("lines") and m.matched < self.value("share") * m.own)

    def why(self, m: Match, book: RuleBook) -> str:
        return (
            f"{_said(m)}: under {self.count('lines')} lines, they must make "
            f"{self.value('share'):.0%} of the change's {m.own} own lines"
        )


class Elsewhere(MatchRule):
    id, name = "D9", "elsewhere"
    summary = "A match mostly in files named unlike the attempt's must make `of_change` of the change."
    options = (Option("of_change", 0.1, "share of the change's own informative lines such a match must make"),)

    def judge(self, m: Match, book: RuleBook) -> bool:
        return not (2 * m.local < m.matched and m.matched < self.value("of_change") * m.own)

    def why(self, m: Match, book: RuleBook) -> str:
        return (
            f"{_said(m)}, {m.matched - m.local} of them in files named unlike its own: mostly elsewhere, "
            f"they must make {self.value('of_change'):.0%} of the change's {m.own} own lines"
        )


class RemovalsOnly(MatchRule):
    id, name = "D10", "removals-only"
    summary = "Removals alone re-propose only an attempt that added under D1's `lines`, from `of_change` of the change."
    options = (Option("of_change", 0.05, "share of the change's own informative lines the removals must make"),)

    def judge(self, m: Match, book: RuleBook) -> bool:
        return bool(m.added) or (m.added_total < book.min_lines and m.matched >= self.value("of_change") * m.own)

    def why(self, m: Match, book: RuleBook) -> str:
        return (
            f"{_said(m)}, none of those it added: removing again what it removed is judged only for an "
            f"attempt that added under {book.min_lines} lines, and only at {self.value('of_change'):.0%} of the change"
        )


class BackAlready(BaseRule):
    id, name, family = "D15", "back-already", "dead ends"
    summary = (
        "An attempt its files hold again (`share` of what it added, beyond their own) is back: copying it is no retry."
    )
    options = (
        Option(
            "share", 0.9, "share of the attempt's informative added lines its files hold again at the base (0: off)"
        ),
        Option("lines", 3, "added lines an attempt needs to be judged so", whole=True),
    )

    def judge(self, held: float | None) -> bool:
        """Is the attempt back already (`held`: the share its files hold again; None: too few lines)?"""
        share = self.value("share")
        return held is not None and share > 0 and held >= share


class LandedAgain(BaseRule):
    id, name, family = "D17", "landed-again", "dead ends"
    summary = "An attempt a landing brought back since its revert (`score` of it, in its files) is back: no retry."
    options = (
        Option("score", 0.85, "how much of the attempt a landing brought back, as D13 scores it (0: off)"),
        Option("lines", 1, "added lines an attempt needs to be judged so", whole=True),
    )

    def judge(self, brought: float) -> bool:
        """Did a landing bring the attempt back (`brought`: how much of it, as D13 scores a change)?"""
        score = self.value("score")
        return score > 0 and brought >= score


class DependencyMove(BaseRule):
    id, name, family = "D11", "dependency-move", "dead ends"
    summary = "A change moving a dependency into a range an attempt declared, or D1's `share` of its exact versions."

    def judge(self, exact: int, pinned: int, book: RuleBook) -> bool:
        """Do the exact versions moved again count (a declared range counts alone)?"""
        return exact > 0 and exact >= book.threshold * pinned


class Pattern(BaseRule):
    id, name, family = "D12", "pattern", "dead ends"
    summary = "A change that adds a line an attempt's compiled pattern (an ast-grep rule) matches."

    def judge(self, hits: int) -> bool:
        return hits > 0


# -- R: reverts, as the harvester reads them --------------------------------------------------


# The R rules' patterns are compiled on first use: only the harvester judges reverts, and a
# check's start-up (preflight, a hook) should not pay for them.
@cache
def _slip() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a slip in a subject, quoted text, landed by mistake in a body)"""
    slip = re.compile(
        r"\b(?:accident(?:al|ally)?|unintend(?:ed|edly)|unintentional(?:ly)?|by mistake|mistaken(?:ly)?"
        r"|unrelated)\b",
        re.IGNORECASE,
    )
    quoted = re.compile(r"\"[^\"]*\"|“[^”]*”|`[^`]*`")
    # "This was accidentally merged", "merged by mistake", "Landed by accident"; not "merged too early"
    # (not ready may well mean it failed), nor an adverb inside a description.
    landed_by_mistake = re.compile(
        r"(?:\b(?:was|were|got|been|is)[ \t]+|^[ \t]*|[.!;:,][ \t]+)"
        r"(?:accident(?:al)?ly|mistakenly|unintentionally|inadvertently|erroneously)[ \t]+(?:been[ \t]+)?"
        r"(?:merged|landed|pushed|committed)\b"
        r"|\b(?:merged|landed|pushed|committed)[ \t]+(?:accidentally|by[ \t]+accident|by[ \t]+mistake|mistakenly"
        r"|unintentionally|inadvertently|in[ \t]+error)\b",
        re.IGNORECASE | re.MULTILINE,
    )
    return slip, quoted, landed_by_mistake


class Slip(BaseRule):
    id, name, family = "R1", "slip", "reverts"
    summary = "A revert that calls what it reverts a slip (subject) or says it landed by mistake (body) tries nothing."

    def judge(self, subject: str, body: str) -> bool:
        slip, quoted, landed_by_mistake = _slip()
        return slip.search(quoted.sub("", subject)) is not None or landed_by_mistake.search(body) is not None


# A line that only sets a version: `"version": "0.18.9",`, `__version__ = "21.0"`, `"my-lib": "^0.18.9"`,
# `public const VERSION = '1.2.3';` (words before the key in an assignment only: prose says `version: 2`).
# A key naming a version, release or date may hold a build tool's placeholder, a date or nothing
# instead (`RELEASE_DATE = '@release_date@'`, `SOURCE_VERSION = ''`).
@cache
def _version_line() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a key set to a value, the same after words (an assignment), a version, a placeholder or date)"""
    value = r"[\"']?(?P<key>[@\w./-]+)[\"']?\s*[:=]\s*(?P<value>.*)"  # (its `;` or `,` cut by `_value`)
    return (
        re.compile(value),
        re.compile(r"(?:[\w$]+\s+)+" + value.replace("[:=]", "=")),  # (one pass: no lookahead per word)
        # atomic: fullmatched, `([-+.]?[0-9A-Za-z]+)*` would try every split of a long run (2^n)
        re.compile(r"(?:workspace:)?[\^~>=<]*v?((?>\d+(?:\.\d+)+(?:[-+.]?[0-9A-Za-z]+)*))"),
        re.compile(r"@[\w.-]+@|\$\{[\w.-]+\}|\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?)?|"),
    )


class Release(BaseRule):
    id, name, family = "R2", "release", "reverts"
    summary = "A revert of a release (own versions, their placeholders and dates set; changelogs aside) tries nothing."

    def judge(self, lines: Iterable[tuple[str, str]]) -> bool:
        """`lines`: (path, text) of the change's non-trivial lines outside changelogs and their
        fragments; every one must set a version. A VERSION file's line is the version it names, the
        project's own at the root, as is a man page's `.TH` header naming one. In a POM an element
        holding a value (`<version>1.2</version>`) reads as a key and its value, a dependency's as
        alike as the project's; only a release moves `<scm><tag>` from or to HEAD (Maven's default
        between releases)."""
        released = False
        setting, assignment, version, stamp = _version_line()
        for path, text in lines:
            line, own, name = text.strip(), True, path.rsplit("/", 1)[-1].lower()
            if name in ("version", "version.txt"):
                line, own = f"version: {line}", "/" not in path
            elif line.startswith(".TH ") and (header := version.search(line)):  # `.TH fzf 1 "Nov 2015" "fzf 0.10.1"`
                line = f"version: {header[1]}"
            elif name == "pom.xml":
                if _TAG.fullmatch(line):  # `<scm>`, `</scm>`: XML's braces
                    continue
                element = _ELEMENT.fullmatch(line)
                if element is not None and element["key"] == "tag":
                    released = released or element["value"] == "HEAD"
                    continue
                if element is not None:
                    line, own = f"{element['key']}: {element['value']}", False
            key = setting.fullmatch(line) or ("=" in line and assignment.fullmatch(line)) or None
            value, field = (_value(key["value"]), key["key"]) if key else ("?", "")
            if not (version.fullmatch(value) or (stamp.fullmatch(value) and _STAMPED.search(field))):
                return False
            released = released or (own and field.strip("_").lower() == "version") or "workspace:" in line
        return released


def _value(text: str) -> str:
    """A setting's value: a `;` or `,` ending it cut, then blanks and quotes (in code: a lazy `.*?` before
    `\\s*[,;]?`, fullmatched, tries the blanks again from each of its characters)."""
    return (text[:-1] if text.endswith((",", ";")) else text).rstrip().strip("\"'")


_ELEMENT = re.compile(r"<(?P<key>[\w.-]+)>(?P<value>[^<>]*)</(?P=key)>")
_STAMPED = re.compile(r"version|release|date", re.IGNORECASE)  # keys set to a placeholder, a date or nothing
_TAG = re.compile(r"</?[\w.-]+>")


class NotesOnly(BaseRule):
    id, name, family = "R5", "notes-only", "reverts"
    summary = "A revert of a change to release notes alone (changelogs, their fragments; no lockfile) tries nothing."

    def judge(self, notes: Iterable[bool]) -> bool:
        """`notes`: per file the change touched, whether it is release notes. None touched is no
        such change: what it tried is not known."""
        seen = list(notes)
        return bool(seen) and all(seen)


# A subject about a feature called revert: `Add a revert command`, "feat: support `git revert`",
# "Implement revert for transactions", "Fix the revert button".
_FEATURE_VERB = (
    r"(?:add(?:s|ed|ing)?|implement(?:s|ed|ing)?|introduc(?:e|es|ed|ing)|support(?:s|ed|ing)?|expose[sd]?|document(?:s|ed)?"
    r"|fix(?:es|ed)?|improve[sd]?|refactor(?:s|ed)?|test(?:s|ed)?|rename[sd]?|remove[sd]?|update[sd]?|handle[sd]?"
    r"|new)"
)
# A conventional-commit type before it, but not `revert:` (`revert: add a revert command` is a revert).
_FEATURE_PREFIX = r"(?:(?!revert\b)[A-Za-z][\w-]{0,30}(?:\([^)\n]{0,100}\))?!?:[ \t]+)?"


@cache
def _feature() -> re.Pattern[str]:
    return re.compile(
        rf"^{_FEATURE_PREFIX}{_FEATURE_VERB}\b[^\n]{{0,80}}?"
        r"[`'\"]?\b(?:git[ \t]+)?revert[`'\"]?[ \t]+(?:command|subcommand|cli|option|flag|button|action|api|endpoint|"
        r"feature|support|operation|method|function|hook|mode|tool)s?\b|"
        rf"^{_FEATURE_PREFIX}{_FEATURE_VERB}[ \t]+(?:an?[ \t]+|the[ \t]+)?"
        r"[`'\"](?:git[ \t]+)?revert[`'\"]",
        re.IGNORECASE,
    )


class RevertFeature(BaseRule):
    id, name, family = "R3", "revert-feature", "reverts"
    summary = "A subject naming a feature or command called revert (`Add a revert command`) is no revert."

    def judge(self, subject: str) -> bool:
        return _feature().search(subject) is not None


class Untouched(BaseRule):
    id, name, family = "R4", "untouched", "reverts"
    summary = (
        "A commit a revert names in its body only, none of whose files (by name, any extension) the revert's "
        "diff touches, was not reverted."
    )

    def judge(self, named: set[str], touched: set[str]) -> bool:
        """`named`, `touched`: the file names of each diff, without folder or extension (a file may
        have moved or changed format since)."""
        return bool(named) and bool(touched) and not named & touched


# -- E: relands, as the replay counts them ----------------------------------------------------


class ReplayRule(BaseRule):
    family = "relands"


class SameSubject(ReplayRule):
    id, name = "E1", "same-subject"
    summary = "A reverted subject landed again (first landing after the revert) is a reland, when not common before."
    options = (Option("words", 2, "words the subject needs (`fmt` names no change)", whole=True),)

    def judge(self, subject_words: int, earlier: int, resolved: bool) -> bool:
        """`earlier`: landings of the subject before the revert, not reverted themselves."""
        return subject_words >= self.count("words") and earlier <= (0 if resolved else 1)


class RevertFirst(ReplayRule):
    id, name = "E2", "revert-first"
    summary = "A reland counts after its revert's landing, or in it when that landing also brought what was reverted."

    def judge(self, first_landings: Iterable[int], landing: int) -> bool:
        return any(first <= landing for first in first_landings)


class RelandedBefore(ReplayRule):
    id, name = "E3", "relanded-before"
    summary = "A reland of what an earlier reland already brought back is skipped, not missed."

    def judge(self, retired_at: Iterable[int | None], landing: int) -> bool:
        ends = list(retired_at)
        return bool(ends) and all(end is not None and end < landing for end in ends)


class Brought(ReplayRule):
    id, name = "E4", "brought"
    summary = "A merged commit's reland counts only when the merge touches that commit's files (by name)."

    def judge(self, merge_names: set[str], commit_names: set[str]) -> bool:
        return not commit_names or bool(merge_names & commit_names)


class HadAlready(ReplayRule):
    id, name = "E5", "had-already"
    summary = "A landing relands nothing when the tree before it held `share` of what it relands (`lines` or more)."
    options = (
        Option("share", 0.9, "share of the attempts' informative added lines the tree held already"),
        Option("lines", 3, "added lines an attempt needs to be judged so", whole=True),
    )

    def judge(self, shares: list[float]) -> bool:
        return bool(shares) and min(shares) >= self.value("share")


class ExactReapply(ReplayRule):
    id, name = "E6", "exact-reapply"
    summary = "A landing that re-adds every informative line of what it relands is a positive, whatever the tree held."

    def judge(self, m: Match) -> bool:
        return m.total > 0 and m.matched == m.total


class RevertedRef(ReplayRule):
    id, name = "E7", "reverted-ref"
    summary = "`reapply #N` is a reland only when an earlier message speaks of reverting #N."

    def judge(self, mentioned: bool) -> bool:
        return mentioned


class Undone(ReplayRule):
    id, name = "E8", "undone-or-copied"
    summary = "A merged commit reverted in its own landing, or copying one landed before, announces nothing."

    def judge(self, undone: bool, copy: bool) -> bool:
        return not (undone or copy)


class SquashedCycle(ReplayRule):
    id, name = "E9", "squashed-cycle"
    summary = "A squash whose bullets hold both a change and its reland relands nothing that a check saw."

    def judge(self, bullet_keys: set[str], relanded_key: str) -> bool:
        return relanded_key in bullet_keys


RULES: tuple[type[BaseRule], ...] = (
    InformativeLine,
    EditedLine,
    Scaffolding,
    CopiedFile,
    Generated,
    Share,
    WholeSmall,
    Recreated,
    Piece,
    LargePiece,
    AddedAgain,
    WholeEdit,
    SmallMatch,
    Elsewhere,
    RemovalsOnly,
    DependencyMove,
    Pattern,
    Resemblance,
    KeptNames,
    BackAlready,
    LandedAgain,
    Slip,
    Release,
    RevertFeature,
    Untouched,
    NotesOnly,
    SameSubject,
    RevertFirst,
    RelandedBefore,
    Brought,
    HadAlready,
    ExactReapply,
    RevertedRef,
    Undone,
    SquashedCycle,
)
BY_ID = {r.id: r for r in RULES}
_BY_NAME = {r.name: r for r in RULES}
# Of a change that matches an attempt's lines: one of these says it re-proposes it (in order) ...
QUALIFIERS: tuple[type[MatchRule], ...] = (Share, Piece, LargePiece, AddedAgain, Resemblance)
# ... unless one of these says the match falls short (in order).
LIMITS: tuple[type[MatchRule], ...] = (SmallMatch, Elsewhere, RemovalsOnly)

R = TypeVar("R", bound=BaseRule)


class RuleBook:
    """Every rule, with the option values in force."""

    def __init__(self, overrides: Mapping[str, float] | None = None) -> None:
        given: dict[str, dict[str, float]] = {}
        for key, value in (overrides or {}).items():
            rule, _, option = key.partition(".")
            given.setdefault(rule, {})[option] = value
        self._rules: dict[type[BaseRule], BaseRule] = {cls: cls(given.get(cls.id)) for cls in RULES}

    def get(self, cls: type[R]) -> R:
        rule = self._rules[cls]
        assert isinstance(rule, cls)
        return rule

    def __iter__(self) -> Any:
        return iter(self._rules.values())

    @property
    def threshold(self) -> float:
        return self.get(Share).value("share")

    @property
    def min_lines(self) -> int:
        return self.get(Share).count("lines")


@lru_cache(maxsize=64)
def _book(items: frozenset[tuple[str, float]]) -> RuleBook:
    return RuleBook(dict(items))


def book(overrides: Mapping[str, float] | None = None) -> RuleBook:
    """The rulebook for these (`parse_overrides`d) values, built once per set of values."""
    return _book(frozenset((overrides or {}).items()))


DEFAULT = book()


@dataclass(frozen=True)
class Verdict:
    kind: str | None  # lines | files | edit, or None: no match
    rule: str  # the rule that decided (for no match: the one it falls short of)
    shortfall: str = ""


def judge_match(m: Match, rules: RuleBook) -> Verdict:
    """Does the change re-propose the attempt, by which rule; else which rule it falls short of."""
    files = rules.get(Recreated).judge(m, rules)
    if not m.total:
        if files:
            return Verdict("files", Recreated.id)
        edit = rules.get(WholeEdit)
        if edit.judge(m, rules):
            return Verdict("edit", WholeEdit.id)
        return Verdict(None, WholeEdit.id, edit.why(m, rules))
    if m.total < rules.min_lines:
        small = rules.get(WholeSmall)
        by: MatchRule | None = small if small.judge(m, rules) else None
        failed: MatchRule = small
    else:
        by = next((r for r in (rules.get(q) for q in QUALIFIERS) if r.judge(m, rules)), None)
        failed = rules.get(Share)
    if by is not None:
        limit = next((r for r in (rules.get(x) for x in LIMITS) if not r.judge(m, rules)), None)
        if limit is None:
            return Verdict("lines", by.id)
        failed = limit
    if files:
        return Verdict("files", Recreated.id)
    names = rules.get(KeptNames)
    if names.judge(m, rules):  # a rewritten reland: few lines again, its names in its places
        return Verdict("names", KeptNames.id)
    return Verdict(None, failed.id, failed.why(m, rules))


# -- settings -----------------------------------------------------------------------------------


def _rule(key: str) -> type[BaseRule]:
    found = BY_ID.get(key.upper()) or _BY_NAME.get(key.lower())
    if found is None:
        raise ValueError(f"unknown rule {key!r} (comind check --list-rules lists them)")
    return found


def _option(cls: type[BaseRule], name: str, value: object) -> tuple[str, float]:
    option = next((o for o in cls.options if o.name == name), None)
    if option is None:
        known = ", ".join(o.name for o in cls.options) or "none"
        raise ValueError(f"rule {cls.id} ({cls.name}) has no option {name!r} (its options: {known})")
    try:
        return f"{cls.id}.{name}", option.parse(value)
    except ValueError as exc:
        raise ValueError(f"{cls.id}.{name}: {exc} (got {value!r})") from None


def parse_overrides(value: object) -> dict[str, float]:
    """`{D5.lines: 50}`, `{D5: {lines: 50}}`, `{large-piece.lines: 50}` or, from the environment or a
    flag, `D5.lines=50,D1.share=0.5` -> `{"D5.lines": 50}`; ValueError naming what is wrong."""
    if isinstance(value, str):
        pairs: list[tuple[str, object]] = []
        for item in filter(None, (p.strip() for p in value.split(","))):
            key, sep, text = item.partition("=")
            if not sep:
                raise ValueError(f"{item!r}: expected RULE.OPTION=VALUE, e.g. D5.lines=50")
            pairs.append((key.strip(), text.strip()))
        value = dict(pairs)
    if not isinstance(value, Mapping):
        raise ValueError(f"must be a mapping of RULE.OPTION: value, e.g. {{D5.lines: 50}} (got {value!r})")
    out: dict[str, float] = {}
    for key, given in value.items():
        key = str(key)
        if isinstance(given, Mapping):
            cls = _rule(key)
            out.update(_option(cls, str(name), v) for name, v in given.items())
            continue
        rule, sep, name = key.rpartition(".")
        if not sep:
            raise ValueError(f"{key!r}: expected RULE.OPTION, e.g. D5.lines")
        option, number = _option(_rule(rule), name, given)
        out[option] = number
    return out


# -- the book, printed ----------------------------------------------------------------------------


def _options_text(cls: type[BaseRule], sep: str) -> str:
    return sep.join(f"{o.name}={o.default:g}" for o in cls.options)


def listing() -> str:
    """The rulebook as `comind check --list-rules` prints it."""
    lines = []
    for cls in RULES:
        options = f" [{_options_text(cls, ', ')}]" if cls.options else ""
        lines.append(f"{cls.id:<4} {cls.name:<18} {cls.summary}{options}")
    return "\n".join(lines) + "\n"


def markdown() -> str:
    """docs/rules.md: the rule table, generated from the registry (a test keeps them equal)."""
    out = [
        "# Rules",
        "",
        "<!-- generated from comind.rulebook (comind check --list-rules); a test fails when they differ -->",
        "",
        "Every rule by which comind tells a dead end, a revert and a reland. Set an option in `.comind.yml`",
        "as `dead_ends: {D5.lines: 50}` (or `COMIND_DEAD_ENDS=D5.lines=50`); each finding and each near miss",
        "of `comind eval replay` names its rule. What each rule was learnt from: benchmarks/replay-audit/README.md.",
        "",
    ]
    family = ""
    for cls in RULES:
        if cls.family != family:
            family = cls.family
            out += [f"## {family.capitalize()}", "", "| id | name | rule | options |", "| --- | --- | --- | --- |"]
        options = "<br>".join(f"`{o.name}` = {o.default:g}: {o.help}" for o in cls.options)
        out.append(f"| {cls.id} | {cls.name} | {cls.summary.replace('|', '/')} | {options} |")
        if cls is RULES[-1] or RULES[RULES.index(cls) + 1].family != family:
            out.append("")
    return "\n".join(out)


class Settings(Protocol):
    values: dict[str, Any]
    sources: dict[str, str]


_RANK = {"default": 0, "file": 1, "env": 2, "flag": 3}


def rules_of(config: Settings) -> RuleBook:
    """The rulebook a configuration sets: `dead_ends`, with `dead_end_threshold` and
    `dead_end_min_lines` as D1's `share` and `lines` (the one from the stronger source wins)."""
    overrides = dict(config.values.get("dead_ends") or {})
    ranked = _RANK.get(config.sources.get("dead_ends", "default"), 0)
    for setting, key in (("dead_end_threshold", "D1.share"), ("dead_end_min_lines", "D1.lines")):
        source = _RANK.get(config.sources.get(setting, "default"), 0)
        if setting in config.values and source and (key not in overrides or source > ranked):
            overrides[key] = config.values[setting]
    return book(overrides)
