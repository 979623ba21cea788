"""One small interface for every forge the bot talks to (GitHub, GitLab).

Each forge is one module with a class implementing :class:`Forge`, registered by name in
``comind.bot.FORGES``. Callers see only the frozen dataclasses below, never library objects, so the
command handling, the report and the thread harvester are written once for every forge.

Identifiers are strings everywhere (GitHub's are integers, GitLab's discussion ids are hex).
Datetimes are timezone-aware UTC.

Retries: every request is retried on 5xx, connection errors and rate limits (429, or 403 with
``x-ratelimit-remaining: 0`` or ``Retry-After``) a bounded number of times (:class:`RetryPolicy`),
then fails with a :class:`ForgeError` naming the request and the status. Writes are retried too
(like octokit's retry plugin); a summary duplicated by a retried POST is healed by
``upsert_summary``, which keeps the oldest marked comment and deletes the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol, TypeVar

from comind.errors import ComindError

# The data shapes live in the core, so the harvester can read them without importing the bot.
from comind.mergerequests import (
    FileStatus,
    MergeRequest,
    MergeRequestFile,
    Note,
    State,
    Thread,
)

log = logging.getLogger(__name__)

Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]

WRITE_PERMISSIONS: frozenset[str] = frozenset({"admin", "maintain", "write"})


class ForgeError(ComindError):
    """A forge request failed for good: after the retries, or with a status not worth retrying.

    ``request`` is the method and path (``GET /repos/o/r/pulls/5``), never a token.
    """

    def __init__(self, message: str, *, request: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.request = request
        self.status = status


class NoToken(ForgeError):
    """The environment holds no token for the forge: the bot cannot read or write, and says what to set."""


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries: ``attempts`` tries in all, waiting ``backoff * 2**n`` seconds between them,
    or what the forge asks for (Retry-After, rate-limit reset) when that is at most ``max_wait``;
    a longer wait fails at once rather than stalling a CI job."""

    attempts: int = 3
    backoff: float = 1.0
    max_wait: float = 60.0


class Forge(Protocol):
    """What the bot needs from a forge. One instance is bound to one repository/project."""

    name: str
    max_body: int  # the longest comment body the forge accepts, in characters

    def bot_login(self) -> str:
        """The login the bot's comments appear under."""
        ...

    def merge_request(self, number: int) -> MergeRequest: ...

    def merge_requests(self, updated_after: datetime | None = None, state: str = "all") -> Iterator[MergeRequest]:
        """Merge requests updated at or after ``updated_after``, newest-updated first, page by page.

        ``state`` is "all", "open", "merged" or "closed". Inclusive bound: the caller sees the
        boundary merge request again and must treat records idempotently.
        """
        ...

    def changed_files(self, number: int) -> Iterator[MergeRequestFile]:
        """The files of the merge request, page by page (GitHub lists at most 3,000)."""
        ...

    def notes(self, number: int) -> list[Note]:
        """Every human-readable comment (general, review summaries, inline), oldest first."""
        ...

    def threads(self, number: int) -> list[Thread]:
        """Reviewable threads (GitHub review threads, GitLab non-individual discussions)."""
        ...

    def permission(self, login: str) -> Permission: ...

    def can_write(self, login: str) -> bool: ...

    def upsert_summary(self, number: int, marker: str, body: str) -> str:
        """Create or edit in place the bot's comment carrying ``marker``; returns its id."""
        ...

    def delete_summary(self, number: int, marker: str) -> None: ...

    def post_inline(self, number: int, path: str, line: int, body: str, commit_sha: str) -> Note:
        """Comment on a new-side diff line; a line outside the diff is a ForgeError (422/400)."""
        ...

    def reply(self, number: int, note: Note, body: str) -> Note: ...

    def resolve_thread(self, number: int, thread_id: str) -> None: ...

    def bot_inline_notes(self, number: int) -> list[Note]:
        """The bot's own inline comments (to find finding fingerprints)."""
        ...

    def add_reaction(self, number: int, note: Note, reaction: str) -> None:
        """React to a note: "+1", "-1", "eyes", "rocket", "heart", "hooray", "laugh", "confused"."""
        ...


# --- helpers shared by the forge modules -------------------------------------------------------

