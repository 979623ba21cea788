"""Cleaning of text that people and agents will read: invisible controls out, secrets redacted.

Records end up in review comments, terminals and agents' context windows, so the text must not
smuggle invisible instructions (Unicode tag characters, bidi overrides), must not drive a terminal
(escape sequences, C0/C1 controls) and must never carry credentials. Two entry points:
``clean_text`` for what is stored (at the boundary, when a record is made) and ``shown`` for what
is printed (defence in depth: a store written by an older version holds raw text).

Secrets are replaced by ``[redacted:<kind>]``, never dropped with what surrounds them. Each kind
is the rule id a maintained open-source secret-scanning ruleset gives it, with the prefixes and
lengths its rules describe (written here, not copied; the source is cited in docs/records.md). Keys
with no prefix (an AWS secret key, the body of a PEM block without its BEGIN line) are told by
an entropy test, as that ruleset's generic rule does. Invisible characters are removed
before anything is scanned, so a token split by a zero-width space or a soft hyphen is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

# Patterns are kept as strings, compiled on first use: importing this module costs nothing on
# read-only paths. Bidi controls reorder what a reviewer sees (CVE-2021-42574); tag characters
# (U+E0000..U+E007F) render as nothing and can hide instructions: both are format characters.

# Placeholders that look like assignments but hold no secret.
_PLACEHOLDER = r"(?i)^(?:<[^>]*>|\$\{?\w+\}?|\*+|x+|\.+|changeme|example|redacted|none|null|[\w.\[\]]+\(.*|[$%{].*)$"
# What an assignment in code reads from elsewhere: `process.env.API_KEY`, `settings.SECRET_KEY`.
_REFERENCE = r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+"

# Each secret kind is named by the ruleset's rule id that covers it (docs/records.md), so a
# marker ``[redacted:<id>]`` says what was there. Order matters: the first match wins.
_SECRETS: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,8192}?-----END [A-Z0-9 ]*-----)?",
    ),
    ("aws-access-token", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("github-pat", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("gitlab-pat", r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct|agent|imt|ft|wt)-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack-webhook-url", r"(?i:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}"),
    ("stripe-access-token", r"\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b"),
    ("gcp-api-key", r"\bAIza[\w-]{35}(?![\w-])"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("authorization-bearer", r"(?<=[Bb]earer )[A-Za-z0-9._~+/-]{20,}=*(?![A-Za-z0-9._~+/=-])"),
    # (a key may follow `=`: `KEY=<key>`; only `=` after it is padding, part of a longer string)
    ("aws-secret-key", r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
    ("high-entropy-string", r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{41,}={0,2}(?![A-Za-z0-9/+=])"),
)
# A URL's password, its user name possibly empty (`redis://:<password>@host`).
# (a password may hold an unescaped `@`: the host starts after the last one)
_URL_PASSWORD = r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^\s:/@]{0,100}:)([^\s/]{1,200})(@)(?=[^\s@/]{0,253}(?:[/\s]|$))"
# An assignment to a key named for a secret, also as the last word of a longer name (`DB_PASSWORD`,
# `spring.datasource.password`, `dbPassword`) or a quoted one (`"password": "…"`, `'token' => …`).
# `secret` alone is a word of prose ("the secret: keep it small"): only as a name (JWT_SECRET, "secret").
_SECRET_NAME = r"password|passwd|passphrase|pwd|db_pass|token|(?:api|private|secret|secret[_-]?access)[_-]?key"
_SECRET_NAME_CAMEL = r"Password|Passwd|Passphrase|Pwd|Secret|Token|(?:Api|Private|Secret|SecretAccess)Key"
_PASSWORD = (
    rf"(?:(?<![A-Za-z0-9])(?i:{_SECRET_NAME})|(?<=[_.\-\"'])(?i:secret)|(?<![A-Za-z0-9])SECRET"
    rf"|(?<=[a-z0-9])(?:{_SECRET_NAME_CAMEL}))"
    r"['\"]?\s*(?::=|=>|[:=])\s*(['\"]?)([^\s'\",;]{6,})\1"
)
# Unprefixed keys are told from identifiers and hex ids by their mix and their entropy (bits/char).
_ENTROPY_MIN = 4.2


def _entropy(text: str) -> float:
    import math
    from collections import Counter

    return -sum(n / len(text) * math.log2(n / len(text)) for n in Counter(text).values())


def _random_looking(token: str) -> bool:
    body = token.rstrip("=")
    return (
        any(c.isupper() for c in body)
        and any(c.islower() for c in body)
        and any(c.isdigit() for c in body)
        and _entropy(body) >= _ENTROPY_MIN
    )


# Phrasing aimed at an agent rather than a reader: flagged (shown as a mark), not refused.
_INSTRUCTION = (
    r"(?i)\b(?:(?:ignore|disregard|forget) (?:(?:all|any|the|your|these|those) )*"
    r"(?:(?:(?:previous|prior|above|earlier|preceding|system) )*(?:instructions|prompts)"  # an agent's words
    r"|(?:(?:previous|prior|above|earlier|preceding|system) )+(?:rules|guidelines|directions)"  # qualified
    r"|(?:rules|guidelines|directions|instructions) (?:above|before))"  # "disregard the rules above"
    r"|disregard (?:the |all )?(?:previous|prior|above)|you are now|system prompt|new instructions(?=\s*:)"
    r"|(?:ignore|disregard|forget) (?:all of )?(?:the (?:above|preceding|foregoing)(?!-)"  # "ignore the above and …"
    r"|everything (?:above|before|you (?:were|have been) told))"
    r"|override (?:your|all|the|any)(?: (?:previous|prior|system))* (?:instructions|rules|guidelines|prompts?)"
    r"|system\s*:\s*you (?:must|are|will|should)"
    r"|do not tell the (?:user|reviewer))\b"
)


# Trailers naming people (a squash merge's body lists every co-author): a whole line, or, in text
# whose lines were joined, the key, the name and the <address>. Addresses elsewhere become <email>,
# except inside a URL (a mailing-list archive link), where the address is part of the link.
_PEOPLE_KEYS = r"(?:co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by|cc)"
_PERSON_INLINE = re.compile(rf"(?i)(?<![\w-]){_PEOPLE_KEYS}[ \t]*:[ \t]*[^<>\n]{{0,200}}<[^<>\n@]+@[^<>\n]+>[ \t]*")
_PERSON_LINE = re.compile(rf"(?im)^[ \t]*{_PEOPLE_KEYS}[ \t]*:[^\n]*(?:\n|\Z)")
_EMAIL = re.compile(r"(?<![\w.+/-])<?[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?![\w.-]*:[\w~/])>?")
# A forge's link to a person's profile (a bot's `reverted on behalf of https://github.com/<user>`): one
# path segment on the forge's host, nothing after it; links into a repository keep their owner.
_PROFILE = re.compile(
    r"https?://(?:www\.)?(?:github\.com|gitlab\.com)/[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/?(?![\w/#?-]|\.\w)"
)


def each_string(value: Any, clean: Callable[[str], str]) -> Any:
    """`value` (JSON-shaped data) with `clean` applied to every string in it, recursively."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list | tuple):  # (a string or a number in it: no call of its own)
        return [
            clean(v) if isinstance(v, str) else each_string(v, clean) if isinstance(v, list | tuple | dict) else v
            for v in value
        ]
    if isinstance(value, dict):
        return {k: each_string(v, clean) for k, v in value.items()}
    return value


