# ruff: noqa: B023, SIM105  (the burst test runs once inside the fake forge generator)
"""The webhook server: signatures, size cap, the durable inbox, deduplication, bounds, timeouts,
hang-ups and restarts, over real sockets on 127.0.0.1 (servers in this process or in their own)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from fakes import forge as fakeforge

from comind.bot.server import Server, make_server, merge_request_number
from comind.errors import ComindError

SECRET = "It's a Secret to Everybody"
WAIT = 30  # a bound on synchronisation waits, never a timing assertion
DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, forge: str, event: str, payload: dict[str, Any]) -> None:
        self.events.append((forge, event, payload))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    return tmp_path / "webhooks"


@pytest.fixture
def server(recorder: Recorder, inbox: Path) -> Iterator[Server]:
    with make_server(recorder, SECRET, queue_dir=inbox) as srv:
        yield srv


@pytest.fixture
def gh() -> fakeforge.FakeGitHub:
    fake = fakeforge.FakeGitHub()  # used only for its payload builders: never started
    fake.add_pull(5, title="Add sys")
    return fake


@pytest.fixture
def gl() -> fakeforge.FakeGitLab:
    fake = fakeforge.FakeGitLab()
    fake.add_mr(7, title="Add sys")
    return fake


_deliveries = iter(range(1, 10**9))


def github_headers(event: str, body: bytes, delivery: str | None = None, secret: str | None = SECRET) -> dict[str, str]:
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or f"d-{next(_deliveries)}",
        "Content-Type": "application/json",
    }
    if secret is not None:
        headers["X-Hub-Signature-256"] = fakeforge.github_signature(secret, body)
    return headers


def post_github(
    server: Server,
    event: str,
    payload: Any,
    secret: str | None = SECRET,
    signature: str | None = None,
    delivery: str | None = None,
) -> requests.Response:
    body = json.dumps(payload).encode()
    headers = github_headers(event, body, delivery, secret)
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return requests.post(f"{server.url}/", data=body, headers=headers, timeout=WAIT)


def post_gitlab(
    server: Server, event: str, payload: Any, token: str | None = SECRET, headers: dict[str, str] | None = None
) -> requests.Response:
    sent = {"X-Gitlab-Event": event, "Content-Type": "application/json", **(headers or {})}
    if token is not None:
        sent["X-Gitlab-Token"] = token
    return requests.post(f"{server.url}/webhook", json=payload, headers=sent, timeout=WAIT)


def until(condition: Any, what: str) -> None:
    """Wait (bounded) for something another thread or process does."""
    for _ in range(WAIT * 20):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


# --- signatures and requests ----------------------------------------------------------------------


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
def test_forged_or_missing_github_signature_is_401_and_not_handled(server, recorder, gh, signature, inbox):
    payload = gh.github_pull_request_event(5)
    if signature is None:
        response = post_github(server, "pull_request", payload, secret=None)
    else:
        response = post_github(server, "pull_request", payload, signature=signature)
    assert response.status_code == 401
    server.stop()
    assert recorder.events == []
    assert not any((inbox / "incoming").iterdir()) and not any((inbox / "queue").iterdir())  # nothing kept


def test_signature_of_another_body_is_rejected(server, recorder):
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


SIGNING_KEY = os.urandom(32)
SIGNING_TOKEN = "whsec_" + base64.b64encode(SIGNING_KEY).decode()


def signed_gitlab(body: bytes, message_id: str, stamp: int, key: bytes = SIGNING_KEY) -> dict[str, str]:
    """GitLab's signing-token headers (Standard Webhooks) for ``body``."""
    mac = hmac.new(key, f"{message_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "X-Gitlab-Event": "Note Hook",
        "Content-Type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
        "Idempotency-Key": message_id,
    }


