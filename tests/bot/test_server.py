"""The webhook server: signatures, size cap, bounded queue, worker, health."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import requests
from fakes import forge as fakeforge

from comind.bot.server import Server, make_server, merge_request_number
from comind.errors import ComindError

SECRET = "It's a Secret to Everybody"
WAIT = 30  # a bound on synchronisation waits, never a timing assertion


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, forge: str, event: str, payload: dict[str, Any]) -> None:
        self.events.append((forge, event, payload))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder: Recorder):
    srv = make_server(recorder, SECRET)
    with srv:
        yield srv


@pytest.fixture
def gh():
    fake = fakeforge.FakeGitHub()  # used only for its payload builders: never started
    fake.add_pull(5, title="Add sys")
    return fake


@pytest.fixture
def gl():
    fake = fakeforge.FakeGitLab()
    fake.add_mr(7, title="Add sys")
    return fake


def post_github(
    server: Server, event: str, payload: Any, secret: str | None = SECRET, signature: str | None = None
) -> requests.Response:
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "Content-Type": "application/json",
    }
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    elif secret is not None:
        headers["X-Hub-Signature-256"] = fakeforge.github_signature(secret, body)
    return requests.post(f"{server.url}/", data=body, headers=headers, timeout=WAIT)


def post_gitlab(server: Server, event: str, payload: Any, token: str | None = SECRET) -> requests.Response:
    headers = {"X-Gitlab-Event": event, "Content-Type": "application/json"}
    if token is not None:
        headers["X-Gitlab-Token"] = token
    return requests.post(f"{server.url}/webhook", json=payload, headers=headers, timeout=WAIT)


def test_signed_github_events_are_handled_in_order(server, recorder, gh):
    comment = gh.add_issue_comment(5, "alice", "/comind confirm d-1")
    pr_event = gh.github_pull_request_event(5, "synchronize")
    assert post_github(server, "pull_request", pr_event).status_code == 202
    assert post_github(server, "issue_comment", gh.github_issue_comment_event(comment)).status_code == 202
    server.stop()  # drains the queue
    assert [(f, e) for f, e, _ in recorder.events] == [("github", "pull_request"), ("github", "issue_comment")]
    assert recorder.events[0][2]["pull_request"]["number"] == 5
    assert recorder.events[1][2]["comment"]["body"] == "/comind confirm d-1"
    assert recorder.events[1][2]["issue"]["pull_request"]["url"].endswith("/pulls/5")
    assert server.handled == 2


@pytest.mark.parametrize(
    "signature", [None, "", "sha1=0123", "sha256=" + "0" * 64, fakeforge.github_signature("wrong secret", b"{}")]
)
def test_forged_or_missing_github_signature_is_401_and_not_handled(server, recorder, gh, signature):
    payload = gh.github_pull_request_event(5)
    if signature is None:
        response = post_github(server, "pull_request", payload, secret=None)
    else:
        response = post_github(server, "pull_request", payload, signature=signature)
    assert response.status_code == 401
    server.stop()
    assert recorder.events == []


def test_signature_of_another_body_is_rejected(server, recorder, gh):
    signature = fakeforge.github_signature(SECRET, b'{"action": "opened"}')
    assert post_github(server, "pull_request", {"action": "closed"}, signature=signature).status_code == 401
    server.stop()
    assert recorder.events == []


def test_review_comment_event(server, recorder, gh):
    gh.add_file(5, "app.py", patch="@@ -1 +1,2 @@\n a\n+b")
    cid = gh.add_review_comment(5, "bob", "/comind remember gotcha flaky", "app.py", 2)
    payload = gh.github_review_comment_event(cid)
    assert post_github(server, "pull_request_review_comment", payload).status_code == 202
    server.stop()
    ((_, event, got),) = recorder.events
    assert event == "pull_request_review_comment" and got["comment"]["path"] == "app.py"
    assert got["pull_request"]["number"] == 5


def test_gitlab_token(server, recorder, gl):
    nid = gl.add_note(7, "alice", "/comind retract d-2")
    assert post_gitlab(server, "Note Hook", gl.gitlab_note_hook(7, nid)).status_code == 202
    assert post_gitlab(server, "Merge Request Hook", gl.gitlab_merge_request_hook(7, "update")).status_code == 202
    assert post_gitlab(server, "Note Hook", {}, token="guess").status_code == 401
    assert post_gitlab(server, "Note Hook", {}, token=None).status_code == 401
    server.stop()
    assert [(f, e) for f, e, _ in recorder.events] == [("gitlab", "Note Hook"), ("gitlab", "Merge Request Hook")]
    note = recorder.events[0][2]
    assert note["object_kind"] == "note" and note["object_attributes"]["note"] == "/comind retract d-2"
    assert note["merge_request"]["iid"] == 7
    assert recorder.events[1][2]["object_attributes"]["action"] == "update"


def test_requests_without_forge_headers_are_401(server, recorder):
    assert requests.post(f"{server.url}/", json={"a": 1}, timeout=WAIT).status_code == 401
    server.stop()
    assert recorder.events == []


def test_body_over_the_cap_is_413(recorder, gh):
    with make_server(recorder, SECRET, max_body=1000) as server:
        response = post_github(server, "pull_request", {"padding": "x" * 2000})
        assert response.status_code == 413
    assert recorder.events == []


def test_signed_non_json_is_400(server, recorder):
    body = b"not json"
    headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": fakeforge.github_signature(SECRET, body)}
    assert requests.post(server.url, data=body, headers=headers, timeout=WAIT).status_code == 400
    server.stop()
    assert recorder.events == []


def test_full_queue_answers_503_and_the_queued_events_still_run(gh):
    started, release = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow(forge: str, event: str, payload: dict[str, Any]) -> None:
        seen.append(payload["action"])
        started.set()
        assert release.wait(WAIT)

    with make_server(slow, SECRET, queue_size=1) as server:
        assert post_github(server, "pull_request", {"action": "first"}).status_code == 202
        assert started.wait(WAIT)  # the worker holds "first"; the queue is empty again
        assert post_github(server, "pull_request", {"action": "second"}).status_code == 202
        response = post_github(server, "pull_request", {"action": "third"})
        assert response.status_code == 503 and response.headers["Retry-After"]
        release.set()
    assert seen == ["first", "second"]


def test_worker_survives_handler_exceptions(gh, caplog):
    seen: list[str] = []

    def flaky(forge: str, event: str, payload: dict[str, Any]) -> None:
        if payload["action"] == "boom":
            raise RuntimeError("handler bug")
        seen.append(payload["action"])

    with make_server(flaky, SECRET) as server:
        post_github(server, "pull_request", {"action": "boom"})
        post_github(server, "pull_request", {"action": "after"})
    assert seen == ["after"]
    assert server.failed == 1 and server.handled == 1
    assert "handler bug" in caplog.text


def test_healthz(server):
    assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
    assert requests.get(f"{server.url}/other", timeout=WAIT).status_code == 404


def test_refuses_to_start_without_a_secret(recorder):
    with pytest.raises(ComindError, match="secret"):
        make_server(recorder, "")


def test_binds_loopback_by_default_and_hides_the_secret(server):
    assert server.host == "127.0.0.1" and server.port > 0
    assert SECRET not in repr(server)


def test_stop_is_idempotent_and_closes_the_port(recorder):
    server = make_server(recorder, SECRET).start()
    url = server.url
    server.stop()
    server.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/healthz", timeout=WAIT)


def test_merge_request_number_of_events(gh, gl):
    comment = gh.add_issue_comment(5, "alice", "hi")
    cid = gh.add_review_comment(5, "bob", "x", "app.py", 1)
    nid = gl.add_note(7, "alice", "hi")
    assert merge_request_number("github", gh.github_pull_request_event(5)) == 5
    assert merge_request_number("github", gh.github_issue_comment_event(comment)) == 5
    assert merge_request_number("github", gh.github_review_comment_event(cid)) == 5
    assert merge_request_number("github", {"issue": {"number": 3}}) is None  # a plain issue
    assert merge_request_number("gitlab", gl.gitlab_merge_request_hook(7)) == 7
    assert merge_request_number("gitlab", gl.gitlab_note_hook(7, nid)) == 7
    assert merge_request_number("gitlab", {"object_kind": "push"}) is None