def redact_people(text: str) -> str:
    """Text copied from history without the people in it: person trailers (``Co-authored-by:``,
    ``Signed-off-by:`` …) dropped, other email addresses made ``<email>``, links to a forge profile
    ``<profile>``. Records name people only as pseudonymous actors."""
    if "@" not in text and ":" not in text:
        return text
    if "://" in text:
        text = _PROFILE.sub("<profile>", text)
    return redact_emails(_PERSON_INLINE.sub("", _PERSON_LINE.sub("", text)))


def redact_emails(text: str, mark: str = "<email>") -> str:
    """Email addresses made ``<email>`` (or `mark`), except inside a URL."""
    return _EMAIL.sub(mark, text) if "@" in text else text


# Terminal escapes (CSI, OSC 8 links and window titles ended by BEL or ST, other ESC pairs), then
# any C0 control but tab and newline, DEL and C1: a commit message must not drive a reader's terminal.
_ESCAPES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]|[\x1b\x9d][\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROLS = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"
# Every format character (Unicode category Cf: zero-width, soft hyphen, word joiner, BOM, bidi
# controls, tags, invisible operators): they render as nothing, so they hide text and split tokens.
FORMAT_CHARACTERS = (
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
# Line breaks a one-line field shows as a space (a record's title, a listing's line).
_BREAKS = {ord(c): " " for c in "\t\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029"}


def strip_invisible(text: str) -> str:
    """Remove terminal escapes, C0/C1 controls (tab and newline stay) and every format character
    (tags, bidi controls, zero-width characters, soft hyphens)."""
    if text.isascii() and (text.isprintable() or _plain_lines(text)):
        return text
    return _strip(text)


def _plain_lines(text: str) -> bool:
    """ASCII text whose only unprintable characters are newlines and tabs."""
    return text.translate(_TABS_AND_NEWLINES).isprintable()


_TABS_AND_NEWLINES = {9: None, 10: None}


@cache
def _invisible() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(_ESCAPES), re.compile(f"{_CONTROLS}|{FORMAT_CHARACTERS}")


def _strip(text: str) -> str:
    escapes, invisible = _invisible()
    return invisible.sub("", escapes.sub("", text))


def shown(text: str, *, multiline: bool = False) -> str:
    """Text fit to print to a terminal, a CI log or a comment: `strip_invisible`, and on one line
    unless ``multiline`` (breaks and tabs become spaces). Every output path runs what it prints from
    a record through this: a store written by an older version may hold raw escapes."""
    if text.isascii() and text.isprintable():
        return text
    text = strip_invisible(text)
    return text if multiline else text.translate(_BREAKS)


# What a CI runner reads as a workflow command in a log line: `::name::` first on the line (GitHub,
# after the indent) and `##[name]` anywhere in it (GitHub's older form, still honoured).
_RUNNER_COMMAND = re.compile(r"^([ \t]*)::|##\[", re.MULTILINE)


def no_runner_commands(text: str) -> str:
    """What a CI runner would take for a workflow command (``::warning::``, ``##[add-mask]``) with a
    backslash: for the lines a command prints, never for data it keeps."""
    if "::" in text or "##[" in text:
        text = _RUNNER_COMMAND.sub(lambda m: "##\\[" if m.group(1) is None else m.group(1) + "\\::", text)
    return text


def printed(text: str, *, multiline: bool = False) -> str:
    """`shown`, with no workflow command (`no_runner_commands`): a line a command prints."""
    return no_runner_commands(shown(text, multiline=multiline))


@cache
def rules_digest() -> str:
    """A digest of the cleaning rules (this module's text): a cache cleaned under other rules is cleaned
    again (`Store.reclean_derived`). Any edit here changes it; cleaning twice is harmless."""
    from pathlib import Path

    from blake3 import blake3

    try:
        return str(blake3(Path(__file__).read_bytes()).hexdigest(length=16))
    except OSError:  # installed without its source: the version stands for the rules
        from comind._version import __version__

        return __version__


def clean_text(text: str) -> str:
    """Text fit to store and show: invisible characters out, then every secret redacted."""
    return redact_secrets(strip_invisible(text))


@cache
def _secret_scanner() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """One alternation of every token pattern (one pass per text), the URL and assignment
    passwords, the placeholder and the reference."""
    any_secret = re.compile("|".join(f"(?P<s{i}>{p})" for i, (_, p) in enumerate(_SECRETS)))
    url_password, password = re.compile(_URL_PASSWORD), re.compile(_PASSWORD)
    return any_secret, url_password, password, re.compile(_PLACEHOLDER), re.compile(_REFERENCE)


def _marker(kind: str) -> str:
    return f"[redacted:{kind}]"


# What each pattern above holds in its own letters (or, case-insensitively, the assignment's keys):
# plain ASCII text holding none of them carries no secret, and most lines of code hold none.
_SECRET_WORDS: tuple[str, ...] = ("-----BEGIN", "A3T", "AKIA", "ASIA", "ABIA", "ACCA", "github_pat_", "xox")
_SECRET_WORDS += ("hooks.slack.com", "k_live_", "k_test_", "k_prod_", "AIza", "eyJ", "earer ", "://")
_SECRET_KEYS: tuple[str, ...] = ("password", "passwd", "passphrase", "pwd", "db_pass", "secret", "token")
_SECRET_KEYS += ("api_key", "api-key", "apikey", "private_key", "private-key", "privatekey")


@cache
def _secret_shapes() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9/+]{40}|gh[pousr]_|gl[a-z]{2,5}-")


def _may_hold_secret(text: str) -> bool:
    if not text.isascii() or any(word in text for word in _SECRET_WORDS):
        return True
    low = text.lower()
    return any(key in low for key in _SECRET_KEYS) or _secret_shapes().search(text) is not None


# Keys told only by their shape and entropy, with no prefix of their own.
_KEYLESS = ("aws-secret-key", "high-entropy-string")


def redact_secrets(text: str) -> str:
    """The text with each secret replaced by ``[redacted:<kind>]``; the rest is kept."""
    return _redacted(text, True)


def clean_path(path: str) -> str:
    """A path of the repository's tree fit to store: `clean_text` but for the keys told by their
    shape alone. `app/src/jvmTest/java/org/example2/tls/CertificateChainValidationTest` has the
    shape of a base64 key; a path the tree holds is no secret, and its own shape cannot tell it
    from a key written after a path (`api/v1/keys/<key>`) in free text."""
    return _redacted(strip_invisible(path), False)


@lru_cache(maxsize=1 << 16)  # a harvested line is checked where it is kept, cleaned, validated: once
def _redacted(text: str, keyless: bool) -> str:
    if not _may_hold_secret(text):
        return text
    any_secret, url_password, password, placeholder, reference = _secret_scanner()

    def token(match: re.Match[str]) -> str:
        kind = _SECRETS[int(str(match.lastgroup)[1:])][0]
        if kind in _KEYLESS and not (keyless and _random_looking(match.group())):
            return match.group()
        return _marker(kind)

    # Again until nothing changes: a match can hide the start of the next one (a token run
    # into another), which the redacted text exposes; each pass shortens the text.
    for _ in range(8):
        redacted = any_secret.sub(token, text)
        if redacted == text:
            break
        text = redacted
    text = url_password.sub(
        lambda m: m.group() if placeholder.match(m.group(2)) else m.group(1) + _marker("url-password") + m.group(3),
        text,
    )

    def assignment(match: re.Match[str]) -> str:
        value = match.group(2)
        if placeholder.match(value) or reference.fullmatch(value) or value.startswith("[redacted:"):
            return match.group()
        start, end = match.span(2)  # the value where it stands (`secret=secret`: not the key)
        return match.string[match.start() : start] + _marker("password") + match.string[end : match.end()]

    return password.sub(assignment, text)


def find_secret(text: str, *, path: bool = False) -> str | None:
    """Name the kind of secret the text carries (a path of the tree: as `clean_path` reads it), or None."""
    redacted = _redacted(text, not path)
    if redacted == text:
        return None
    found = re.search(r"\[redacted:([a-z0-9-]+)\]", redacted)
    return found.group(1) if found else "a secret"


@cache
def _instruction() -> re.Pattern[str]:
    return re.compile(_INSTRUCTION)


# A word every _INSTRUCTION phrase holds: most texts have none, and a casefolded substring test
# is ~50× cheaper than the case-insensitive search (which `status` runs on every record shown).
_INSTRUCTION_WORDS = (
    "ignore",
    "disregard",
    "forget",
    "you are now",
    "system prompt",
    "new instructions",
    "do not tell",
    "override",
    "system",
)
# The only letters `re` matches to an ASCII letter case-insensitively that casefold() does not
# turn into it (ſ and the Kelvin sign it does): İ and ı are an "i" to the search.
_DOTTED_I = {0x130: "i", 0x131: "i"}


def looks_like_instruction(text: str) -> bool:
    """True when the text addresses an agent ("ignore previous instructions" and the like)."""
    folded = text.lower() if text.isascii() else text.translate(_DOTTED_I).casefold()
    if not any(word in folded for word in _INSTRUCTION_WORDS):
        return False
    return bool(_instruction().search(text))