def test_gitlab_signing_token(recorder, inbox, gl):
    nid = gl.add_note(7, "alice", "/comind help")
    body = json.dumps(gl.gitlab_note_hook(7, nid)).encode()
    now = int(time.time())
    with make_server(recorder, SIGNING_TOKEN, queue_dir=inbox) as server:

        def post(headers: dict[str, str], data: bytes = body) -> int:
            return requests.post(server.url, data=data, headers=headers, timeout=WAIT).status_code

        assert post(signed_gitlab(body, "msg-1", now)) == 202
        assert post(signed_gitlab(body, "msg-2", now, key=os.urandom(32))) == 401  # another key
        assert post(signed_gitlab(body, "msg-3", now), data=body + b" ") == 401  # another body
        assert post(signed_gitlab(body, "msg-4", now - 3600)) == 401  # an old signature: a replay
        assert post(signed_gitlab(body, "msg-5", now)) == 200  # the same body again: a duplicate
        later = json.dumps(gl.gitlab_note_hook(7, gl.add_note(7, "alice", "/comind why a.py"))).encode()
        rotated = signed_gitlab(later, "msg-6", now)  # during a key rotation GitLab sends several
        rotated["webhook-signature"] = "v1,bm90IGl0 " + rotated["webhook-signature"]
        assert post(rotated, data=later) == 202
    assert len(recorder.events) == 2 and recorder.events[0][2]["object_attributes"]["note"] == "/comind help"


def test_requests_without_forge_headers_are_401(server, recorder):
    assert requests.post(f"{server.url}/", json={"a": 1}, timeout=WAIT).status_code == 401
    server.stop()
    assert recorder.events == []


def test_body_over_the_cap_is_413(recorder, inbox):
    with make_server(recorder, SECRET, queue_dir=inbox, max_body=1000) as server:
        response = post_github(server, "pull_request", {"padding": "x" * 2000})
        assert response.status_code == 413
    assert recorder.events == []


def raw(server: Server, data: bytes, *, read: bool = True) -> bytes:
    with socket.create_connection((server.host, server.port), timeout=WAIT) as sock:
        sock.sendall(data)
        if not read:
            return b""
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_a_declared_size_over_the_cap_is_refused_before_the_body(server):
    head = (
        "POST / HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
        f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Length: {25 * 1024 * 1024 + 1}\r\n\r\n"
    )
    assert raw(server, head.encode()).startswith(b"HTTP/1.1 413 ")  # answered with no body sent


def test_missing_content_length_and_form_bodies(server, recorder):
    body = b'{"action": "opened"}'
    headers = github_headers("push", body)
    chunked = requests.post(server.url, data=iter([body]), headers=headers, timeout=WAIT)  # chunked, no length
    assert chunked.status_code == 411
    form = {**headers, "Content-Type": "application/x-www-form-urlencoded"}
    response = requests.post(server.url, data=body, headers=form, timeout=WAIT)
    assert response.status_code == 415 and "application/json" in response.text
    server.stop()
    assert recorder.events == []


def test_signed_non_json_is_400(server, recorder):
    for body in (b"not json", b"[1, 2]"):
        response = requests.post(server.url, data=body, headers=github_headers("push", body), timeout=WAIT)
        assert response.status_code == 400
    server.stop()
    assert recorder.events == []


def test_malformed_event_and_delivery_headers_are_400(server, recorder):
    body = b"{}"
    bad_event = {**github_headers("push", body), "X-GitHub-Event": "push\x7f;rm"}
    bad_delivery = github_headers("push", body, delivery="../../etc/passwd")
    for headers in (bad_event, bad_delivery):
        assert requests.post(server.url, data=body, headers=headers, timeout=WAIT).status_code == 400
    server.stop()
    assert recorder.events == []