T = TypeVar("T")


def with_marker(body: str, marker: str, limit: int) -> str:
    """The body carrying the marker, cut to ``limit`` characters with a visible note."""
    if marker not in body:
        body = f"{marker}\n{body}"
    if len(body) <= limit:
        return body
    note = "\n\n… (truncated: the full report is in the job summary or artifact)"
    return body[: limit - len(note)] + note


def parse_time(value: str | None) -> datetime:
    if not value:
        return datetime.fromtimestamp(0, UTC)
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def as_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def count_changes(patch: str | None) -> tuple[int, int]:
    """(additions, deletions) of a hunk text."""
    if not patch:
        return 0, 0
    adds = dels = 0
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            adds += 1
        elif line.startswith("-") and not line.startswith("--- "):
            dels += 1
    return adds, dels


@dataclass(frozen=True)
class Failure:
    """What a forge module extracts from its library's exception to decide on a retry."""

    status: int | None  # None: no response (connection error, timeout)
    headers: Mapping[str, str]
    message: str


def retry_wait(failure: Failure, attempt: int, policy: RetryPolicy, now: float) -> float | None:
    """Seconds to wait before retrying after ``failure`` (the ``attempt``-th, from 0), or None when
    it is not transient. Only a wait the forge asks for can exceed ``policy.max_wait``."""
    headers = {k.lower(): v for k, v in failure.headers.items()}
    status = failure.status
    backoff = min(policy.max_wait, policy.backoff * 2.0**attempt)
    rate_limited = status == 429 or (
        status == 403
        and (
            headers.get("x-ratelimit-remaining") == "0"
            or "retry-after" in headers
            or "rate limit" in failure.message.lower()
        )
    )
    if rate_limited:
        if "retry-after" in headers:
            try:
                return max(0.0, float(headers["retry-after"]))
            except ValueError:
                pass
        for reset in ("x-ratelimit-reset", "ratelimit-reset"):
            if headers.get("x-ratelimit-remaining", "0") == "0" and headers.get(reset, "").isdigit():
                return max(0.0, int(headers[reset]) - now)
        if status == 403:  # GitHub's secondary limit without headers: "wait at least one minute"
            return max(60.0, backoff)
        return backoff
    if status is None or status >= 500:
        return backoff
    return None


def call_with_retry(
    describe: str,
    forge: str,
    policy: RetryPolicy,
    call: Callable[[], T],
    classify: Callable[[Exception], Failure | None],
    secrets: tuple[str, ...] = (),
) -> T:
    """Run ``call`` with the bounded retry policy; library errors become ForgeError.

    ``classify`` maps a library exception to a Failure, or None for exceptions that are not
    request failures (those propagate unchanged). ``secrets`` are scrubbed from messages.
    """
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            wait = retry_wait(failure, attempt, policy, time.time())
            attempt += 1
            what = f"HTTP {failure.status}" if failure.status is not None else "no response"
            detail = scrub(failure.message, secrets)
            if wait is not None and wait > policy.max_wait:
                raise ForgeError(
                    f"{forge}: {describe} was rate limited ({what}); the forge asks to wait "
                    f"{wait:.0f} s, more than the {policy.max_wait:.0f} s allowed: {detail}",
                    request=describe,
                    status=failure.status,
                ) from None
            if wait is None or attempt >= policy.attempts:
                tries = f" after {attempt} attempts" if wait is not None else ""
                raise ForgeError(
                    f"{forge}: {describe} failed{tries} ({what}): {detail}",
                    request=describe,
                    status=failure.status,
                ) from None
            log.info(
                "%s: %s answered %s; retry %d/%d in %.1f s", forge, describe, what, attempt, policy.attempts - 1, wait
            )
            if wait > 0:
                time.sleep(wait)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text[:500]


__all__ = [
    "WRITE_PERMISSIONS",
    "Failure",
    "FileStatus",
    "Forge",
    "ForgeError",
    "MergeRequest",
    "MergeRequestFile",
    "Note",
    "Permission",
    "RetryPolicy",
    "State",
    "Thread",
    "as_utc",
    "call_with_retry",
    "count_changes",
    "parse_time",
    "retry_wait",
    "scrub",
    "with_marker",
]
