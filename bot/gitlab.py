"""GitLab adapter: REST v4 through python-gitlab's ``http_request``.

Every call names its endpoint and goes through one request function with python-gitlab's own
retries off (``retry_transient_errors=False``, ``obey_rate_limit=False``: its rate-limit handling
sleeps whatever ``Retry-After`` says, ten times over) and
:func:`comind.bot.forge.call_with_retry` on top. python-gitlab's exceptions carry no response
headers, so a response hook on its session keeps the last error's headers (thread-local) for
``Retry-After`` and ``RateLimit-Reset``. Pagination follows ``X-Next-Page`` rather than the
``Link`` URL, which names the wrong host behind some proxies.

The CI job token (``CI_JOB_TOKEN``) cannot create merge-request notes; the bot needs a project or
group access token with the ``api`` scope in ``COMIND_GITLAB_TOKEN`` (or ``GITLAB_TOKEN``).
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from comind.bot.forge import (
    WRITE_PERMISSIONS,
    Failure,
    FileStatus,
    ForgeError,
    MergeRequest,
    MergeRequestFile,
    Note,
    NoToken,
    Permission,
    RetryPolicy,
    State,
    Thread,
    as_utc,
    call_with_retry,
    count_changes,
    parse_time,
    with_marker,
)

# GitLab access levels: 50 Owner, 40 Maintainer, 30 Developer (can push), 20 Reporter (can triage
# issues and merge requests), 15 Planner, 10 Guest, 5 Minimal access (sees no code).
_LEVELS: tuple[tuple[int, Permission], ...] = (
    (50, "admin"),
    (40, "maintain"),
    (30, "write"),
    (20, "triage"),
    (10, "read"),
)

# The Forge interface names reactions as GitHub does; GitLab names award emoji.
_EMOJI = {
    "+1": "thumbsup",
    "-1": "thumbsdown",
    "laugh": "laughing",
    "confused": "confused",
    "heart": "heart",
    "hooray": "tada",
    "rocket": "rocket",
    "eyes": "eyes",
}

_STATES = {"all": "all", "open": "opened", "merged": "merged", "closed": "closed"}


class GitLabForge:
    name = "gitlab"
    max_body = 1_000_000

    def __init__(
        self,
        project: str | int,
        token: str,
        *,
        url: str = "https://gitlab.com",
        bot_login: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 15.0,
    ) -> None:
        import gitlab  # imported only when a GitLab forge is built
        import requests

        if not token:
            raise NoToken(_NO_TOKEN)
        self.project = str(project)
        self.url = url.rstrip("/")
        self._project_path = f"/projects/{urllib.parse.quote(self.project, safe='')}"
        self._secrets = (token,)
        self._login = bot_login
        self._retry = retry or RetryPolicy()
        self._local = threading.local()
        session = requests.Session()
        session.hooks["response"].append(self._remember)
        self._gl = gitlab.Gitlab(
            self.url, private_token=token, timeout=timeout, retry_transient_errors=False, session=session
        )
        self._diff_refs: dict[int, dict[str, str]] = {}

    def __repr__(self) -> str:
        return f"GitLabForge({self.project!r}, url={self.url!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str], **config: Any) -> GitLabForge:
        """From GitLab CI's environment (``CI_API_V4_URL``, ``CI_PROJECT_ID``) and a token in
        ``COMIND_GITLAB_TOKEN`` or ``GITLAB_TOKEN``."""
        token = env.get("COMIND_GITLAB_TOKEN") or env.get("GITLAB_TOKEN") or ""
        if not token:
            raise NoToken(_NO_TOKEN)
        project = env.get("CI_PROJECT_ID", "")
        if not project:
            raise ForgeError("gitlab: CI_PROJECT_ID is not set")
        api = env.get("CI_API_V4_URL") or "https://gitlab.com/api/v4"
        config.setdefault("url", api.rstrip("/").removesuffix("/api/v4"))
        config.setdefault("bot_login", env.get("COMIND_BOT_LOGIN") or None)
        return cls(project, token, **config)

    # --- transport ------------------------------------------------------------------------------

    def _remember(self, response: Any, *args: Any, **kwargs: Any) -> None:
        if response.status_code >= 400:
            self._local.headers = dict(response.headers)

    def _classify(self, exc: Exception) -> Failure | None:
        import requests
        from gitlab.exceptions import GitlabError

        if isinstance(exc, GitlabError):
            headers = getattr(self._local, "headers", {})
            return Failure(exc.response_code, headers, str(exc.error_message))
        if isinstance(exc, requests.RequestException):
            return Failure(None, {}, type(exc).__name__)
        return None

    def _request(
        self, verb: str, path: str, query: dict[str, Any] | None = None, body: dict[str, Any] | None = None
    ) -> Any:
        """The response (a requests.Response) of one call, retried by our policy."""

        def call() -> Any:
            self._local.headers = {}
            return self._gl.http_request(
                verb, path, query_data=query, post_data=body, obey_rate_limit=False, retry_transient_errors=False
            )

        return call_with_retry(f"{verb} /api/v4{path}", "gitlab", self._retry, call, self._classify, self._secrets)

    def _json(
        self, verb: str, path: str, query: dict[str, Any] | None = None, body: dict[str, Any] | None = None
    ) -> Any:
        return _decode(self._request(verb, path, query, body), f"{verb} /api/v4{path}")

    def _paginate(self, path: str, query: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        page = 1
        while True:
            response = self._request("GET", path, {**(query or {}), "page": page, "per_page": 100})
            items = _decode(response, f"GET /api/v4{path}") or []
            yield from items
            following = response.headers.get("X-Next-Page", "")
            if not following or not items:
                return
            page = int(following)

    def _mr_path(self, number: int) -> str:
        return f"{self._project_path}/merge_requests/{number}"

    # --- reading --------------------------------------------------------------------------------

    def bot_login(self) -> str:
        if self._login is None:
            self._login = str(self._json("GET", "/user")["username"])
        return self._login

    def merge_request(self, number: int) -> MergeRequest:
        data = self._json("GET", self._mr_path(number))
        if data.get("diff_refs"):
            self._diff_refs[number] = data["diff_refs"]
        return _merge_request(data)

    def merge_requests(self, updated_after: datetime | None = None, state: str = "all") -> Iterator[MergeRequest]:
        query: dict[str, Any] = {"state": _STATES[state], "order_by": "updated_at", "sort": "desc"}
        if updated_after is not None:
            query["updated_after"] = as_utc(updated_after).isoformat().replace("+00:00", "Z")
        for data in self._paginate(f"{self._project_path}/merge_requests", query):
            yield _merge_request(data)

    def changed_files(self, number: int) -> Iterator[MergeRequestFile]:
        for data in self._paginate(f"{self._mr_path(number)}/diffs"):
            status: FileStatus = (
                "added"
                if data.get("new_file")
                else "removed"
                if data.get("deleted_file")
                else "renamed"
                if data.get("renamed_file")
                else "modified"
            )
            patch = data.get("diff") or None
            if data.get("too_large") or data.get("collapsed"):
                patch = None
            adds, dels = count_changes(patch)
            yield MergeRequestFile(
                path=str(data["new_path"]),
                old_path=str(data["old_path"]),
                status=status,
                patch=patch,
                additions=adds,
                deletions=dels,
            )

    def _discussions(self, number: int) -> tuple[str, list[dict[str, Any]]]:
        web_url = self.merge_request(number).web_url
        return web_url, list(self._paginate(f"{self._mr_path(number)}/discussions"))

    def notes(self, number: int) -> list[Note]:
        web_url, discussions = self._discussions(number)
        notes = [note for d in discussions for note in _discussion_notes(d, web_url)]
        notes.sort(key=lambda n: (n.created_at, int(n.id)))
        return notes

    def threads(self, number: int) -> list[Thread]:
        web_url, discussions = self._discussions(number)
        threads = []
        for discussion in discussions:
            if discussion.get("individual_note"):
                continue
            notes = _discussion_notes(discussion, web_url)
            if not notes:
                continue
            threads.append(
                Thread(
                    id=str(discussion["id"]),
                    resolved=bool(notes[0].resolved),
                    path=notes[0].path,
                    line=notes[0].line,
                    notes=tuple(notes),
                )
            )
        return threads

    def permission(self, login: str) -> Permission:
        users = self._json("GET", "/users", {"username": login}) or []
        match = [u for u in users if str(u.get("username", "")).lower() == login.lower()]
        if not match:
            return "none"
        try:
            member = self._json("GET", f"{self._project_path}/members/all/{match[0]['id']}")
        except ForgeError as exc:
            if exc.status == 404:
                return "none"
            raise
        level = int(member.get("access_level") or 0)
        return next((name for floor, name in _LEVELS if level >= floor), "none")

    def can_write(self, login: str) -> bool:
        return self.permission(login) in WRITE_PERMISSIONS

    def bot_inline_notes(self, number: int) -> list[Note]:
        me = self.bot_login()
        return [n for n in self.notes(number) if n.is_inline and n.author == me]

    # --- writing --------------------------------------------------------------------------------

    def _marked(self, number: int, marker: str) -> list[dict[str, Any]]:
        me = self.bot_login()
        return [
            n
            for n in self._paginate(f"{self._mr_path(number)}/notes", {"sort": "asc", "order_by": "created_at"})
            if not n.get("system") and marker in (n.get("body") or "") and (n.get("author") or {}).get("username") == me
        ]

    def upsert_summary(self, number: int, marker: str, body: str) -> str:
        body = with_marker(body, marker, self.max_body)
        found = self._marked(number, marker)
        if not found:
            return str(self._json("POST", f"{self._mr_path(number)}/notes", body={"body": body})["id"])
        keep, *duplicates = found
        if keep.get("body") != body:
            self._request("PUT", f"{self._mr_path(number)}/notes/{keep['id']}", body={"body": body})
        for extra in duplicates:
            self._request("DELETE", f"{self._mr_path(number)}/notes/{extra['id']}")
        return str(keep["id"])

    def delete_summary(self, number: int, marker: str) -> None:
        for note in self._marked(number, marker):
            self._request("DELETE", f"{self._mr_path(number)}/notes/{note['id']}")

    def _refs_for(self, number: int, commit_sha: str) -> dict[str, str]:
        """base/start/head SHAs of the diff version whose head is ``commit_sha``."""
        refs = self._diff_refs.get(number)
        if refs is None or refs.get("head_sha") != commit_sha:
            self.merge_request(number)
            refs = self._diff_refs.get(number)
        if refs is not None and refs.get("head_sha") == commit_sha:
            return refs
        for version in self._paginate(f"{self._mr_path(number)}/versions"):
            if version.get("head_commit_sha") == commit_sha:
                return {
                    "base_sha": version["base_commit_sha"],
                    "start_sha": version["start_commit_sha"],
                    "head_sha": commit_sha,
                }
        raise ForgeError(f"gitlab: commit {commit_sha} is not the head of any diff version of merge request !{number}")

    def post_inline(self, number: int, path: str, line: int, body: str, commit_sha: str) -> Note:
        refs = self._refs_for(number, commit_sha)
        position = {
            "position_type": "text",
            "base_sha": refs["base_sha"],
            "start_sha": refs["start_sha"],
            "head_sha": refs["head_sha"],
            "old_path": path,
            "new_path": path,
            "new_line": line,
        }
        discussion = self._json(
            "POST", f"{self._mr_path(number)}/discussions", body={"body": body[: self.max_body], "position": position}
        )
        web_url = self.merge_request(number).web_url
        return _discussion_notes(discussion, web_url)[0]

    def reply(self, number: int, note: Note, body: str) -> Note:
        if note.thread_id is None:
            raise ForgeError(f"gitlab: note {note.id} has no discussion id to reply in")
        data = self._json(
            "POST", f"{self._mr_path(number)}/discussions/{note.thread_id}/notes", body={"body": body[: self.max_body]}
        )
        first = note.in_reply_to or note.id
        position = data.get("position") or {}
        return Note(
            id=str(data["id"]),
            author=_username(data),
            body=str(data.get("body") or ""),
            created_at=parse_time(data.get("created_at")),
            updated_at=parse_time(data.get("updated_at")),
            url=_note_url(note.url, data["id"]),
            thread_id=note.thread_id,
            path=position.get("new_path") or note.path,
            line=position.get("new_line") or note.line,
            is_inline=note.is_inline,
            in_reply_to=first,
            resolved=data.get("resolved") if data.get("resolvable") else note.resolved,
        )

    def resolve_thread(self, number: int, thread_id: str) -> None:
        self._request("PUT", f"{self._mr_path(number)}/discussions/{thread_id}", body={"resolved": True})

    def add_reaction(self, number: int, note: Note, reaction: str) -> None:
        if reaction not in _EMOJI:
            raise ForgeError(f"gitlab: unknown reaction {reaction!r}; use one of {sorted(_EMOJI)}")
        self._request("POST", f"{self._mr_path(number)}/notes/{note.id}/award_emoji", body={"name": _EMOJI[reaction]})


_NO_TOKEN = (
    "gitlab: no token: set COMIND_GITLAB_TOKEN (or GITLAB_TOKEN) to a project access token "
    "with the api scope; the CI job token (CI_JOB_TOKEN) cannot post merge request notes"
)


def _decode(response: Any, describe: str) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise ForgeError(
            f"gitlab: {describe} answered {response.status_code} with a body that is not JSON (a proxy or login page?)",
            request=describe,
            status=response.status_code,
        ) from None


def _username(data: dict[str, Any]) -> str:
    return str((data.get("author") or {}).get("username") or "ghost")


def _note_url(mr_or_note_url: str, note_id: Any) -> str:
    return f"{mr_or_note_url.split('#', 1)[0]}#note_{note_id}"


def _discussion_notes(discussion: dict[str, Any], web_url: str) -> list[Note]:
    raw = [n for n in discussion.get("notes") or () if not n.get("system")]
    if not raw:
        return []
    resolvable = [n for n in raw if n.get("resolvable")]
    resolved = all(bool(n.get("resolved")) for n in resolvable) if resolvable else None
    first = str(raw[0]["id"])
    notes = []
    for data in raw:
        position = data.get("position") or {}
        inline = data.get("type") == "DiffNote" or bool(position.get("new_path") or position.get("old_path"))
        line = position.get("new_line") if position.get("new_line") is not None else position.get("old_line")
        notes.append(
            Note(
                id=str(data["id"]),
                author=_username(data),
                body=str(data.get("body") or ""),
                created_at=parse_time(data.get("created_at")),
                updated_at=parse_time(data.get("updated_at")),
                url=_note_url(web_url, data["id"]),
                thread_id=str(discussion["id"]),
                path=(position.get("new_path") or position.get("old_path")) if inline else None,
                line=int(line) if inline and line is not None else None,
                is_inline=inline,
                in_reply_to=first if str(data["id"]) != first else None,
                resolved=resolved,
            )
        )
    return notes


def _merge_request(data: dict[str, Any]) -> MergeRequest:
    states: dict[str, State] = {"merged": "merged", "closed": "closed"}
    state = states.get(str(data.get("state")), "open")  # opened, locked
    merged = state == "merged"
    refs = data.get("diff_refs") or {}
    labels = tuple(str(label["name"] if isinstance(label, dict) else label) for label in data.get("labels") or ())
    return MergeRequest(
        number=int(data["iid"]),
        title=str(data.get("title") or ""),
        description=str(data.get("description") or ""),
        state=state,
        merged=merged,
        labels=labels,
        author=_username(data),
        source_branch=str(data.get("source_branch") or ""),
        target_branch=str(data.get("target_branch") or ""),
        base_sha=refs.get("base_sha"),
        head_sha=str(data.get("sha") or refs.get("head_sha") or ""),
        start_sha=refs.get("start_sha"),
        merge_commit_sha=(data.get("merge_commit_sha") or data.get("squash_commit_sha")) if merged else None,
        web_url=str(data.get("web_url") or ""),
        updated_at=parse_time(data.get("updated_at")),
    )