def test_full_queue_answers_503_and_the_queued_events_still_run(inbox):
    started, release = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow(forge: str, event: str, payload: dict[str, Any]) -> None:
        seen.append(payload["action"])
        started.set()
        assert release.wait(WAIT)

    with make_server(slow, SECRET, queue_dir=inbox, queue_size=2) as server:
        assert post_github(server, "pull_request", {"action": "first"}).status_code == 202
        assert started.wait(WAIT)  # the worker holds "first"; it stays queued until handled
        assert post_github(server, "pull_request", {"action": "second"}).status_code == 202
        response = post_github(server, "pull_request", {"action": "third"})
        assert response.status_code == 503 and response.headers["Retry-After"]
        release.set()
    assert seen == ["first", "second"]


def test_worker_survives_handler_exceptions_and_keeps_the_event(inbox, caplog):
    seen: list[str] = []

    def flaky(forge: str, event: str, payload: dict[str, Any]) -> None:
        if payload["action"] == "boom":
            raise RuntimeError("handler bug")
        seen.append(payload["action"])

    with make_server(flaky, SECRET, queue_dir=inbox) as server:
        post_github(server, "pull_request", {"action": "boom"})
        post_github(server, "pull_request", {"action": "after"})
    assert seen == ["after"]
    assert server.failed == 1 and server.handled == 1
    assert "handler bug" in caplog.text
    (kept,) = (inbox / "failed").iterdir()
    assert b'"boom"' in kept.read_bytes()
    assert not any((inbox / "queue").iterdir())


def test_healthz(server):
    assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
    assert requests.get(f"{server.url}/other", timeout=WAIT).status_code == 404
    assert requests.put(f"{server.url}/", timeout=WAIT).status_code == 405


def test_refuses_to_start_without_a_secret(recorder, inbox):
    with pytest.raises(ComindError, match="secret"):
        make_server(recorder, "", queue_dir=inbox)


def test_binds_loopback_by_default_and_hides_the_secret(server):
    assert server.host == "127.0.0.1" and server.port > 0
    assert SECRET not in repr(server)


def test_stop_is_idempotent_and_closes_the_port(recorder, inbox):
    server = make_server(recorder, SECRET, queue_dir=inbox).start()
    url = server.url
    server.stop()
    server.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/healthz", timeout=WAIT)


def test_one_server_per_inbox(recorder, inbox):
    with make_server(recorder, SECRET, queue_dir=inbox), pytest.raises(ComindError, match="another server"):
        make_server(recorder, SECRET, queue_dir=inbox)


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


# --- the findings of issue 24 item 5 --------------------------------------------------------------


def test_the_same_delivery_sent_21_times_is_handled_once(inbox, recorder, gl):
    body = json.dumps({"action": "opened"}).encode()
    headers = github_headers("pull_request", body, delivery=DELIVERY)
    with make_server(recorder, SECRET, queue_dir=inbox) as server:

        def send(_: int) -> int:
            return requests.post(server.url, data=body, headers=headers, timeout=WAIT).status_code

        codes = [send(0) for _ in range(10)]
        with ThreadPoolExecutor(11) as pool:  # and at once, racing each other
            codes += list(pool.map(send, range(11)))
        assert codes.count(202) == 1 and codes.count(200) == 20
        # GitLab: a resend keeps its Idempotency-Key (X-Gitlab-Event-UUID can differ)
        hook = gl.gitlab_merge_request_hook(7)
        for n in range(3):
            again = {"Idempotency-Key": "f5e5f430-f57b-4e6e-9fac-d9128cd7232f", "X-Gitlab-Event-UUID": f"u-{n}"}
            assert post_gitlab(server, "Merge Request Hook", hook, headers=again).status_code in (200, 202)
    assert [(f, e) for f, e, _ in recorder.events] == [("github", "pull_request"), ("gitlab", "Merge Request Hook")]
    # and after a restart, from the markers on disk
    with make_server(recorder, SECRET, queue_dir=inbox) as server:
        assert requests.post(server.url, data=body, headers=headers, timeout=WAIT).status_code == 200
    assert len(recorder.events) == 2


