"""Cleaning of text that people and agents will read: invisible controls out, secrets refused.

Records end up in review comments and in agents' context windows, so the text must not smuggle
invisible instructions (Unicode tag characters, bidi overrides) and must never carry credentials.
"""

from __future__ import annotations

import re
from functools import cache

# Unicode "tag" characters (U+E0000..U+E007F) render as nothing and can hide instructions;
# bidi embedding/override/isolate controls reorder what a reviewer sees (CVE-2021-42574).
# Patterns are kept as strings: `re` compiles and caches each on first use, so importing this
# module costs nothing on read-only paths.
_INVISIBLE = "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"

# Placeholders that look like assignments but hold no secret.
_PLACEHOLDER = r"(?i)^(?:<[^>]*>|\$\{?\w+\}?|\*+|x+|\.+|changeme|example|redacted|none|null|[\w.\[\]]+\(.*|[$%{].*)$"

_SECRETS: tuple[tuple[str, str], ...] = (
    ("an AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("an AWS secret access key", r"(?i:aws_?secret_?(?:access_?)?key)\W{0,4}[=:]\s*['\"]?[A-Za-z0-9/+=]{40}\b"),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("a GitLab token", r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct|agent|imt|ft|wt)-[A-Za-z0-9_\-]{20,}"),
    ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("a Slack webhook URL", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/\w+"),
    ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
)
_PASSWORD = r"(?i)\b(?:password|passwd|pwd|db_pass|secret_key|client_secret)\s*[:=]\s*(['\"]?)([^\s'\",;]{6,})\1"

# Phrasing aimed at an agent rather than a reader: flagged (shown as a mark), not refused.
_INSTRUCTION = (
    r"(?i)\b(?:ignore (?:all |any )?(?:previous|prior|above) (?:instructions|prompts)"
    r"|disregard (?:the |all )?(?:previous|prior|above)|you are now|system prompt"
    r"|do not tell the (?:user|reviewer))\b"
)


# Trailers naming people (a squash merge's body lists every co-author): a whole line, or, in text
# whose lines were joined, the key, the name and the <address>. Addresses elsewhere become <email>,
# except inside a URL (a mailing-list archive link), where the address is part of the link.
_PEOPLE_KEYS = r"(?:co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|cc)"
_PERSON_INLINE = re.compile(rf"(?i)(?<![\w-]){_PEOPLE_KEYS}[ \t]*:[ \t]*[^<>\n]{{0,200}}<[^<>\n@]+@[^<>\n]+>[ \t]*")
_PERSON_LINE = re.compile(rf"(?im)^[ \t]*{_PEOPLE_KEYS}[ \t]*:[^\n]*(?:\n|\Z)")
_EMAIL = re.compile(r"(?<![\w.+/-])<?[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+>?")


def redact_people(text: str) -> str:
    """Text copied from history without the people in it: person trailers (``Co-authored-by:``,
    ``Signed-off-by:`` …) dropped, other email addresses made ``<email>``. Records name people
    only as pseudonymous actors."""
    if "@" not in text and ":" not in text:
        return text
    return redact_emails(_PERSON_INLINE.sub("", _PERSON_LINE.sub("", text)))


def redact_emails(text: str) -> str:
    """Email addresses made ``<email>`` (except inside a URL)."""
    return _EMAIL.sub("<email>", text) if "@" in text else text


def strip_invisible(text: str) -> str:
    """Remove Unicode tag characters and bidi controls."""
    return re.sub(_INVISIBLE, "", text)


@cache
def _secret_scanner() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """One alternation of every token pattern (one pass per text), the password and placeholder."""
    any_secret = re.compile("|".join(f"(?P<s{i}>{p})" for i, (_, p) in enumerate(_SECRETS)))
    return any_secret, re.compile(_PASSWORD), re.compile(_PLACEHOLDER)


def find_secret(text: str) -> str | None:
    """Name the kind of secret the text carries, or None."""
    any_secret, password, placeholder = _secret_scanner()
    if match := any_secret.search(text):
        return _SECRETS[int(str(match.lastgroup)[1:])][0]
    for found in password.finditer(text):
        if not placeholder.match(found.group(2)):
            return "a password assignment"
    return None


@cache
def _instruction() -> re.Pattern[str]:
    return re.compile(_INSTRUCTION)


# A word every _INSTRUCTION phrase holds: most texts have none, and a casefolded substring test
# is ~50× cheaper than the case-insensitive search (which `status` runs on every record shown).
_INSTRUCTION_WORDS = ("ignore", "disregard", "you are now", "system prompt", "do not tell")
# The only letters `re` matches to an ASCII letter case-insensitively that casefold() does not
# turn into it (ſ and the Kelvin sign it does): İ and ı are an "i" to the search.
_DOTTED_I = {0x130: "i", 0x131: "i"}


def looks_like_instruction(text: str) -> bool:
    """True when the text addresses an agent ("ignore previous instructions" and the like)."""
    folded = text.lower() if text.isascii() else text.translate(_DOTTED_I).casefold()
    if not any(word in folded for word in _INSTRUCTION_WORDS):
        return False
    return bool(_instruction().search(text))
