"""A fake GitHub and a fake GitLab on 127.0.0.1, for tests that talk real HTTP.

Each fake is a ``ThreadingHTTPServer`` on port 0 with in-memory state that tests seed (pull/merge
requests, files, comments, discussions, collaborators, members, users, tokens) and inspect
afterwards (comments created and edited, threads resolved, the request log). Responses follow the
shapes of GitHub's REST and GraphQL documentation and of GitLab's REST v4 documentation; every URL
in a body or a ``Link`` header names the fake's own host and port (PyGithub follows absolute URLs
and asserts their host).

Fault injection: ``fake.fail(path, status=500, times=2)`` makes the next two requests to ``path``
answer 500 (``headers=`` adds e.g. ``Retry-After``). ``fake.count(path, method)`` counts requests.

Webhook payload builders (``github_*_event``, ``gitlab_*_hook``) shape GitHub's and GitLab's
webhook bodies from the same state.

Use from a test module (no conftest.py)::

    import fakeforge
    fake_github = pytest.fixture(fakeforge.fake_github)
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = Any
Response = tuple[int, Json, dict[str, str]]


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Json
    headers: dict[str, str]


@dataclass
class Fault:
    path: str
    method: str | None
    status: int
    remaining: int
    headers: dict[str, str]
    body: Json
    query: dict[str, str]


class HTTPError(Exception):
    def __init__(self, status: int, body: Json, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


@dataclass
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Callable[..., Response]


class FakeForge:
    """The HTTP plumbing shared by both fakes: routing, request log, faults, clock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.routes: list[Route] = []
        self._ids = itertools.count(1001)
        self.now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # no ~40 ms delayed-ACK wait per request
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                fake._serve(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()

    def __enter__(self) -> FakeForge:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- test helpers ---------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def tick(self) -> datetime:
        """A strictly increasing clock, so ordering by time is deterministic."""
        with self.lock:
            self.now += timedelta(seconds=1)
            return self.now

    def fail(
        self,
        path: str,
        status: int = 500,
        times: int = 1,
        *,
        method: str | None = None,
        headers: dict[str, str] | None = None,
        body: Json = None,
        query: dict[str, str] | None = None,
    ) -> None:
        """The next ``times`` requests to ``path`` (exact path; ``query`` items must match too)
        answer ``status`` with ``headers`` and a JSON ``body``."""
        with self.lock:
            self.faults.append(
                Fault(
                    path,
                    method,
                    status,
                    times,
                    headers or {},
                    body if body is not None else {"message": f"fault {status}"},
                    query or {},
                )
            )

    def count(self, path: str | None = None, method: str | None = None) -> int:
        with self.lock:
            return sum(
                1 for r in self.requests if (path is None or r.path == path) and (method is None or r.method == method)
            )

    def calls(self, method: str | None = None) -> list[str]:
        """``METHOD /path`` of every request, in order."""
        with self.lock:
            return [f"{r.method} {r.path}" for r in self.requests if method is None or r.method == method]

    # --- serving --------------------------------------------------------------------------------

    def route(self, method: str, pattern: str, handler: Callable[..., Response]) -> None:
        self.routes.append(Route(method, re.compile(pattern + r"\Z"), handler))

    def authenticate(self, headers: dict[str, str]) -> str | None:
        raise NotImplementedError

    def default_headers(self) -> dict[str, str]:
        return {}

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        url = urllib.parse.urlsplit(request.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = dict(urllib.parse.parse_qsl(raw.decode()))
        headers = {k.lower(): v for k, v in request.headers.items()}
        path = urllib.parse.unquote(url.path) if "%2F" not in url.path else url.path
        with self.lock:
            self.requests.append(Recorded(request.command, path, query, body, headers))
            fault = next(
                (
                    f
                    for f in self.faults
                    if f.remaining > 0
                    and f.path == path
                    and f.method in (None, request.command)
                    and all(query.get(k) == v for k, v in f.query.items())
                ),
                None,
            )
            if fault is not None:
                fault.remaining -= 1
        if fault is not None:
            status, payload, extra = fault.status, fault.body, dict(fault.headers)
        else:
            status, payload, extra = self._dispatch(request.command, path, query, body, headers)
        out = b"" if status == 204 or payload is None else json.dumps(payload).encode()
        request.send_response(status)
        for name, value in {**self.default_headers(), **extra}.items():
            request.send_header(name, value)
        if out:
            request.send_header("Content-Type", "application/json; charset=utf-8")
        request.send_header("Content-Length", str(len(out)))
        request.end_headers()
        request.wfile.write(out)

    def _dispatch(self, method: str, path: str, query: dict[str, str], body: Json, headers: dict[str, str]) -> Response:
        try:
            login = self.authenticate(headers)
            for route in self.routes:
                if route.method != method:
                    continue
                match = route.pattern.match(path)
                if match:
                    with self.lock:
                        return route.handler(*match.groups(), query=query, body=body or {}, login=login)
            raise HTTPError(404, self.not_found())
        except HTTPError as exc:
            return exc.status, exc.body, exc.headers

    def not_found(self) -> Json:
        return {"message": "Not Found"}


def _page_numbers(query: dict[str, str], default: int) -> tuple[int, int]:
    page = max(1, int(query.get("page") or 1))
    per_page = min(100, max(1, int(query.get("per_page") or default)))
    return page, per_page


def _link(base: str, path: str, query: dict[str, str], page: int) -> str:
    return f"{base}{path}?{urllib.parse.urlencode({**query, 'page': str(page)})}"


# =================================================================================================
# GitHub
# =================================================================================================


def _gh_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


_LEGACY = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none"}
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def right_side_lines(patch: str | None) -> set[int]:
    """New-side lines of a patch (added and context), as GitHub and GitLab accept comments on."""
    lines, new = set(), 0
    for text in (patch or "").splitlines():
        header = _HUNK.match(text)
        if header:
            new = int(header.group(1))
        elif text.startswith(("+", " ")) or text == "":
            lines.add(new)
            new += 1
    return lines


class FakeGitHub(FakeForge):
    """GitHub REST v3 + GraphQL for one repository ``owner/name``."""

    FILES_CAP = 3000

    def __init__(self, owner: str = "octo", name: str = "widgets") -> None:
        super().__init__()
        self.owner, self.name = owner, name
        self.full_name = f"{owner}/{name}"
        self.tokens: dict[str, str | None] = {}  # token -> login; None: an integration token
        self.users: dict[str, Json] = {}
        self.permissions: dict[str, str] = {}  # login -> role_name
        self.pulls: dict[int, dict[str, Any]] = {}
        self.files: dict[int, list[Json]] = {}
        self.issue_comments: dict[int, dict[str, Any]] = {}
        self.reviews: dict[int, dict[str, Any]] = {}
        self.review_comments: dict[int, dict[str, Any]] = {}
        self.threads: dict[str, dict[str, Any]] = {}  # GraphQL id -> {number, root, resolved}
        self.reactions: list[dict[str, Any]] = []
        self.deleted: list[int] = []
        self.graphql: list[Json] = []
        repo = rf"/repos/{re.escape(owner)}/{re.escape(name)}"
        r = self.route
        r("GET", r"/user", self._get_user)
        r("GET", repo, self._get_repo)
        r("GET", repo + r"/pulls", self._list_pulls)
        r("GET", repo + r"/pulls/(\d+)", self._get_pull)
        r("GET", repo + r"/pulls/(\d+)/files", self._list_files)
        r("GET", repo + r"/issues/(\d+)/comments", self._list_issue_comments)
        r("POST", repo + r"/issues/(\d+)/comments", self._create_issue_comment)
        r("PATCH", repo + r"/issues/comments/(\d+)", self._edit_issue_comment)
        r("DELETE", repo + r"/issues/comments/(\d+)", self._delete_issue_comment)
        r("GET", repo + r"/pulls/(\d+)/reviews", self._list_reviews)
        r("GET", repo + r"/pulls/(\d+)/comments", self._list_review_comments)
        r("POST", repo + r"/pulls/(\d+)/comments", self._create_review_comment)
        r("POST", repo + r"/pulls/(\d+)/comments/(\d+)/replies", self._reply_review_comment)
        r("GET", repo + r"/collaborators/([^/]+)/permission", self._permission)
        r("POST", repo + r"/issues/comments/(\d+)/reactions", self._react_issue_comment)
        r("POST", repo + r"/pulls/comments/(\d+)/reactions", self._react_review_comment)
        r("POST", r"/graphql", self._graphql)

    # --- seeding --------------------------------------------------------------------------------

    def add_token(self, token: str, login: str | None) -> None:
        """``login=None`` makes an Actions/App installation token (``GET /user`` answers 403)."""
        self.tokens[token] = login
        if login:
            self.user(login)

    def user(self, login: str, type: str | None = None) -> Json:
        if login not in self.users:
            uid = self.next_id()
            self.users[login] = {
                "login": login,
                "id": uid,
                "node_id": f"U_{uid}",
                "avatar_url": f"{self.base}/avatars/u/{uid}",
                "gravatar_id": "",
                "url": f"{self.base}/users/{login}",
                "html_url": f"{self.base}/{login}",
                "type": type or ("Bot" if login.endswith("[bot]") else "User"),
                "site_admin": False,
            }
        return self.users[login]

    def set_permission(self, login: str, role: str) -> None:
        self.user(login)
        self.permissions[login] = role

    def add_pull(
        self,
        number: int | None = None,
        *,
        title: str = "Change things",
        body: str = "",
        author: str = "alice",
        state: str = "open",
        merged: bool = False,
        labels: tuple[str, ...] = (),
        head_ref: str = "feature",
        base_ref: str = "main",
        head_sha: str = "a" * 40,
        base_sha: str = "b" * 40,
        updated_at: datetime | None = None,
    ) -> int:
        with self.lock:
            number = number or max(self.pulls, default=0) + 1
            self.user(author)
            moment = updated_at or self.tick()
            self.pulls[number] = {
                "number": number,
                "title": title,
                "body": body,
                "author": author,
                "state": state,
                "merged": merged,
                "labels": labels,
                "head_ref": head_ref,
                "base_ref": base_ref,
                "head_sha": head_sha,
                "base_sha": base_sha,
                "created_at": moment,
                "updated_at": moment,
                "merge_commit_sha": "c" * 40,
            }
            self.files.setdefault(number, [])
            return number

    def add_file(
        self,
        number: int,
        filename: str,
        *,
        status: str = "modified",
        patch: str | None = None,
        previous_filename: str | None = None,
    ) -> None:
        adds = sum(1 for x in (patch or "").splitlines() if x.startswith("+"))
        dels = sum(1 for x in (patch or "").splitlines() if x.startswith("-"))
        quoted = urllib.parse.quote(filename)
        item: dict[str, Any] = {
            "sha": hashlib.sha1(filename.encode()).hexdigest(),
            "filename": filename,
            "status": status,
            "additions": adds,
            "deletions": dels,
            "changes": adds + dels,
            "blob_url": f"{self.base}/{self.full_name}/blob/{'a' * 40}/{quoted}",
            "raw_url": f"{self.base}/{self.full_name}/raw/{'a' * 40}/{quoted}",
            "contents_url": f"{self.base}/repos/{self.full_name}/contents/{quoted}?ref={'a' * 40}",
        }
        if patch is not None:
            item["patch"] = patch
        if previous_filename is not None:
            item["previous_filename"] = previous_filename
        self.files[number].append(item)

    def add_issue_comment(self, number: int, user: str, body: str) -> int:
        with self.lock:
            self.user(user)
            cid, moment = self.next_id(), self.tick()
            self.issue_comments[cid] = {
                "id": cid,
                "number": number,
                "user": user,
                "body": body,
                "created_at": moment,
                "updated_at": moment,
                "edits": 0,
            }
            return cid

    def add_review(self, number: int, user: str, body: str, state: str = "COMMENTED") -> int:
        with self.lock:
            self.user(user)
            rid = self.next_id()
            self.reviews[rid] = {
                "id": rid,
                "number": number,
                "user": user,
                "body": body,
                "state": state,
                "submitted_at": self.tick(),
            }
            return rid

    def add_review_comment(
        self,
        number: int,
        user: str,
        body: str,
        path: str,
        line: int,
        in_reply_to: int | None = None,
        resolved: bool = False,
    ) -> int:
        with self.lock:
            self.user(user)
            cid, moment = self.next_id(), self.tick()
            root = None
            if in_reply_to is not None:
                parent = self.review_comments[in_reply_to]
                root = parent["in_reply_to"] or parent["id"]
                path, line = parent["path"], parent["line"]
            review = self.add_review(number, user, "")
            self.review_comments[cid] = {
                "id": cid,
                "number": number,
                "user": user,
                "body": body,
                "path": path,
                "line": line,
                "in_reply_to": root,
                "review": review,
                "commit_id": self.pulls[number]["head_sha"],
                "created_at": moment,
                "updated_at": moment,
            }
            if root is None:
                self.threads[f"PRRT_kwDO{cid}"] = {"number": number, "root": cid, "resolved": resolved}
            return cid

    def thread_of(self, comment_id: int) -> str:
        root = self.review_comments[comment_id]["in_reply_to"] or comment_id
        return next(tid for tid, t in self.threads.items() if t["root"] == root)

    # --- shapes ---------------------------------------------------------------------------------

    def default_headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            "X-RateLimit-Reset": "1714568400",
            "X-RateLimit-Resource": "core",
            "X-GitHub-Media-Type": "github.v3; format=json",
        }

    def not_found(self) -> Json:
        return {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}

    def authenticate(self, headers: dict[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() not in ("token", "bearer") or token not in self.tokens:
            raise HTTPError(
                401,
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"},
            )
        return self.tokens[token]

    def repo_json(self) -> Json:
        api = f"{self.base}/repos/{self.full_name}"
        return {
            "id": 1296269,
            "node_id": "R_kgDOAT5",
            "name": self.name,
            "full_name": self.full_name,
            "owner": self.user(self.owner),
            "private": False,
            "html_url": f"{self.base}/{self.full_name}",
            "description": "",
            "fork": False,
            "url": api,
            "pulls_url": api + "/pulls{/number}",
            "issues_url": api + "/issues{/number}",
            "default_branch": "main",
            "created_at": "2020-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "pushed_at": "2024-01-01T00:00:00Z",
            "visibility": "public",
        }

    def _ref(self, ref: str, sha: str) -> Json:
        return {
            "label": f"{self.owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self.user(self.owner),
            "repo": self.repo_json(),
        }

    def pull_json(self, number: int, full: bool = True) -> Json:
        p = self.pulls[number]
        api = f"{self.base}/repos/{self.full_name}"
        html = f"{self.base}/{self.full_name}/pull/{number}"
        merged_at = _gh_time(p["updated_at"]) if p["merged"] else None
        closed_at = _gh_time(p["updated_at"]) if p["state"] == "closed" else None
        data = {
            "url": f"{api}/pulls/{number}",
            "id": 1000000 + number,
            "node_id": f"PR_kwDO{number}",
            "html_url": html,
            "diff_url": html + ".diff",
            "patch_url": html + ".patch",
            "issue_url": f"{api}/issues/{number}",
            "commits_url": f"{api}/pulls/{number}/commits",
            "review_comments_url": f"{api}/pulls/{number}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "statuses_url": f"{api}/statuses/{p['head_sha']}",
            "number": number,
            "state": p["state"],
            "locked": False,
            "title": p["title"],
            "user": self.user(p["author"]),
            "body": p["body"] or None,
            "labels": [
                {
                    "id": 208045946 + i,
                    "node_id": f"LA_{i}",
                    "url": f"{api}/labels/{name}",
                    "name": name,
                    "description": "",
                    "color": "f29513",
                    "default": False,
                }
                for i, name in enumerate(p["labels"])
            ],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": _gh_time(p["created_at"]),
            "updated_at": _gh_time(p["updated_at"]),
            "closed_at": closed_at,
            "merged_at": merged_at,
            "merge_commit_sha": p["merge_commit_sha"],
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self._ref(p["head_ref"], p["head_sha"]),
            "base": self._ref(p["base_ref"], p["base_sha"]),
            "_links": {
                "self": {"href": f"{api}/pulls/{number}"},
                "html": {"href": html},
                "issue": {"href": f"{api}/issues/{number}"},
                "comments": {"href": f"{api}/issues/{number}/comments"},
                "review_comments": {"href": f"{api}/pulls/{number}/comments"},
                "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/pulls/{number}/commits"},
                "statuses": {"href": f"{api}/statuses/{p['head_sha']}"},
            },
            "author_association": "CONTRIBUTOR",
            "auto_merge": None,
            "draft": False,
        }
        if full:  # only "Get a pull request" carries these
            data.update(
                {
                    "merged": p["merged"],
                    "mergeable": True,
                    "rebaseable": True,
                    "mergeable_state": "clean",
                    "merged_by": self.user(self.owner) if p["merged"] else None,
                    "comments": sum(1 for c in self.issue_comments.values() if c["number"] == number),
                    "review_comments": sum(1 for c in self.review_comments.values() if c["number"] == number),
                    "maintainer_can_modify": False,
                    "commits": 1,
                    "additions": sum(f["additions"] for f in self.files[number]),
                    "deletions": sum(f["deletions"] for f in self.files[number]),
                    "changed_files": len(self.files[number]),
                }
            )
        return data

    def issue_comment_json(self, cid: int) -> Json:
        c = self.issue_comments[cid]
        api = f"{self.base}/repos/{self.full_name}"
        return {
            "id": cid,
            "node_id": f"IC_kwDO{cid}",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"{self.base}/{self.full_name}/pull/{c['number']}#issuecomment-{cid}",
            "body": c["body"],
            "user": self.user(c["user"]),
            "created_at": _gh_time(c["created_at"]),
            "updated_at": _gh_time(c["updated_at"]),
            "issue_url": f"{api}/issues/{c['number']}",
            "author_association": "MEMBER",
            "performed_via_github_app": None,
            "reactions": self._reactions_summary("issue", cid),
        }

    def review_json(self, rid: int) -> Json:
        r = self.reviews[rid]
        api = f"{self.base}/repos/{self.full_name}"
        html = f"{self.base}/{self.full_name}/pull/{r['number']}#pullrequestreview-{rid}"
        return {
            "id": rid,
            "node_id": f"PRR_kwDO{rid}",
            "user": self.user(r["user"]),
            "body": r["body"],
            "state": r["state"],
            "html_url": html,
            "pull_request_url": f"{api}/pulls/{r['number']}",
            "_links": {"html": {"href": html}, "pull_request": {"href": f"{api}/pulls/{r['number']}"}},
            "submitted_at": _gh_time(r["submitted_at"]),
            "commit_id": self.pulls[r["number"]]["head_sha"],
            "author_association": "MEMBER",
        }

    def review_comment_json(self, cid: int) -> Json:
        c = self.review_comments[cid]
        api = f"{self.base}/repos/{self.full_name}"
        html = f"{self.base}/{self.full_name}/pull/{c['number']}#discussion_r{cid}"
        data = {
            "url": f"{api}/pulls/comments/{cid}",
            "pull_request_review_id": c["review"],
            "id": cid,
            "node_id": f"PRRC_kwDO{cid}",
            "diff_hunk": "@@ -1,3 +1,4 @@",
            "path": c["path"],
            "position": 1,
            "original_position": 1,
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "user": self.user(c["user"]),
            "body": c["body"],
            "created_at": _gh_time(c["created_at"]),
            "updated_at": _gh_time(c["updated_at"]),
            "html_url": html,
            "pull_request_url": f"{api}/pulls/{c['number']}",
            "author_association": "MEMBER",
            "_links": {
                "self": {"href": f"{api}/pulls/comments/{cid}"},
                "html": {"href": html},
                "pull_request": {"href": f"{api}/pulls/{c['number']}"},
            },
            "start_line": None,
            "original_start_line": None,
            "start_side": None,
            "line": c["line"],
            "original_line": c["line"],
            "side": "RIGHT",
            "subject_type": "line",
            "reactions": self._reactions_summary("review", cid),
        }
        if c["in_reply_to"] is not None:
            data["in_reply_to_id"] = c["in_reply_to"]
        return data

    def _reactions_summary(self, kind: str, cid: int) -> Json:
        mine = [r for r in self.reactions if r["kind"] == kind and r["subject"] == cid]
        counts = {
            k: sum(1 for r in mine if r["content"] == k)
            for k in ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
        }
        return {
            "url": f"{self.base}/repos/{self.full_name}/issues/comments/{cid}/reactions",
            "total_count": len(mine),
            **counts,
        }

    def _paginated(self, path: str, query: dict[str, str], items: list[Json]) -> Response:
        page, per_page = _page_numbers(query, 30)
        last = max(1, -(-len(items) // per_page))
        links = []
        if page < last:
            links += [
                f'<{_link(self.base, path, query, page + 1)}>; rel="next"',
                f'<{_link(self.base, path, query, last)}>; rel="last"',
            ]
        if page > 1:
            links += [
                f'<{_link(self.base, path, query, page - 1)}>; rel="prev"',
                f'<{_link(self.base, path, query, 1)}>; rel="first"',
            ]
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, items[(page - 1) * per_page : page * per_page], headers

    def _pull(self, number: str) -> dict[str, Any]:
        if int(number) not in self.pulls:
            raise HTTPError(404, self.not_found())
        return self.pulls[int(number)]

    def _actor(self, login: str | None) -> str:
        if login is None:  # an installation token acts as the app's bot
            return "github-actions[bot]"
        return login

    # --- REST handlers --------------------------------------------------------------------------

    def _get_user(self, *, query: Json, body: Json, login: str | None) -> Response:
        if login is None:
            raise HTTPError(
                403,
                {
                    "message": "Resource not accessible by integration",
                    "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
                    "status": "403",
                },
            )
        return 200, {**self.user(login), "name": login.title(), "public_repos": 1}, {}

    def _get_repo(self, *, query: Json, body: Json, login: str | None) -> Response:
        return 200, self.repo_json(), {}

    def _list_pulls(self, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        state = query.get("state", "open")
        sort = query.get("sort", "created")
        direction = query.get("direction", "desc" if sort == "created" else "asc")
        pulls = [n for n, p in self.pulls.items() if state == "all" or p["state"] == state]
        key = "updated_at" if sort == "updated" else "created_at"
        pulls.sort(key=lambda n: (self.pulls[n][key], n), reverse=direction == "desc")
        path = f"/repos/{self.full_name}/pulls"
        return self._paginated(path, query, [self.pull_json(n, full=False) for n in pulls])

    def _get_pull(self, number: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._pull(number)
        return 200, self.pull_json(int(number)), {}

    def _list_files(self, number: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._pull(number)
        files = self.files[int(number)][: self.FILES_CAP]
        return self._paginated(f"/repos/{self.full_name}/pulls/{number}/files", query, files)

    def _list_issue_comments(self, number: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._pull(number)
        ids = sorted(c for c, v in self.issue_comments.items() if v["number"] == int(number))
        return self._paginated(
            f"/repos/{self.full_name}/issues/{number}/comments", query, [self.issue_comment_json(c) for c in ids]
        )

    def _create_issue_comment(self, number: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._pull(number)
        if not body.get("body"):
            raise HTTPError(
                422,
                {
                    "message": "Validation Failed",
                    "status": "422",
                    "errors": [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
                },
            )
        cid = self.add_issue_comment(int(number), self._actor(login), body["body"])
        return (
            201,
            self.issue_comment_json(cid),
            {"Location": f"{self.base}/repos/{self.full_name}/issues/comments/{cid}"},
        )

    def _edit_issue_comment(self, cid: str, *, query: Json, body: Json, login: str | None) -> Response:
        comment = self.issue_comments.get(int(cid))
        if comment is None:
            raise HTTPError(404, self.not_found())
        comment["body"] = body["body"]
        comment["updated_at"] = self.tick()
        comment["edits"] += 1
        return 200, self.issue_comment_json(int(cid)), {}

    def _delete_issue_comment(self, cid: str, *, query: Json, body: Json, login: str | None) -> Response:
        if self.issue_comments.pop(int(cid), None) is None:
            raise HTTPError(404, self.not_found())
        self.deleted.append(int(cid))
        return 204, None, {}

    def _list_reviews(self, number: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._pull(number)
        ids = sorted(r for r, v in self.reviews.items() if v["number"] == int(number))
        return self._paginated(
            f"/repos/{self.full_name}/pulls/{number}/reviews", query, [self.review_json(r) for r in ids]
        )

    def _list_review_comments(self, number: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._pull(number)
        ids = sorted(c for c, v in self.review_comments.items() if v["number"] == int(number))
        return self._paginated(
            f"/repos/{self.full_name}/pulls/{number}/comments", query, [self.review_comment_json(c) for c in ids]
        )

    def _create_review_comment(self, number: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._pull(number)
        if body.get("in_reply_to"):
            return self._reply_review_comment(number, str(body["in_reply_to"]), query=query, body=body, login=login)
        missing = [f for f in ("body", "commit_id", "path", "line") if f not in body]
        if missing:
            raise HTTPError(
                422,
                {
                    "message": "Validation Failed",
                    "status": "422",
                    "errors": [
                        {"resource": "PullRequestReviewComment", "code": "missing_field", "field": f} for f in missing
                    ],
                },
            )
        patch = next((f.get("patch") for f in self.files[int(number)] if f["filename"] == body["path"]), None)
        if body.get("side", "RIGHT") != "RIGHT" or int(body["line"]) not in right_side_lines(patch):
            raise HTTPError(
                422,
                {
                    "message": "Validation Failed",
                    "status": "422",
                    "documentation_url": "https://docs.github.com/rest/pulls/comments"
                    "#create-a-review-comment-for-a-pull-request",
                    "errors": [
                        {
                            "resource": "PullRequestReviewComment",
                            "code": "custom",
                            "field": "pull_request_review_thread.line",
                            "message": "pull_request_review_thread.line must be part of the diff",
                        }
                    ],
                },
            )
        cid = self.add_review_comment(int(number), self._actor(login), body["body"], body["path"], int(body["line"]))
        self.review_comments[cid]["commit_id"] = body["commit_id"]
        return 201, self.review_comment_json(cid), {}

    def _reply_review_comment(self, number: str, cid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._pull(number)
        parent = self.review_comments.get(int(cid))
        if parent is None or parent["number"] != int(number):
            raise HTTPError(404, self.not_found())
        new = self.add_review_comment(int(number), self._actor(login), body["body"], "", 0, in_reply_to=int(cid))
        return 201, self.review_comment_json(new), {}

    def _permission(self, user: str, *, query: Json, body: Json, login: str | None) -> Response:
        user = urllib.parse.unquote(user)
        if user not in self.users:
            raise HTTPError(404, self.not_found())
        role = self.permissions.get(user, "none")
        flags = {
            "admin": role == "admin",
            "maintain": role in ("admin", "maintain"),
            "push": role in ("admin", "maintain", "write"),
            "triage": role in ("admin", "maintain", "write", "triage"),
            "pull": role != "none",
        }
        return (
            200,
            {
                "permission": _LEGACY[role],
                "role_name": role,
                "user": {**self.user(user), "permissions": flags, "role_name": role},
            },
            {},
        )

    def _react(self, kind: str, cid: int, body: Json, login: str | None) -> Response:
        rid = self.next_id()
        reaction = {
            "id": rid,
            "node_id": f"REA_{rid}",
            "user": self.user(self._actor(login)),
            "content": body["content"],
            "created_at": _gh_time(self.tick()),
        }
        self.reactions.append({"kind": kind, "subject": cid, "content": body["content"]})
        return 201, reaction, {}

    def _react_issue_comment(self, cid: str, *, query: Json, body: Json, login: str | None) -> Response:
        if int(cid) not in self.issue_comments:
            raise HTTPError(404, self.not_found())
        return self._react("issue", int(cid), body, login)

    def _react_review_comment(self, cid: str, *, query: Json, body: Json, login: str | None) -> Response:
        if int(cid) not in self.review_comments:
            raise HTTPError(404, self.not_found())
        return self._react("review", int(cid), body, login)

    # --- GraphQL --------------------------------------------------------------------------------

    def _graphql(self, *, query: Json, body: Json, login: str | None) -> Response:
        text, variables = body.get("query", ""), body.get("variables") or {}
        self.graphql.append(body)
        if "resolveReviewThread" in text:
            tid = (variables.get("input") or {}).get("threadId")
            if tid not in self.threads:
                return (
                    200,
                    {
                        "data": {"resolveReviewThread": None},
                        "errors": [
                            {
                                "type": "NOT_FOUND",
                                "path": ["resolveReviewThread"],
                                "locations": [{"line": 1, "column": 58}],
                                "message": f"Could not resolve to a node with the global id of '{tid}'",
                            }
                        ],
                    },
                    {},
                )
            self.threads[tid]["resolved"] = True
            return 200, {"data": {"resolveReviewThread": {"thread": {"id": tid, "isResolved": True}}}}, {}
        if "reviewThreads" in text:
            return 200, self._review_threads(text, variables), {}
        return 200, {"errors": [{"message": "the fake GitHub does not serve this query"}]}, {}

    def _review_threads(self, text: str, variables: Json) -> Json:
        if (variables.get("owner"), variables.get("name")) != (self.owner, self.name):
            return {
                "data": {"repository": None},
                "errors": [
                    {
                        "type": "NOT_FOUND",
                        "path": ["repository"],
                        "message": "Could not resolve to a Repository with the name "
                        f"'{variables.get('owner')}/{variables.get('name')}'.",
                    }
                ],
            }
        number = int(variables.get("number", 0))
        if number not in self.pulls:
            return {
                "data": {"repository": {"pullRequest": None}},
                "errors": [
                    {
                        "type": "NOT_FOUND",
                        "path": ["repository", "pullRequest"],
                        "message": f"Could not resolve to a PullRequest with the number of {number}.",
                    }
                ],
            }
        size = int(re.search(r"reviewThreads\(first:\s*(\d+)", text).group(1))  # type: ignore[union-attr]
        found = re.search(r"comments\(first:\s*(\d+)", text)
        per_thread = int(found.group(1)) if found else 100
        tids = [t for t, v in sorted(self.threads.items(), key=lambda kv: kv[1]["root"]) if v["number"] == number]
        start = int(variables["after"]) if variables.get("after") else 0
        page = tids[start : start + size]
        nodes = []
        for tid in page:
            thread = self.threads[tid]
            root = self.review_comments[thread["root"]]
            members = sorted(
                c for c, v in self.review_comments.items() if c == thread["root"] or v["in_reply_to"] == thread["root"]
            )
            nodes.append(
                {
                    "id": tid,
                    "isResolved": thread["resolved"],
                    "isOutdated": False,
                    "path": root["path"],
                    "line": root["line"],
                    "originalLine": root["line"],
                    "comments": {"nodes": [{"databaseId": c} for c in members[:per_thread]]},
                }
            )
        end = start + len(page)
        return {
            "data": {
                "repository": {
                    "pullRequest": {
                        "reviewThreads": {
                            "nodes": nodes,
                            "pageInfo": {
                                "hasNextPage": end < len(tids),
                                "endCursor": str(end) if page else None,
                                "hasPreviousPage": start > 0,
                                "startCursor": str(start) if page else None,
                            },
                        }
                    }
                }
            }
        }

    # --- webhook payloads -----------------------------------------------------------------------

    def github_pull_request_event(self, number: int, action: str = "opened") -> Json:
        p = self.pulls[number]
        return {
            "action": action,
            "number": number,
            "pull_request": self.pull_json(number),
            "repository": self.repo_json(),
            "sender": self.user(p["author"]),
        }

    def github_issue_comment_event(self, comment_id: int, action: str = "created") -> Json:
        comment = self.issue_comments[comment_id]
        pull = self.pull_json(comment["number"])
        issue = {
            "url": pull["issue_url"],
            "repository_url": f"{self.base}/repos/{self.full_name}",
            "comments_url": pull["comments_url"],
            "html_url": pull["html_url"],
            "id": pull["id"],
            "node_id": f"I_kwDO{comment['number']}",
            "number": comment["number"],
            "title": pull["title"],
            "user": pull["user"],
            "labels": pull["labels"],
            "state": pull["state"],
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": pull["comments"],
            "created_at": pull["created_at"],
            "updated_at": pull["updated_at"],
            "closed_at": pull["closed_at"],
            "author_association": "CONTRIBUTOR",
            "body": pull["body"],
            "pull_request": {
                "url": pull["url"],
                "html_url": pull["html_url"],
                "diff_url": pull["diff_url"],
                "patch_url": pull["patch_url"],
                "merged_at": pull["merged_at"],
            },
        }
        return {
            "action": action,
            "issue": issue,
            "comment": self.issue_comment_json(comment_id),
            "repository": self.repo_json(),
            "sender": self.user(comment["user"]),
        }

    def github_review_comment_event(self, comment_id: int, action: str = "created") -> Json:
        comment = self.review_comments[comment_id]
        return {
            "action": action,
            "comment": self.review_comment_json(comment_id),
            "pull_request": self.pull_json(comment["number"], full=False),
            "repository": self.repo_json(),
            "sender": self.user(comment["user"]),
        }


def github_signature(secret: str, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` header value GitHub sends for ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# =================================================================================================
# GitLab
# =================================================================================================


def _gl_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class FakeGitLab(FakeForge):
    """GitLab REST v4 (under ``/api/v4``) for one project."""

    def __init__(self, project_id: int = 42, path: str = "group/widgets") -> None:
        super().__init__()
        self.project_id, self.path = project_id, path
        self.web_url = f"{self.base}/{path}"
        self.tokens: dict[str, str] = {}
        self.users: dict[str, Json] = {}
        self.members: dict[int, int] = {}  # user id -> access level
        self.mrs: dict[int, dict[str, Any]] = {}
        self.diffs: dict[int, list[Json]] = {}
        self.versions: dict[int, list[Json]] = {}
        self.discussions: dict[int, list[dict[str, Any]]] = {}
        self.awards: list[Json] = []
        self.deleted: list[int] = []
        self.edits: dict[int, int] = {}
        project = r"/api/v4/projects/([^/]+)"
        mr = project + r"/merge_requests/(\d+)"
        r = self.route
        r("GET", r"/api/v4/user", self._get_user)
        r("GET", r"/api/v4/users", self._list_users)
        r("GET", project, self._get_project)
        r("GET", project + r"/members/all/(\d+)", self._member)
        r("GET", project + r"/merge_requests", self._list_mrs)
        r("GET", mr, self._get_mr)
        r("GET", mr + r"/diffs", self._list_diffs)
        r("GET", mr + r"/versions", self._list_versions)
        r("GET", mr + r"/notes", self._list_notes)
        r("POST", mr + r"/notes", self._create_note)
        r("PUT", mr + r"/notes/(\d+)", self._edit_note)
        r("DELETE", mr + r"/notes/(\d+)", self._delete_note)
        r("POST", mr + r"/notes/(\d+)/award_emoji", self._award)
        r("GET", mr + r"/discussions", self._list_discussions)
        r("GET", mr + r"/discussions/([0-9a-f]+)", self._get_discussion)
        r("POST", mr + r"/discussions", self._create_discussion)
        r("POST", mr + r"/discussions/([0-9a-f]+)/notes", self._reply)
        r("PUT", mr + r"/discussions/([0-9a-f]+)", self._resolve)

    # --- seeding --------------------------------------------------------------------------------

    def user(self, username: str) -> Json:
        if username not in self.users:
            uid = self.next_id()
            self.users[username] = {
                "id": uid,
                "username": username,
                "name": username.replace("_", " ").title(),
                "state": "active",
                "locked": False,
                "avatar_url": f"{self.base}/uploads/user/avatar/{uid}.png",
                "web_url": f"{self.base}/{username}",
            }
        return self.users[username]

    def add_token(self, token: str, username: str) -> None:
        self.tokens[token] = username
        self.user(username)

    def set_access(self, username: str, level: int) -> None:
        self.members[self.user(username)["id"]] = level

    def add_mr(
        self,
        iid: int | None = None,
        *,
        title: str = "Change things",
        description: str = "",
        author: str = "alice",
        state: str = "opened",
        labels: tuple[str, ...] = (),
        source_branch: str = "feature",
        target_branch: str = "main",
        head_sha: str = "a" * 40,
        base_sha: str = "b" * 40,
        start_sha: str = "d" * 40,
        merge_commit_sha: str | None = None,
        updated_at: datetime | None = None,
    ) -> int:
        with self.lock:
            iid = iid or max(self.mrs, default=0) + 1
            self.user(author)
            moment = updated_at or self.tick()
            self.mrs[iid] = {
                "iid": iid,
                "id": 5000 + iid,
                "title": title,
                "description": description,
                "author": author,
                "state": state,
                "labels": labels,
                "source_branch": source_branch,
                "target_branch": target_branch,
                "created_at": moment,
                "updated_at": moment,
                "merge_commit_sha": merge_commit_sha,
            }
            self.diffs.setdefault(iid, [])
            self.discussions.setdefault(iid, [])
            self.versions[iid] = []
            self.add_version(iid, head_sha, base_sha, start_sha)
            return iid

    def add_version(self, iid: int, head_sha: str, base_sha: str, start_sha: str) -> None:
        """A new diff version (a push); the newest is the MR's diff_refs."""
        vid = self.next_id()
        self.versions[iid].insert(
            0,
            {
                "id": vid,
                "head_commit_sha": head_sha,
                "base_commit_sha": base_sha,
                "start_commit_sha": start_sha,
                "created_at": _gl_time(self.tick()),
                "merge_request_id": self.mrs[iid]["id"],
                "state": "collected",
                "real_size": "1",
                "patch_id_sha": hashlib.sha1(head_sha.encode()).hexdigest(),
            },
        )

    def add_diff(
        self,
        iid: int,
        new_path: str,
        diff: str = "",
        *,
        old_path: str | None = None,
        new_file: bool = False,
        deleted_file: bool = False,
    ) -> None:
        old = old_path or new_path
        self.diffs[iid].append(
            {
                "old_path": old,
                "new_path": new_path,
                "a_mode": "0" if new_file else "100644",
                "b_mode": "0" if deleted_file else "100644",
                "diff": diff,
                "collapsed": False,
                "too_large": False,
                "new_file": new_file,
                "renamed_file": old != new_path,
                "deleted_file": deleted_file,
                "generated_file": False,
            }
        )

    def _note(
        self,
        iid: int,
        author: str,
        body: str,
        *,
        type: str | None,
        resolvable: bool,
        position: Json = None,
        system: bool = False,
    ) -> dict[str, Any]:
        nid, moment = self.next_id(), self.tick()
        return {
            "id": nid,
            "type": type,
            "body": body,
            "attachment": None,
            "author": self.user(author),
            "created_at": _gl_time(moment),
            "updated_at": _gl_time(moment),
            "system": system,
            "noteable_id": self.mrs[iid]["id"],
            "noteable_type": "MergeRequest",
            "project_id": self.project_id,
            "noteable_iid": iid,
            "resolvable": resolvable,
            "resolved": False if resolvable else None,
            "resolved_by": None,
            "resolved_at": None,
            "confidential": False,
            "internal": False,
            "imported": False,
            "imported_from": "none",
            "commands_changes": {},
            **({"position": position} if position else {}),
        }

    def add_note(self, iid: int, author: str, body: str, *, system: bool = False) -> int:
        """A general comment (an individual-note discussion)."""
        with self.lock:
            note = self._note(iid, author, body, type=None, resolvable=False, system=system)
            self._new_discussion(iid, note, individual=True)
            return int(note["id"])

    def add_thread(
        self, iid: int, author: str, body: str, *, path: str | None = None, line: int | None = None
    ) -> tuple[str, int]:
        """A resolvable discussion; inline (DiffNote) when ``path`` is given. Returns (discussion, note)."""
        with self.lock:
            position = None
            if path is not None:
                v = self.versions[iid][0]
                position = {
                    "base_sha": v["base_commit_sha"],
                    "start_sha": v["start_commit_sha"],
                    "head_sha": v["head_commit_sha"],
                    "old_path": path,
                    "new_path": path,
                    "position_type": "text",
                    "old_line": None,
                    "new_line": line,
                    "line_range": None,
                }
            note = self._note(
                iid, author, body, type="DiffNote" if position else "DiscussionNote", resolvable=True, position=position
            )
            discussion = self._new_discussion(iid, note, individual=False)
            return discussion["id"], int(note["id"])

    def add_reply(self, iid: int, discussion_id: str, author: str, body: str) -> int:
        with self.lock:
            discussion = self.discussion(iid, discussion_id)
            first = discussion["notes"][0]
            note = self._note(
                iid,
                author,
                body,
                type=first["type"] or "DiscussionNote",
                resolvable=bool(first["resolvable"]),
                position=first.get("position"),
            )
            if discussion["individual_note"]:
                discussion["individual_note"] = False
                first["type"] = "DiscussionNote"
            discussion["notes"].append(note)
            return int(note["id"])

    def _new_discussion(self, iid: int, note: Json, individual: bool) -> dict[str, Any]:
        did = hashlib.sha1(str(note["id"]).encode()).hexdigest()
        discussion = {"id": did, "individual_note": individual, "notes": [note]}
        self.discussions[iid].append(discussion)
        self.mrs[iid]["updated_at"] = self.now
        return discussion

    def discussion(self, iid: int, discussion_id: str) -> dict[str, Any]:
        for discussion in self.discussions.get(iid, []):
            if discussion["id"] == discussion_id:
                return discussion
        raise HTTPError(404, {"message": "404 Not found"})

    def all_notes(self, iid: int) -> list[dict[str, Any]]:
        return [n for d in self.discussions.get(iid, []) for n in d["notes"]]

    # --- shapes ---------------------------------------------------------------------------------

    def not_found(self) -> Json:
        return {"message": "404 Not Found"}

    def authenticate(self, headers: dict[str, str]) -> str | None:
        token = headers.get("private-token") or headers.get("authorization", "").removeprefix("Bearer ")
        if token not in self.tokens:
            raise HTTPError(401, {"message": "401 Unauthorized"})
        return self.tokens[token]

    def _check_project(self, pid: str) -> None:
        if urllib.parse.unquote(pid) not in (str(self.project_id), self.path):
            raise HTTPError(404, {"message": "404 Project Not Found"})

    def _mr(self, pid: str, iid: str) -> dict[str, Any]:
        self._check_project(pid)
        if int(iid) not in self.mrs:
            raise HTTPError(404, {"message": "404 Not found"})
        return self.mrs[int(iid)]

    def _user_basic(self, username: str) -> Json:
        u = self.user(username)
        return {k: u[k] for k in ("id", "username", "name", "state", "locked", "avatar_url", "web_url")}

    def mr_json(self, iid: int, full: bool = True) -> Json:
        m = self.mrs[iid]
        v = self.versions[iid][0]
        merged = m["state"] == "merged"
        data = {
            "id": m["id"],
            "iid": iid,
            "project_id": self.project_id,
            "title": m["title"],
            "description": m["description"],
            "state": m["state"],
            "created_at": _gl_time(m["created_at"]),
            "updated_at": _gl_time(m["updated_at"]),
            "merged_by": self._user_basic(m["author"]) if merged else None,
            "merge_user": self._user_basic(m["author"]) if merged else None,
            "merged_at": _gl_time(m["updated_at"]) if merged else None,
            "closed_by": None,
            "closed_at": _gl_time(m["updated_at"]) if m["state"] == "closed" else None,
            "target_branch": m["target_branch"],
            "source_branch": m["source_branch"],
            "user_notes_count": sum(1 for n in self.all_notes(iid) if not n["system"]),
            "upvotes": 0,
            "downvotes": 0,
            "author": self._user_basic(m["author"]),
            "assignees": [],
            "assignee": None,
            "reviewers": [],
            "source_project_id": self.project_id,
            "target_project_id": self.project_id,
            "labels": list(m["labels"]),
            "draft": False,
            "work_in_progress": False,
            "milestone": None,
            "merge_when_pipeline_succeeds": False,
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable",
            "sha": v["head_commit_sha"],
            "merge_commit_sha": m["merge_commit_sha"],
            "squash_commit_sha": None,
            "discussion_locked": None,
            "should_remove_source_branch": None,
            "force_remove_source_branch": False,
            "prepared_at": _gl_time(m["created_at"]),
            "reference": f"!{iid}",
            "references": {"short": f"!{iid}", "relative": f"!{iid}", "full": f"{self.path}!{iid}"},
            "web_url": f"{self.web_url}/-/merge_requests/{iid}",
            "time_stats": {
                "time_estimate": 0,
                "total_time_spent": 0,
                "human_time_estimate": None,
                "human_total_time_spent": None,
            },
            "squash": False,
            "squash_on_merge": False,
            "task_completion_status": {"count": 0, "completed_count": 0},
            "has_conflicts": False,
            "blocking_discussions_resolved": True,
        }
        if full:  # only "Get single MR" carries these
            data.update(
                {
                    "subscribed": False,
                    "changes_count": str(len(self.diffs[iid])),
                    "latest_build_started_at": None,
                    "latest_build_finished_at": None,
                    "first_deployed_to_production_at": None,
                    "pipeline": None,
                    "head_pipeline": None,
                    "diff_refs": {
                        "base_sha": v["base_commit_sha"],
                        "head_sha": v["head_commit_sha"],
                        "start_sha": v["start_commit_sha"],
                    },
                    "merge_error": None,
                    "first_contribution": False,
                    "user": {"can_merge": True},
                }
            )
        return data

    def _paginated(self, path: str, query: dict[str, str], items: list[Json]) -> Response:
        page, per_page = _page_numbers(query, 20)
        pages = max(1, -(-len(items) // per_page))
        headers = {
            "X-Page": str(page),
            "X-Per-Page": str(per_page),
            "X-Total": str(len(items)),
            "X-Total-Pages": str(pages),
            "X-Next-Page": str(page + 1) if page < pages else "",
            "X-Prev-Page": str(page - 1) if page > 1 else "",
        }
        links = []
        if page < pages:
            links.append(f'<{_link(self.base, path, query, page + 1)}>; rel="next"')
        if page > 1:
            links.append(f'<{_link(self.base, path, query, page - 1)}>; rel="prev"')
        links += [
            f'<{_link(self.base, path, query, 1)}>; rel="first"',
            f'<{_link(self.base, path, query, pages)}>; rel="last"',
        ]
        headers["Link"] = ", ".join(links)
        return 200, items[(page - 1) * per_page : page * per_page], headers

    # --- handlers -------------------------------------------------------------------------------

    def _get_user(self, *, query: Json, body: Json, login: str | None) -> Response:
        assert login is not None
        return 200, {**self.user(login), "bot": "bot" in login, "is_admin": False}, {}

    def _list_users(self, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        wanted = query.get("username", "").lower()
        found = [self._user_basic(u) for u in self.users if u.lower() == wanted]
        return self._paginated("/api/v4/users", query, found)

    def _get_project(self, pid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._check_project(pid)
        return (
            200,
            {
                "id": self.project_id,
                "path_with_namespace": self.path,
                "web_url": self.web_url,
                "name": self.path.rsplit("/", 1)[-1],
                "default_branch": "main",
            },
            {},
        )

    def _member(self, pid: str, uid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._check_project(pid)
        user = next((u for u in self.users.values() if u["id"] == int(uid)), None)
        if user is None or int(uid) not in self.members:
            raise HTTPError(404, {"message": "404 Not found"})
        return (
            200,
            {
                **user,
                "access_level": self.members[int(uid)],
                "created_at": "2024-01-01T00:00:00.000Z",
                "expires_at": None,
                "membership_state": "active",
            },
            {},
        )

    def _list_mrs(self, pid: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._check_project(pid)
        state = query.get("state", "all")
        order = query.get("order_by", "created_at")
        iids = [i for i, m in self.mrs.items() if state == "all" or m["state"] == state]
        if query.get("updated_after"):
            after = datetime.fromisoformat(query["updated_after"])
            iids = [i for i in iids if self.mrs[i]["updated_at"] >= after]
        key = "updated_at" if order == "updated_at" else "created_at"
        iids.sort(key=lambda i: (self.mrs[i][key], i), reverse=query.get("sort", "desc") == "desc")
        return self._paginated(
            f"/api/v4/projects/{pid}/merge_requests", query, [self.mr_json(i, full=False) for i in iids]
        )

    def _get_mr(self, pid: str, iid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        return 200, self.mr_json(int(iid)), {}

    def _list_diffs(self, pid: str, iid: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        return self._paginated(f"/api/v4/projects/{pid}/merge_requests/{iid}/diffs", query, self.diffs[int(iid)])

    def _list_versions(self, pid: str, iid: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        return self._paginated(f"/api/v4/projects/{pid}/merge_requests/{iid}/versions", query, self.versions[int(iid)])

    def _list_notes(self, pid: str, iid: str, *, query: dict[str, str], body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        notes = sorted(
            self.all_notes(int(iid)),
            key=lambda n: (n["created_at"], n["id"]),
            reverse=query.get("sort", "desc") == "desc",
        )
        return self._paginated(f"/api/v4/projects/{pid}/merge_requests/{iid}/notes", query, notes)

    def _create_note(self, pid: str, iid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        assert login is not None
        if not body.get("body"):
            raise HTTPError(400, {"message": '400 Bad request - Note {:note=>["can\'t be blank"]}'})
        nid = self.add_note(int(iid), login, body["body"])
        return 201, self._find_note(int(iid), nid), {}

    def _find_note(self, iid: int, nid: int) -> dict[str, Any]:
        for note in self.all_notes(iid):
            if note["id"] == nid:
                return note
        raise HTTPError(404, {"message": "404 Not found"})

    def _edit_note(self, pid: str, iid: str, nid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        note = self._find_note(int(iid), int(nid))
        if note["author"]["username"] != login:
            raise HTTPError(403, {"message": "403 Forbidden"})
        note["body"] = body.get("body", query.get("body"))
        note["updated_at"] = _gl_time(self.tick())
        self.edits[int(nid)] = self.edits.get(int(nid), 0) + 1
        return 200, note, {}

    def _delete_note(self, pid: str, iid: str, nid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        self._find_note(int(iid), int(nid))
        for discussion in list(self.discussions[int(iid)]):
            discussion["notes"] = [n for n in discussion["notes"] if n["id"] != int(nid)]
            if not discussion["notes"]:
                self.discussions[int(iid)].remove(discussion)
        self.deleted.append(int(nid))
        return 204, None, {}

    def _award(self, pid: str, iid: str, nid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        self._find_note(int(iid), int(nid))
        assert login is not None
        award = {
            "id": self.next_id(),
            "name": body["name"],
            "user": self._user_basic(login),
            "created_at": _gl_time(self.tick()),
            "updated_at": _gl_time(self.now),
            "awardable_id": int(nid),
            "awardable_type": "Note",
        }
        self.awards.append(award)
        return 201, award, {}

    def _list_discussions(
        self, pid: str, iid: str, *, query: dict[str, str], body: Json, login: str | None
    ) -> Response:
        self._mr(pid, iid)
        return self._paginated(
            f"/api/v4/projects/{pid}/merge_requests/{iid}/discussions", query, self.discussions[int(iid)]
        )

    def _get_discussion(self, pid: str, iid: str, did: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        return 200, self.discussion(int(iid), did), {}

    def _create_discussion(self, pid: str, iid: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        assert login is not None
        position = body.get("position")
        if not position:
            note = self._note(int(iid), login, body["body"], type="DiscussionNote", resolvable=True)
            return 201, self._new_discussion(int(iid), note, individual=False), {}
        shas = (position.get("base_sha"), position.get("start_sha"), position.get("head_sha"))
        known = {(v["base_commit_sha"], v["start_commit_sha"], v["head_commit_sha"]) for v in self.versions[int(iid)]}
        diff = next((d for d in self.diffs[int(iid)] if d["new_path"] == position.get("new_path")), None)
        line = position.get("new_line")
        if shas not in known or diff is None or line is None or int(line) not in right_side_lines(diff["diff"]):
            raise HTTPError(
                400,
                {"message": '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}'},
            )
        position = {
            "base_sha": shas[0],
            "start_sha": shas[1],
            "head_sha": shas[2],
            "old_path": position.get("old_path") or position["new_path"],
            "new_path": position["new_path"],
            "position_type": "text",
            "old_line": None,
            "new_line": int(line),
            "line_range": None,
        }
        note = self._note(int(iid), login, body["body"], type="DiffNote", resolvable=True, position=position)
        return 201, self._new_discussion(int(iid), note, individual=False), {}

    def _reply(self, pid: str, iid: str, did: str, *, query: Json, body: Json, login: str | None) -> Response:
        self._mr(pid, iid)
        assert login is not None
        nid = self.add_reply(int(iid), did, login, body["body"])
        return 201, self._find_note(int(iid), nid), {}

    def _resolve(
        self, pid: str, iid: str, did: str, *, query: dict[str, str], body: Json, login: str | None
    ) -> Response:
        self._mr(pid, iid)
        discussion = self.discussion(int(iid), did)
        resolved = body.get("resolved", query.get("resolved"))
        if not any(n["resolvable"] for n in discussion["notes"]):
            raise HTTPError(403, {"message": "403 Forbidden"})
        flag = resolved in (True, "true")
        for note in discussion["notes"]:
            if note["resolvable"]:
                note["resolved"] = flag
                note["resolved_by"] = self._user_basic(login) if flag and login else None
                note["resolved_at"] = _gl_time(self.tick()) if flag else None
        return 200, discussion, {}

    # --- webhook payloads -----------------------------------------------------------------------

    def _project_hook(self) -> Json:
        return {
            "id": self.project_id,
            "name": self.path.rsplit("/", 1)[-1],
            "description": "",
            "web_url": self.web_url,
            "avatar_url": None,
            "git_ssh_url": f"git@127.0.0.1:{self.path}.git",
            "git_http_url": f"{self.web_url}.git",
            "namespace": self.path.split("/")[0],
            "visibility_level": 20,
            "path_with_namespace": self.path,
            "default_branch": "main",
            "homepage": self.web_url,
            "url": f"git@127.0.0.1:{self.path}.git",
            "ssh_url": f"git@127.0.0.1:{self.path}.git",
            "http_url": f"{self.web_url}.git",
        }

    def _hook_user(self, username: str) -> Json:
        u = self.user(username)
        return {
            "id": u["id"],
            "name": u["name"],
            "username": username,
            "avatar_url": u["avatar_url"],
            "email": "[REDACTED]",
        }

    def _mr_attributes(self, iid: int) -> Json:
        m, data = self.mrs[iid], self.mr_json(iid)
        return {
            "id": m["id"],
            "iid": iid,
            "target_branch": m["target_branch"],
            "source_branch": m["source_branch"],
            "source_project_id": self.project_id,
            "target_project_id": self.project_id,
            "author_id": self.user(m["author"])["id"],
            "assignee_ids": [],
            "reviewer_ids": [],
            "title": m["title"],
            "created_at": data["created_at"].replace("T", " ").replace(".000Z", " UTC"),
            "updated_at": data["updated_at"].replace("T", " ").replace(".000Z", " UTC"),
            "state": m["state"],
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable",
            "description": m["description"],
            "url": data["web_url"],
            "draft": False,
            "work_in_progress": False,
            "merge_commit_sha": m["merge_commit_sha"],
            "last_commit": {
                "id": data["sha"],
                "message": "change\n",
                "title": "change",
                "timestamp": "2024-05-01T12:00:00+00:00",
                "url": f"{self.web_url}/-/commit/{data['sha']}",
                "author": {"name": "Alice", "email": "alice@example.com"},
            },
            "labels": [{"id": i, "title": name} for i, name in enumerate(m["labels"])],
            "source": self._project_hook(),
            "target": self._project_hook(),
        }

    def gitlab_merge_request_hook(self, iid: int, action: str = "open") -> Json:
        m = self.mrs[iid]
        attributes = {**self._mr_attributes(iid), "action": action}
        return {
            "object_kind": "merge_request",
            "event_type": "merge_request",
            "user": self._hook_user(m["author"]),
            "project": self._project_hook(),
            "object_attributes": attributes,
            "labels": attributes["labels"],
            "changes": {},
            "repository": {
                "name": self.path.rsplit("/", 1)[-1],
                "url": f"{self.web_url}.git",
                "description": "",
                "homepage": self.web_url,
            },
        }

    def gitlab_note_hook(self, iid: int, note_id: int) -> Json:
        note = self._find_note(iid, note_id)
        discussion = next(d for d in self.discussions[iid] if note in d["notes"])
        attributes = {
            "id": note_id,
            "note": note["body"],
            "noteable_type": "MergeRequest",
            "author_id": note["author"]["id"],
            "created_at": note["created_at"],
            "updated_at": note["updated_at"],
            "project_id": self.project_id,
            "attachment": None,
            "line_code": None,
            "commit_id": "",
            "noteable_id": self.mrs[iid]["id"],
            "system": note["system"],
            "st_diff": None,
            "discussion_id": discussion["id"],
            "type": note["type"],
            "position": note.get("position"),
            "original_position": note.get("position"),
            "url": f"{self.web_url}/-/merge_requests/{iid}#note_{note_id}",
            "action": "create",
        }
        return {
            "object_kind": "note",
            "event_type": "note",
            "user": self._hook_user(note["author"]["username"]),
            "project_id": self.project_id,
            "project": self._project_hook(),
            "object_attributes": attributes,
            "repository": {
                "name": self.path.rsplit("/", 1)[-1],
                "url": f"{self.web_url}.git",
                "description": "",
                "homepage": self.web_url,
            },
            "merge_request": self._mr_attributes(iid),
        }


# --- pytest fixture bodies: wrap with pytest.fixture in the test module --------------------------


def fake_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


def fake_gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


__all__ = ["FakeGitHub", "FakeGitLab", "fake_github", "fake_gitlab", "github_signature", "right_side_lines"]