def test_a_signed_body_replayed_under_new_delivery_ids_is_handled_once(inbox, recorder, gl):
    """The delivery id is not signed: a captured delivery sent again under another id (and another
    event name) is the same signed body, answered as a duplicate, and not run again."""
    body = json.dumps({"action": "opened", "number": 5}).encode()
    signed = github_headers("pull_request", body, delivery=DELIVERY)
    with make_server(recorder, SECRET, queue_dir=inbox) as server:

        def replay(n: int, event: str = "pull_request") -> requests.Response:
            headers = {**signed, "X-GitHub-Delivery": f"replay-{n}", "X-GitHub-Event": event}
            return requests.post(server.url, data=body, headers=headers, timeout=WAIT)

        assert requests.post(server.url, data=body, headers=signed, timeout=WAIT).status_code == 202
        answers = [replay(0), replay(1, "issue_comment")]
        with ThreadPoolExecutor(8) as pool:  # and at once, racing each other
            answers += list(pool.map(replay, range(2, 10)))
        assert {(a.status_code, a.text) for a in answers} == {(200, "duplicate delivery: received before\n")}
        other = json.dumps({"action": "closed", "number": 5}).encode()  # another body: another event
        headers = github_headers("pull_request", other, delivery="another")
        assert requests.post(server.url, data=other, headers=headers, timeout=WAIT).status_code == 202
        # GitLab's secret token signs nothing at all: the same body under a new Idempotency-Key
        hook = gl.gitlab_merge_request_hook(7)
        for n in range(3):
            fresh = {"Idempotency-Key": f"key-{n}", "X-Gitlab-Event-UUID": f"u-{n}"}
            assert post_gitlab(server, "Merge Request Hook", hook, headers=fresh).status_code == (202, 200, 200)[n]
    assert [(e, p.get("action")) for _, e, p in recorder.events] == [
        ("pull_request", "opened"),
        ("pull_request", "closed"),
        ("Merge Request Hook", None),
    ]
    # the bodies are remembered on disk: after a restart too, for the inbox's window (then dropped)
    with make_server(recorder, SECRET, queue_dir=inbox) as server:
        assert replay(10).status_code == 200
        assert server.inbox.prune(now=time.time() + 8 * 86400) > 0
        assert replay(11).status_code == 202
    assert len(recorder.events) == 4


def test_a_secret_in_an_event_is_not_kept_in_the_queue(inbox, gl):
    """The queue holds events on disk (a failed one for days): a token pasted into a comment is
    redacted before the event is kept, and the handler sees the marker."""
    token = "ghp_" + "a1B2c3D4e5" * 4
    failing: list[dict[str, Any]] = []

    def handler(forge: str, event: str, payload: dict[str, Any]) -> None:
        failing.append(payload)
        raise ComindError("the forge is down")  # kept under failed/ for a person to read

    body = json.dumps({"action": "created", "comment": {"body": f"/comind why x  token={token}"}}).encode()
    with make_server(handler, SECRET, queue_dir=inbox) as server:
        headers = github_headers("issue_comment", body, delivery="d-secret")
        assert requests.post(server.url, data=body, headers=headers, timeout=WAIT).status_code == 202
        deadline = time.monotonic() + WAIT
        while not failing and time.monotonic() < deadline:
            time.sleep(0.05)
    assert failing and token not in json.dumps(failing[0]) and "[redacted:" in failing[0]["comment"]["body"]
    kept = [p.read_bytes() for p in inbox.rglob("*") if p.is_file()]
    assert kept and not any(token.encode() in k for k in kept)


def test_a_port_in_use_is_a_one_line_error(repo, cli, monkeypatch):
    monkeypatch.setenv("COMIND_WEBHOOK_SECRET", SECRET)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli(repo, "bot", "serve", "--port", str(port))
    assert result.code == 2
    assert result.err == f"comind: bot serve: cannot listen on 127.0.0.1:{port}: address already in use\n"


