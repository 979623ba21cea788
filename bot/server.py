"""``comind bot serve``: a webhook receiver for GitHub and GitLab.

Requests are checked before anything else happens: GitHub's ``X-Hub-Signature-256`` (HMAC-SHA256
of the raw body with the shared secret) or GitLab's ``X-Gitlab-Token`` (the secret itself), both
compared in constant time. Unsigned or forged requests get 401 and are not parsed. Bodies over
``max_body`` (25 MB, GitHub's own cap) get 413. Valid events go on a bounded queue (full: 503, so
the sender can redeliver later) and one worker thread hands them to the handler in arrival order,
logging and surviving handler exceptions. ``GET /healthz`` answers 200.

The forge is told by its event header: ``X-GitHub-Event`` (``pull_request``, ``issue_comment``,
``pull_request_review_comment``, …) or ``X-Gitlab-Event`` (``Merge Request Hook``, ``Note Hook``,
…); the handler receives ``(forge, event, payload)`` with forge ``"github"`` or ``"gitlab"``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import signal
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any

from comind.errors import ComindError

log = logging.getLogger(__name__)

Handler = Callable[[str, str, dict[str, Any]], None]
Event = tuple[str, str, dict[str, Any]]

MAX_BODY = 25 * 1024 * 1024


class Server:
    """A webhook server; ``start()``/``stop()`` for embedding, ``serve_forever()`` for the CLI."""

    def __init__(
        self,
        handler: Handler,
        secret: str,
        host: str = "127.0.0.1",
        port: int = 0,
        queue_size: int = 100,
        max_body: int = MAX_BODY,
    ) -> None:
        if not secret:
            raise ComindError(
                "bot serve needs a webhook secret (the one configured in the "
                "GitHub or GitLab webhook); refusing to accept unsigned events"
            )
        self.handler = handler
        self.secret = secret.encode()
        self.max_body = max_body
        self.queue: queue.Queue[Event | None] = queue.Queue(maxsize=queue_size)
        self.handled = 0
        self.failed = 0
        self._http = _HTTPServer((host, port), _RequestHandler)
        self._http.app = self
        self._worker = threading.Thread(target=self._work, name="comind-bot-worker", daemon=True)
        self._loop = threading.Thread(target=self._http.serve_forever, args=(0.1,), name="comind-bot-http", daemon=True)
        self._stopped = threading.Event()

    @property
    def host(self) -> str:
        return str(self._http.server_address[0])

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __repr__(self) -> str:  # never the secret
        return f"Server({self.url!r}, queued={self.queue.qsize()})"

    def start(self) -> Server:
        self._worker.start()
        self._loop.start()
        log.info("comind bot listening on %s", self.url)
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop accepting, let the worker finish what is queued, and close the socket."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._loop.is_alive():
            self._http.shutdown()
            self._loop.join()
        self._http.server_close()
        if self._worker.is_alive():
            self.queue.put(None)  # after everything already queued
            self._worker.join(timeout)

    def serve_forever(self) -> None:
        """Serve until Ctrl-C or SIGTERM, then stop gracefully."""
        previous = None
        if threading.current_thread() is threading.main_thread():

            def on_term(signum: int, frame: FrameType | None) -> None:
                raise KeyboardInterrupt

            previous = signal.signal(signal.SIGTERM, on_term)
        self.start()
        try:
            while not self._stopped.wait(1.0):
                pass
        except KeyboardInterrupt:
            log.info("comind bot stopping")
        finally:
            self.stop()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _work(self) -> None:
        while True:
            item = self.queue.get()
            try:
                if item is None:
                    return
                forge, event, payload = item
                try:
                    self.handler(forge, event, payload)
                    self.handled += 1
                except Exception:
                    self.failed += 1
                    log.exception("comind bot: handling %s %s failed", forge, event)
            finally:
                self.queue.task_done()

    def verify(self, forge: str, headers: Any, body: bytes | None) -> bool:
        """GitHub: the HMAC of ``body`` (None: only whether a signature is present at all)."""
        if forge == "gitlab":
            token = str(headers.get("X-Gitlab-Token") or "").encode()
            return hmac.compare_digest(token, self.secret)
        signature = str(headers.get("X-Hub-Signature-256") or "")
        if not signature.startswith("sha256="):
            return False
        if body is None:
            return True
        expected = "sha256=" + hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(signature.encode(), expected.encode())


def merge_request_number(forge: str, payload: dict[str, Any]) -> int | None:
    """The pull/merge request an event is about, or None (a push, a comment on a plain issue)."""
    if forge == "github":
        if isinstance(payload.get("pull_request"), dict):
            return int(payload["pull_request"]["number"])
        issue = payload.get("issue")
        if isinstance(issue, dict) and issue.get("pull_request"):
            return int(issue["number"])
        return None
    if payload.get("object_kind") == "merge_request":
        return int(payload["object_attributes"]["iid"])
    if isinstance(payload.get("merge_request"), dict):
        return int(payload["merge_request"]["iid"])
    return None


def make_server(
    handler: Handler,
    secret: str,
    host: str = "127.0.0.1",
    port: int = 0,
    queue_size: int = 100,
    max_body: int = MAX_BODY,
) -> Server:
    """A webhook server bound to ``host:port`` (port 0: any free port), not yet started."""
    return Server(handler, secret, host, port, queue_size, max_body)


class _HTTPServer(ThreadingHTTPServer):
    # server_close() joins in-flight request threads, so none can queue after the stop sentinel
    daemon_threads = False
    block_on_close = True
    app: Server


class _RequestHandler(BaseHTTPRequestHandler):
    server: _HTTPServer
    timeout = 30  # a client that stalls mid-request cannot hold a thread forever
    server_version = "comind-bot"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def _reply(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        body = (text + "\n").encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/healthz":
            self._reply(200, "ok")
        else:
            self._reply(404, "not found")

    def do_POST(self) -> None:
        app = self.server.app
        if self.headers.get("X-GitHub-Event"):
            forge, event = "github", str(self.headers["X-GitHub-Event"])
            delivery = self.headers.get("X-GitHub-Delivery", "")
        elif self.headers.get("X-Gitlab-Event"):
            forge, event = "gitlab", str(self.headers["X-Gitlab-Event"])
            delivery = self.headers.get("X-Gitlab-Event-UUID", "")
        else:
            self._reply(401, "not a signed GitHub or GitLab webhook")
            return
        if not app.verify(forge, self.headers, None):  # GitLab fully, GitHub: signature present
            log.warning("comind bot: rejected unsigned or forged %s %s from %s", forge, event, self.client_address[0])
            self._reply(401, "bad signature")
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._reply(411, "Content-Length required")
            return
        if length > app.max_body or length < 0:
            self._reply(413, f"body over {app.max_body} bytes")
            return
        body = self.rfile.read(length)
        if forge == "github" and not app.verify(forge, self.headers, body):
            log.warning("comind bot: rejected forged github %s from %s", event, self.client_address[0])
            self._reply(401, "bad signature")
            return
        try:
            payload = json.loads(body)
        except ValueError:
            self._reply(400, "body is not JSON")
            return
        if not isinstance(payload, dict):
            self._reply(400, "body is not a JSON object")
            return
        try:
            app.queue.put_nowait((forge, event, payload))
        except queue.Full:
            log.warning("comind bot: queue full, refused %s %s %s", forge, event, delivery)
            self._reply(503, "busy, retry later", {"Retry-After": "60"})
            return
        log.info("comind bot: queued %s %s %s", forge, event, delivery)
        self._reply(202, "queued")
