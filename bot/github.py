"""GitHub adapter: REST through PyGithub's requester, review threads through GraphQL.

Why the requester and not PyGithub's objects: objects from list pages complete themselves with a
hidden GET when a missing attribute is read, and lists paginate lazily inside iteration. Calling
``requestJsonAndCheck`` per page keeps every request explicit, retried on its own and named in
errors. PyGithub still does authentication, URLs (GitHub Enterprise's ``/api/v3`` and
``/api/graphql``), JSON and the status-to-exception mapping.

PyGithub's own retry is off (``retry=None``: its ``GithubRetry`` ends in
``requests.exceptions.RetryError``); :func:`comind.bot.forge.call_with_retry` retries instead.
Its write throttling (0.25 s between requests, 1 s between writes, GitHub's advice against
secondary rate limits) stays on unless ``throttle=False`` (tests).

``GET /user`` answers 403 for the Actions ``GITHUB_TOKEN`` and for App installation tokens, and
guessing the login wrongly duplicates the summary on every run (danger-js#1031), so the bot login
is, in order: ``bot_login`` (``COMIND_BOT_LOGIN``), ``GET /user``, ``github-actions[bot]`` inside
GitHub Actions; otherwise a ForgeError asking for ``COMIND_BOT_LOGIN``.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, cast

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
    parse_time,
    with_marker,
)

log = logging.getLogger(__name__)

ACTIONS_LOGIN = "github-actions[bot]"
PERMISSIONS: tuple[Permission, ...] = ("admin", "maintain", "write", "triage", "read", "none")

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')
_STATUS: dict[str, FileStatus] = {
    "added": "added",
    "removed": "removed",
    "modified": "modified",
    "renamed": "renamed",
    "copied": "added",
    "changed": "modified",
    "unchanged": "modified",
}

_THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes { id isResolved isOutdated path line originalLine comments(first: 1) { nodes { databaseId } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""

# GitHub REST reaction contents; the Forge interface uses the same names.
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


class GitHubForge:
    name = "github"
    max_body = 65_536

    def __init__(
        self,
        repository: str,
        token: str,
        *,
        api_url: str = "https://api.github.com",
        bot_login: str | None = None,
        fallback_login: str | None = None,
        retry: RetryPolicy | None = None,
        throttle: bool = True,
        timeout: float = 15.0,
    ) -> None:
        import github  # PyGithub takes ~0.5 s to import: only when a GitHub forge is built

        owner, _, repo = repository.partition("/")
        if not owner or not repo or "/" in repo:
            raise ForgeError(f"github: repository must be OWNER/NAME, not {repository!r}")
        if not token:
            raise ForgeError("github: no token (set GITHUB_TOKEN)")
        self.repository = repository
        self.api_url = api_url.rstrip("/")
        self._prefix = urllib.parse.urlsplit(self.api_url).path
        self._repo_path = f"/repos/{urllib.parse.quote(owner)}/{urllib.parse.quote(repo)}"
        self._owner, self._name = owner, repo
        self._secrets = (token,)
        self._login = bot_login
        self._fallback_login = fallback_login
        self._retry = retry or RetryPolicy()
        throttling: dict[str, Any] = (
            {} if throttle else {"seconds_between_requests": None, "seconds_between_writes": None}
        )
        self._github = github.Github(
            base_url=self.api_url,
            auth=github.Auth.Token(token),
            retry=None,
            timeout=int(timeout),
            per_page=100,
            **throttling,
        )
        self._requester = self._github.requester

    def __repr__(self) -> str:
        return f"GitHubForge({self.repository!r}, api_url={self.api_url!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str], **config: Any) -> GitHubForge:
        """From GitHub Actions' environment (``GITHUB_TOKEN``, ``GITHUB_REPOSITORY``, ``GITHUB_API_URL``)."""
        token = env.get("COMIND_GITHUB_TOKEN") or env.get("GITHUB_TOKEN") or ""
        if not token:
            raise NoToken("github: no token: set GITHUB_TOKEN (with pull-requests: write) or COMIND_GITHUB_TOKEN")
        repository = env.get("GITHUB_REPOSITORY", "")
        if not repository:
            raise ForgeError("github: GITHUB_REPOSITORY is not set (OWNER/NAME)")
        config.setdefault("api_url", env.get("GITHUB_API_URL") or "https://api.github.com")
        config.setdefault("bot_login", env.get("COMIND_BOT_LOGIN") or None)
        if env.get("GITHUB_ACTIONS") == "true":
            config.setdefault("fallback_login", ACTIONS_LOGIN)
        return cls(repository, token, **config)

    # --- transport ------------------------------------------------------------------------------

    def _request(
        self, verb: str, path: str, params: dict[str, Any] | None = None, body: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        shown = urllib.parse.urlsplit(path).path
        if self._prefix and shown.startswith(self._prefix):  # GitHub Enterprise's /api/v3
            shown = shown[len(self._prefix) :]

        def call() -> tuple[dict[str, Any], Any]:
            return self._requester.requestJsonAndCheck(verb, path, parameters=params, input=body)

        return call_with_retry(f"{verb} {shown}", "github", self._retry, call, _classify, self._secrets)

    def _paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        url: str | None = path
        query: dict[str, Any] | None = {**(params or {}), "per_page": 100}
        while url is not None:
            headers, data = self._request("GET", url, query)
            yield from data or []
            found = _NEXT.search(str(headers.get("link", "")))
            url, query = (found.group(1), None) if found and data else (None, None)

    def _graphql(self, describe: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        def call() -> dict[str, Any]:
            return self._requester.graphql_query(query, variables)[1]

        return call_with_retry(f"POST /graphql ({describe})", "github", self._retry, call, _classify, self._secrets)

    # --- reading --------------------------------------------------------------------------------

    def bot_login(self) -> str:
        if self._login is None:
            try:
                self._login = str(self._request("GET", "/user")[1]["login"])
            except ForgeError as exc:
                if exc.status != 403 or not self._fallback_login:
                    raise ForgeError(
                        f"{exc} — cannot tell which login the bot comments under; set COMIND_BOT_LOGIN",
                        request=exc.request,
                        status=exc.status,
                    ) from None
                self._login = self._fallback_login
        return self._login

    def merge_request(self, number: int) -> MergeRequest:
        return _merge_request(self._request("GET", f"{self._repo_path}/pulls/{number}")[1])

    def merge_requests(self, updated_after: datetime | None = None, state: str = "all") -> Iterator[MergeRequest]:
        # The list API cannot filter by time, but it sorts: stop at the first older one.
        api_state = {"all": "all", "open": "open", "merged": "closed", "closed": "closed"}[state]
        after = as_utc(updated_after) if updated_after is not None else None
        params = {"state": api_state, "sort": "updated", "direction": "desc"}
        for data in self._paginate(f"{self._repo_path}/pulls", params):
            mr = _merge_request(data)
            if after is not None and mr.updated_at < after:
                return
            if state in ("all", mr.state):
                yield mr

    def changed_files(self, number: int) -> Iterator[MergeRequestFile]:
        count = 0
        for data in self._paginate(f"{self._repo_path}/pulls/{number}/files"):
            count += 1
            status = _STATUS.get(str(data.get("status")), "modified")
            path = str(data["filename"])
            yield MergeRequestFile(
                path=path,
                old_path=str(data.get("previous_filename") or path),
                status=status,
                patch=data.get("patch"),
                additions=int(data.get("additions", 0)),
                deletions=int(data.get("deletions", 0)),
            )
        if count >= 3000:
            log.warning(
                "github: pull request #%d lists %d files, GitHub's limit; files beyond it are not visible to the bot",
                number,
                count,
            )

    def _review_threads(self, number: int) -> list[dict[str, Any]]:
        threads: list[dict[str, Any]] = []
        after: str | None = None
        while True:
            data = self._graphql(
                "reviewThreads",
                _THREADS_QUERY,
                {"owner": self._owner, "name": self._name, "number": number, "after": after},
            )
            pull = ((data.get("data") or {}).get("repository") or {}).get("pullRequest")
            if pull is None:
                raise ForgeError(
                    f"github: pull request #{number} not found in {self.repository}",
                    request="POST /graphql (reviewThreads)",
                    status=404,
                )
            page = pull["reviewThreads"]
            threads.extend(page["nodes"])
            if not page["pageInfo"]["hasNextPage"]:
                return threads
            after = page["pageInfo"]["endCursor"]

    def _inline_notes(self, number: int, nodes: list[dict[str, Any]] | None = None) -> list[Note]:
        by_root: dict[int, dict[str, Any]] = {}
        for node in self._review_threads(number) if nodes is None else nodes:
            first = node["comments"]["nodes"]
            if first and first[0].get("databaseId") is not None:
                by_root[int(first[0]["databaseId"])] = node
        comments = list(self._paginate(f"{self._repo_path}/pulls/{number}/comments"))
        parent = {int(c["id"]): c.get("in_reply_to_id") for c in comments}
        notes = []
        for data in comments:
            # in_reply_to_id names the thread's first comment; walk up in case it names a reply
            root, seen = int(data["id"]), set()
            while parent.get(root) is not None and root not in seen:
                seen.add(root)
                root = int(parent[root])  # type: ignore[arg-type]
            thread = by_root.get(root)
            notes.append(
                _note(
                    data,
                    is_inline=True,
                    thread_id=thread["id"] if thread else None,
                    resolved=bool(thread["isResolved"]) if thread else None,
                )
            )
        return notes

    def notes(self, number: int) -> list[Note]:
        notes = [_note(c, is_inline=False) for c in self._paginate(f"{self._repo_path}/issues/{number}/comments")]
        for review in self._paginate(f"{self._repo_path}/pulls/{number}/reviews"):
            if review.get("body"):  # approvals and inline-only reviews carry no text
                notes.append(_note(review, is_inline=False))
        notes.extend(self._inline_notes(number))
        notes.sort(key=lambda n: (n.created_at, n.url))
        return notes

    def threads(self, number: int) -> list[Thread]:
        nodes = self._review_threads(number)
        inline = self._inline_notes(number, nodes)
        threads = []
        for node in nodes:
            members = tuple(n for n in inline if n.thread_id == node["id"])
            line = node.get("line") if node.get("line") is not None else node.get("originalLine")
            threads.append(
                Thread(
                    id=str(node["id"]),
                    resolved=bool(node["isResolved"]),
                    path=node.get("path"),
                    line=line,
                    notes=members,
                )
            )
        return threads

    def permission(self, login: str) -> Permission:
        path = f"{self._repo_path}/collaborators/{urllib.parse.quote(login)}/permission"
        try:
            data = self._request("GET", path)[1]
        except ForgeError as exc:
            if exc.status == 404:  # no such user, or not visible to the token
                return "none"
            raise
        # role_name names maintain/triage (and custom roles, which we map by their base permission)
        for field in ("role_name", "permission"):
            if data.get(field) in PERMISSIONS:
                return cast(Permission, data[field])
        return "none"

    def can_write(self, login: str) -> bool:
        return self.permission(login) in WRITE_PERMISSIONS

    def bot_inline_notes(self, number: int) -> list[Note]:
        me = self.bot_login()
        return [n for n in self._inline_notes(number) if n.author == me]

    # --- writing --------------------------------------------------------------------------------

    def _marked(self, number: int, marker: str) -> list[dict[str, Any]]:
        me = self.bot_login()
        return [
            c
            for c in self._paginate(f"{self._repo_path}/issues/{number}/comments")
            if marker in (c.get("body") or "") and (c.get("user") or {}).get("login") == me
        ]

    def upsert_summary(self, number: int, marker: str, body: str) -> str:
        body = with_marker(body, marker, self.max_body)
        found = self._marked(number, marker)
        if not found:
            path = f"{self._repo_path}/issues/{number}/comments"
            return str(self._request("POST", path, body={"body": body})[1]["id"])
        keep, *duplicates = found
        if keep.get("body") != body:
            self._request("PATCH", f"{self._repo_path}/issues/comments/{keep['id']}", body={"body": body})
        for extra in duplicates:
            self._request("DELETE", f"{self._repo_path}/issues/comments/{extra['id']}")
        return str(keep["id"])

    def delete_summary(self, number: int, marker: str) -> None:
        for comment in self._marked(number, marker):
            self._request("DELETE", f"{self._repo_path}/issues/comments/{comment['id']}")

    def post_inline(self, number: int, path: str, line: int, body: str, commit_sha: str) -> Note:
        data = self._request(
            "POST",
            f"{self._repo_path}/pulls/{number}/comments",
            body={"body": body[: self.max_body], "commit_id": commit_sha, "path": path, "line": line, "side": "RIGHT"},
        )[1]
        return _note(data, is_inline=True)

    def reply(self, number: int, note: Note, body: str) -> Note:
        body = body[: self.max_body]
        if note.is_inline:
            # replies to replies are not allowed: answer the thread's first comment
            root = note.in_reply_to or note.id
            data = self._request(
                "POST", f"{self._repo_path}/pulls/{number}/comments/{root}/replies", body={"body": body}
            )[1]
            return _note(data, is_inline=True, thread_id=note.thread_id, resolved=note.resolved)
        data = self._request("POST", f"{self._repo_path}/issues/{number}/comments", body={"body": body})[1]
        return _note(data, is_inline=False)

    def resolve_thread(self, number: int, thread_id: str) -> None:
        def call() -> None:
            self._requester.graphql_named_mutation(
                "resolveReviewThread", {"threadId": thread_id}, "thread { id isResolved }"
            )

        call_with_retry("POST /graphql (resolveReviewThread)", "github", self._retry, call, _classify, self._secrets)

    def add_reaction(self, number: int, note: Note, reaction: str) -> None:
        if reaction not in REACTIONS:
            raise ForgeError(f"github: unknown reaction {reaction!r}; use one of {sorted(REACTIONS)}")
        if note.is_inline:
            path = f"{self._repo_path}/pulls/comments/{note.id}/reactions"
        elif "#pullrequestreview-" in note.url:
            return  # review summaries take no reactions through the REST API
        else:
            path = f"{self._repo_path}/issues/comments/{note.id}/reactions"
        self._request("POST", path, body={"content": reaction})


def _classify(exc: Exception) -> Failure | None:
    import requests
    from github import GithubException

    if isinstance(exc, GithubException):
        data = exc.data
        message = str(data.get("message") or data) if isinstance(data, dict) else str(data or exc.message)
        if isinstance(data, dict) and data.get("errors"):
            message += f" {data['errors']}"
        return Failure(exc.status, dict(exc.headers or {}), message)
    if isinstance(exc, requests.RequestException):
        return Failure(None, {}, type(exc).__name__)
    return None


def _merge_request(data: dict[str, Any]) -> MergeRequest:
    merged = bool(data.get("merged")) or data.get("merged_at") is not None
    state: State = "open" if data.get("state") == "open" else "merged" if merged else "closed"
    return MergeRequest(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        description=str(data.get("body") or ""),
        state=state,
        merged=merged,
        labels=tuple(str(label["name"]) for label in data.get("labels") or ()),
        author=_login(data),
        source_branch=str(data["head"]["ref"]),
        target_branch=str(data["base"]["ref"]),
        base_sha=str(data["base"]["sha"]),
        head_sha=str(data["head"]["sha"]),
        start_sha=str(data["base"]["sha"]),
        # GitHub fills merge_commit_sha with a test merge while open: only trust it once merged
        merge_commit_sha=data.get("merge_commit_sha") if merged else None,
        web_url=str(data["html_url"]),
        updated_at=parse_time(data.get("updated_at")),
    )


def _login(data: dict[str, Any]) -> str:
    return str((data.get("user") or {}).get("login") or "ghost")  # deleted accounts show as ghost


def _note(data: dict[str, Any], *, is_inline: bool, thread_id: str | None = None, resolved: bool | None = None) -> Note:
    created = parse_time(data.get("created_at") or data.get("submitted_at"))
    line = data.get("line") if data.get("line") is not None else data.get("original_line")
    reply_to = data.get("in_reply_to_id")
    return Note(
        id=str(data["id"]),
        author=_login(data),
        body=str(data.get("body") or ""),
        created_at=created,
        updated_at=parse_time(data["updated_at"]) if data.get("updated_at") else created,
        url=str(data.get("html_url") or ""),
        thread_id=thread_id,
        path=data.get("path") if is_inline else None,
        line=int(line) if is_inline and line is not None else None,
        is_inline=is_inline,
        in_reply_to=str(reply_to) if reply_to is not None else None,
        resolved=resolved,
    )