def test_a_body_trickled_in_is_cut_off(recorder, inbox):
    body = b'{"action": "opened", "padding": "' + b"x" * 1000 + b'"}'
    headers = github_headers("pull_request", body)
    head = "POST / HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"Content-Length: {len(body)}\r\n\r\n"
    with make_server(recorder, SECRET, queue_dir=inbox, read_timeout=1) as server:
        for what, start, rest in (("body", head.encode(), body), ("headers", b"POST / HTTP/1.1\r\n", b"X" * 1000)):
            with socket.create_connection((server.host, server.port), timeout=WAIT) as sock:
                sock.sendall(start)
                answer = b""
                for byte in rest[:60]:  # one byte every 0.25 s: 15 s if the server never cuts it off
                    try:
                        sock.sendall(bytes([byte]))
                    except OSError:
                        break
                    time.sleep(0.25)
                    ready, _, _ = select.select([sock], [], [], 0)
                    if ready:
                        answer = sock.recv(65536)
                        break
                assert answer.startswith(b"HTTP/1.1 408 "), (what, answer)
        assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
    assert recorder.events == [] and not any((inbox / "incoming").iterdir())


SERVE = """
import json, logging, os, sys, threading
from pathlib import Path
from comind.bot.server import make_server

logging.basicConfig(level=logging.INFO, format="comind: %(message)s")
record, block = Path(sys.argv[1]), os.environ.get("BLOCK")


def handle(forge, event, payload):
    if payload.get("action") == block:
        threading.Event().wait()
    with record.open("a") as f:
        f.write(json.dumps([forge, event, payload.get("action")]) + "\\n")


server = make_server(handle, sys.argv[3], queue_dir=Path(sys.argv[2]), **json.loads(sys.argv[4]))
print(server.url, flush=True)
server.serve_forever()
"""


class Process:
    """A webhook server in a process of its own, logging to a file."""

    def __init__(self, tmp: Path, *, block: str = "", **limits: Any) -> None:
        self.record, self.log = tmp / "handled.jsonl", tmp / f"server-{time.time_ns()}.log"
        env = {**os.environ, "BLOCK": block}
        args = [sys.executable, "-c", SERVE, str(self.record), str(tmp / "webhooks"), SECRET, json.dumps(limits)]
        with self.log.open("w") as err:
            self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.stderr()
        self.host, port = self.url[7:].split(":")
        self.port = int(port)

    def handled(self) -> list[list[str]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def status(self, field: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise AssertionError(field)

    def stderr(self) -> str:
        return self.log.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(WAIT)

    def post(self, event: str, payload: Any, delivery: str | None = None) -> requests.Response:
        body = json.dumps(payload).encode()
        return requests.post(self.url, data=body, headers=github_headers(event, body, delivery), timeout=WAIT)


linux = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")


def test_a_restart_resumes_what_was_accepted_and_drops_what_was_not(tmp_path):
    first = Process(tmp_path, block="first")
    for action in ("first", "second", "third"):
        assert first.post("pull_request", {"action": action}, delivery=action).status_code == 202
    until(lambda: any((tmp_path / "webhooks" / "queue").iterdir()), "the queue")
    half = socket.create_connection((first.host, first.port))  # a body cut off by the crash
    body = b'{"action": "half"}'
    headers = github_headers("pull_request", body)
    half.sendall(
        b"POST / HTTP/1.1\r\nHost: x\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode()
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body[:5]
    )
    until(lambda: any((tmp_path / "webhooks" / "incoming").iterdir()), "the partial body")
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL  # "first" was being handled, none finished
    half.close()
    assert first.handled() == []
    second = Process(tmp_path)
    try:
        until(lambda: len(second.handled()) == 3, "the resumed events")
        assert [action for _, _, action in second.handled()] == ["first", "second", "third"]
        assert not any((tmp_path / "webhooks" / "incoming").iterdir())
        assert second.post("pull_request", {"action": "first"}, delivery="first").status_code == 200
    finally:
        assert second.stop() == 0
    assert len(second.handled()) == 3


@linux
def test_connections_do_not_cost_a_thread_each(tmp_path):
    server = Process(tmp_path)
    idle = server.status("Threads")
    held = []
    try:
        for _ in range(60):  # slow clients, each one mid-headers
            sock = socket.create_connection((server.host, server.port), timeout=WAIT)
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: pu")
            held.append(sock)
        assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200  # all accepted by now
        assert server.status("Threads") <= idle + 2
    finally:
        for sock in held:
            sock.close()
        assert server.stop() == 0


@linux
def test_forged_bodies_are_streamed_not_held(tmp_path):
    server = Process(tmp_path)
    try:
        assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
        idle = server.status("VmHWM")
        codes = concurrent_forged(server, count=4, size=8 * 1024 * 1024)  # 32 MB in all
        assert codes == [401] * 4
        assert server.status("VmHWM") - idle < 16 * 1024  # kB
        assert not any((tmp_path / "webhooks" / "incoming").iterdir())
    finally:
        assert server.stop() == 0


def concurrent_forged(server: Process, count: int, size: int) -> list[int]:
    """``count`` bodies of ``size`` bytes at once, each with a signature that does not match."""
    chunk = b'{"a": "' + b"x" * (size - 9) + b'"}'
    headers = github_headers("push", b"something else")
    with ThreadPoolExecutor(count) as pool:
        futures = [
            pool.submit(requests.post, server.url, data=chunk, headers=headers, timeout=WAIT * 4) for _ in range(count)
        ]
        return [future.result().status_code for future in futures]


def test_clients_that_hang_up_or_misbehave_leave_no_traceback(tmp_path):
    server = Process(tmp_path, read_timeout=2)
    body = b'{"action": "opened"}'
    signed = github_headers("pull_request", body)
    head = (
        b"POST / HTTP/1.1\r\nHost: x\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in signed.items()).encode()
        + f"Content-Length: {len(body) + 1000}\r\n\r\n".encode()
    )

    def hang_up(data: bytes, *, reset: bool = False, read: bool = False) -> None:
        sock = socket.create_connection((server.host, server.port), timeout=WAIT)
        if reset:  # close with RST, not FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        with sock:
            with_suppressed(sock.sendall, data)
            if read:
                with_suppressed(sock.recv, 10)

    try:
        hang_up(b"")  # connect and go
        hang_up(b"POST / HTTP/1.1\r\nHost: x\r\nX-Git")  # mid-headers
        hang_up(head + body)  # mid-body
        hang_up(head + body, reset=True)
        hang_up(head[: head.index(b"Content-Length")] + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        hang_up(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64), read=True)  # TLS on plain HTTP
        hang_up(b"GARBAGE\r\n\r\n", read=True)
        hang_up(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", read=True)
        hang_up(b"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", read=True)
        hang_up(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", reset=True)
        assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
        assert server.post("pull_request", {"action": "after"}).status_code == 202
        until(lambda: len(server.handled()) == 2, "both events")  # the one whose answer nobody read, too
    finally:
        assert server.stop() == 0
    log = server.stderr()
    assert "Traceback" not in log and "Exception" not in log and "Error" not in log, log


def with_suppressed(call: Any, *args: Any) -> None:
    try:
        call(*args)
    except OSError:
        pass


# --- heavy: bursts and memory (CI runs these too) -------------------------------------------------


@pytest.mark.slow
@linux
def test_24_concurrent_24_mb_unauthenticated_bodies_stay_out_of_memory(tmp_path, capsys):
    server = Process(tmp_path)
    try:
        assert requests.get(f"{server.url}/healthz", timeout=WAIT).status_code == 200
        idle = server.status("VmHWM")
        codes = concurrent_forged(server, count=24, size=24 * 1024 * 1024)
        peak = server.status("VmHWM")
        unsigned = []  # and without a signature: refused before the body is read
        body = b"x" * (24 * 1024 * 1024)
        with ThreadPoolExecutor(24) as pool:
            for _ in range(24):
                unsigned.append(pool.submit(unsigned_post, server, body))
        refused = [future.result() for future in unsigned]
        peak = max(peak, server.status("VmHWM"))
    finally:
        assert server.stop() == 0
    with capsys.disabled():
        print(f"\nmemory: idle {idle // 1024} MB, peak {peak // 1024} MB over 24 x 24 MB forged + 24 unsigned")
    # refused, every one: 401 once streamed, or 408 when a loaded machine (a parallel test run)
    # could not take the whole body within the read timeout; the subject here is memory
    assert set(codes) <= {401, 408} and 401 in codes and all(code in (401, None) for code in refused)
    assert peak - idle < 50 * 1024  # kB


def unsigned_post(server: Process, body: bytes) -> int | None:
    """A 24 MB body with no signature: 401, or a reset if the answer came before it was sent."""
    try:
        return requests.post(server.url, data=body, headers={"X-GitHub-Event": "push"}, timeout=WAIT).status_code
    except requests.ConnectionError:
        return None


@pytest.mark.slow
def test_a_burst_of_200_signed_events_on_200_pull_requests(tmp_path, repo, capsys):
    for fake in fakeforge.fake_github():
        fake.server.RequestHandlerClass.disable_nagle_algorithm = True
        token = "ghp_" + "B0tT0ken" * 5
        fake.add_token(token, "comind-bot")
        fake.set_permission("alice", "write")
        comments = []
        for number in range(1, 201):
            fake.add_pull(number, title=f"Change {number}", author="alice")
            comments.append(fake.add_issue_comment(number, "alice", "/comind help"))
        env = {
            **os.environ,
            "COMIND_WEBHOOK_SECRET": SECRET,
            "GITHUB_TOKEN": token,
            "GITHUB_API_URL": fake.base,
            "COMIND_RETRY_BACKOFF": "0",
            "COMIND_FORGE_THROTTLE": "0",
        }
        log = tmp_path / "serve.log"
        command = [sys.executable, "-c", "from comind.cli import main; raise SystemExit(main())"]
        with log.open("w") as err:
            proc = subprocess.Popen(
                [*command, "-C", str(repo), "bot", "serve", "--port", "0"], stderr=err, env=env, cwd=repo
            )
        try:
            until(lambda: "listening on" in log.read_text(), "the server")
            url = log.read_text().split("listening on ")[1].split()[0]
            events = [json.dumps(fake.github_issue_comment_event(c)).encode() for c in comments]
            headers = [github_headers("issue_comment", body, delivery=f"burst-{n}") for n, body in enumerate(events)]

            def send(n: int) -> int:
                return requests.post(url, data=events[n], headers=headers[n], timeout=WAIT).status_code

            with ThreadPoolExecutor(200) as pool:
                codes = list(pool.map(send, range(200)))
            assert codes == [202] * 200
            answered = lambda: {c["number"] for c in fake.issue_comments.values() if c["user"] == "comind-bot"}  # noqa: E731
            until(lambda: len(answered()) == 200, "200 answers")
            with ThreadPoolExecutor(50) as pool:  # every delivery again: received before, not handled again
                assert list(pool.map(send, range(200))) == [200] * 200
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(WAIT * 4) == 0
        replies = [c["number"] for c in fake.issue_comments.values() if c["user"] == "comind-bot"]
        text = log.read_text()
        with capsys.disabled():
            print(f"\nburst: {codes.count(202)}/200 answered 202, {len(set(replies))}/200 pull requests answered")
        assert sorted(replies) == list(range(1, 201))  # each answered, once
        assert text.count("handled github issue_comment burst-") == 200
        assert "Traceback" not in text
