"""``comind bot serve``: a webhook receiver for GitHub and GitLab, fit to face the internet behind a
proxy. uvicorn (h11) serves a small ASGI app; one worker thread hands events to the handler.

A request is checked before its body is read wherever the headers decide (no event header, no or
a malformed signature, a wrong GitLab token, no Content-Length or one over ``max_body``: 25 MB,
GitHub's and GitLab's cap). The body is then streamed to a file in the inbox while its signature
is computed, so an unauthenticated body never sits in memory; a forged one is deleted. A verified
event is fsynced into the inbox (see ``comind.bot.inbox``) and only then answered 202; a delivery
already received, or a body received before under another delivery id (a replay: the id is not
signed), is answered 200 and not handled again. The worker handles the inbox in arrival
order, resumes it after a restart and survives handler exceptions. ``GET /healthz`` answers 200.

Bounds: ``max_connections`` open connections (beyond: 503), ``max_streams`` bodies received at
once (the rest wait), headers and then the body each within ``read_timeout`` seconds (else 408),
one request per connection, ``queue_size`` events waiting (beyond: 503 with Retry-After).

The forge is told by its event header: ``X-GitHub-Event`` (``pull_request``, ``issue_comment``, …)
or ``X-Gitlab-Event`` (``Merge Request Hook``, ``Note Hook``, …); the handler receives ``(forge,
event, payload)`` with forge ``"github"`` or ``"gitlab"``. The delivery id is ``X-GitHub-Delivery``,
or GitLab's ``Idempotency-Key``, ``webhook-id`` or ``X-Gitlab-Event-UUID``, whichever comes first
(all stay the same when the forge redelivers); without one, the body's hash.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import re
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from comind.bot import signatures
from comind.bot.inbox import Inbox, InboxFull, Spool
from comind.errors import ComindError

log = logging.getLogger(__name__)

Handler = Callable[[str, str, dict[str, Any]], None]
Message = dict[str, Any]  # an ASGI message or scope: the boundary with uvicorn
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Answer = tuple[int, str, dict[str, str]]

MAX_BODY = 25 * 1024 * 1024  # GitHub: "Payloads are capped at 25 MB"; GitLab's limit is the same
READ_TIMEOUT = 20.0  # GitHub gives up on a delivery after 10 s, GitLab.com after 10 s
MAX_CONNECTIONS = 1000
MAX_STREAMS = 32
QUEUE_SIZE = 10_000
PRUNE_EVERY = 3600.0

_EVENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}")
_DELIVERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 26\r\nconnection: close\r\n\r\nrequest headers too slow.\n"
)


class Server:
    """A webhook server; ``start()``/``stop()`` for embedding, ``serve_forever()`` for the CLI.

    The port is bound here, so a port in use is a ComindError before anything starts."""

    def __init__(
        self,
        handler: Handler,
        secret: str,
        *,
        queue_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        queue_size: int = QUEUE_SIZE,
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        max_streams: int = MAX_STREAMS,
    ) -> None:
        if not secret:
            raise ComindError(
                "bot serve needs a webhook secret (the one configured in the "
                "GitHub or GitLab webhook); refusing to accept unsigned events"
            )
        self.handler = handler
        self.secret = secret
        self.max_body = max_body
        self.read_timeout = read_timeout
        self.handled = 0
        self.failed = 0
        self._sock = _listen(host, port)
        try:
            self.inbox = Inbox(queue_dir, queue_size)
        except BaseException:
            self._sock.close()
            raise
        self._jobs: queue.Queue[str | None] = queue.Queue()
        self._streams = max_streams
        config = uvicorn.Config(
            _App(self),
            http=_timed_protocol(read_timeout),
            loop="asyncio",
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            limit_concurrency=max_connections,
            timeout_graceful_shutdown=int(read_timeout) + 1,
        )
        self._uvicorn = uvicorn.Server(config)
        self._http = threading.Thread(
            target=self._uvicorn.run, kwargs={"sockets": [self._sock]}, name="comind-bot-http", daemon=True
        )
        self._worker = threading.Thread(target=self._work, name="comind-bot-worker", daemon=True)
        self._stopped = threading.Event()

    @property
    def host(self) -> str:
        return str(self._sock.getsockname()[0])

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def __repr__(self) -> str:  # never the secret
        return f"Server({self.url!r}, queued={len(self.inbox)})"

    def start(self) -> Server:
        for key in self.inbox.pending():  # a restart resumes where the last run stopped
            self._jobs.put(key)
        self._worker.start()
        self._http.start()
        log.info("bot serve: listening on %s", self.url)
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop accepting, let the worker finish what is queued (what it cannot finish within
        ``timeout`` waits in the inbox for the next start), and close the socket."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._http.is_alive():
            self._uvicorn.should_exit = True
            self._http.join()
        self._sock.close()
        if self._worker.is_alive():
            self._jobs.put(None)  # after everything already queued
            self._worker.join(timeout)
        if not self._worker.is_alive():
            self.inbox.close()

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
            log.info("bot serve: stopping")
        finally:
            self.stop()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def queued(self, key: str) -> None:
        self._jobs.put(key)

    def _work(self) -> None:
        while True:
            try:
                key = self._jobs.get(timeout=PRUNE_EVERY)
            except queue.Empty:
                self.inbox.prune()
                continue
            if key is None:
                return
            self._handle(key)

    def _handle(self, key: str) -> None:
        try:
            event = self.inbox.load(key)
        except (OSError, ValueError, KeyError) as exc:
            self.failed += 1
            log.error("bot serve: queued event %s is unreadable (%s); kept in %s", key, exc, self.inbox.failed)
            self.inbox.finish(key, failed=True)
            return
        if event is None:
            return
        try:
            self.handler(event.forge, event.event, json.loads(event.body))
        except Exception:
            self.failed += 1
            log.exception("bot serve: handling %s %s %s failed", event.forge, event.event, event.delivery)
            self.inbox.finish(key, failed=True)
            return
        self.handled += 1
        self.inbox.finish(key)
        log.info("bot serve: handled %s %s %s", event.forge, event.event, event.delivery)


def make_server(
    handler: Handler,
    secret: str,
    *,
    queue_dir: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    **limits: Any,
) -> Server:
    """A webhook server bound to ``host:port`` (port 0: any free port), not yet started."""
    return Server(handler, secret, queue_dir=queue_dir, host=host, port=port, **limits)


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


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line error (a port in use, an unknown host)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ComindError(f"bot serve: cannot listen on {host}:{port}: {_reason(exc)}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait out TIME_WAIT
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ComindError(f"bot serve: cannot listen on {host}:{port}: {_reason(exc)}") from exc
    sock.setblocking(False)
    return sock


def _reason(exc: OSError) -> str:
    return str(exc.strerror or exc).lower()


def _timed_protocol(timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers are not in within
    ``timeout`` seconds (uvicorn times out idle keep-alive connections only)."""

    class TimedProtocol(H11Protocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._headers_due = self.loop.call_later(timeout, self._headers_overdue)

        def _headers_overdue(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                self.transport.write(_TIMEOUT_RESPONSE)
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._headers_due.cancel()
            super().connection_lost(exc)

    return TimedProtocol


class _App:
    """The ASGI app: one request, one answer, never an exception out to uvicorn."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._streams: asyncio.Semaphore | None = None
        self._parsing: asyncio.Semaphore | None = None

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            status, text, headers = await self._answer(scope, receive)
        except _ClientGone:
            return
        except Exception:  # a bug, not the client: say so, keep serving
            log.exception("bot serve: request failed")
            status, text, headers = 500, "internal error", {}
        body = (text + "\n").encode()
        fields = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        fields += [(name.encode(), value.encode()) for name, value in headers.items()]
        fields.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": fields})
        await send({"type": "http.response.body", "body": body})

    async def _answer(self, scope: Message, receive: Receive) -> Answer:
        method, path = scope["method"], scope["path"]
        if method not in ("POST", "GET", "HEAD"):
            return 405, "method not allowed", {"Allow": "GET, HEAD, POST"}
        if method != "POST":
            return (200, "ok", {}) if path == "/healthz" else (404, "not found", {})
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:  # the first of repeated fields counts
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        client = str((scope.get("client") or ("?",))[0])
        try:
            forge, event, delivery = _identify(headers)
        except _Refused as refused:
            return refused.status, str(refused), {}
        app = self.server
        check = signatures.start(forge, app.secret, headers, time.time())
        if isinstance(check, str):
            log.warning("bot serve: refused %s %s from %s: %s", forge, event, client, check)
            return 401, "bad signature", {}
        length = headers.get("content-length", "")
        if not length.isdigit():
            return 411, "Content-Length required", {}
        if int(length) > app.max_body:
            return 413, f"body over {app.max_body} bytes", {}
        if headers.get("content-type", "").split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            return 415, "set the webhook's content type to application/json", {}
        if app.inbox.full():
            log.warning("bot serve: queue full, refused %s %s %s", forge, event, delivery)
            return 503, "busy, retry later", {"Retry-After": "60"}
        spool = app.inbox.spool(forge, event, delivery)
        try:
            try:
                async with asyncio.timeout(app.read_timeout):
                    async with self._semaphores()[0]:
                        await _receive(receive, spool, check)
            except TimeoutError:
                log.warning("bot serve: %s %s from %s: body not received in time", forge, event, client)
                return 408, "request body too slow", {}
            if not check.valid():
                log.warning("bot serve: refused %s %s from %s: bad signature", forge, event, client)
                return 401, "bad signature", {}
            async with self._semaphores()[1]:  # a 25 MB body parses into far more: one or two at once
                problem = await asyncio.to_thread(_not_an_object, spool)
            if problem:
                return 400, problem, {}
            try:
                key = await asyncio.to_thread(app.inbox.commit, spool)
            except InboxFull:
                return 503, "busy, retry later", {"Retry-After": "60"}
        finally:
            spool.discard()
        if key is None:
            log.info(
                "bot serve: %s %s %s received before (its id or its body), not queued again", forge, event, delivery
            )
            return 200, "duplicate delivery: received before", {}
        app.queued(key)
        log.info("bot serve: queued %s %s %s", forge, event, delivery)
        return 202, "queued", {}

    def _semaphores(self) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        if self._streams is None or self._parsing is None:  # made in the server's own event loop
            self._streams, self._parsing = asyncio.Semaphore(self.server._streams), asyncio.Semaphore(2)
        return self._streams, self._parsing


class _Refused(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class _ClientGone(Exception):
    """The client hung up mid-request: nobody to answer."""


async def _receive(receive: Receive, spool: Spool, check: signatures.Check) -> None:
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _ClientGone
        chunk = message.get("body", b"")
        check.update(chunk)
        spool.write(chunk)
        if not message.get("more_body", False):
            return


def _identify(headers: dict[str, str]) -> tuple[str, str, str]:
    """(forge, event, delivery id) of a webhook request; _Refused if it is none."""
    if headers.get("x-github-event"):
        forge, event = "github", headers["x-github-event"]
        delivery = headers.get("x-github-delivery", "")
    elif headers.get("x-gitlab-event"):
        forge, event = "gitlab", headers["x-gitlab-event"]
        names = ("idempotency-key", "webhook-id", "x-gitlab-event-uuid")
        delivery = next((headers[name] for name in names if headers.get(name)), "")
    else:
        raise _Refused(401, "not a signed GitHub or GitLab webhook")
    if not _EVENT.fullmatch(event):
        raise _Refused(400, "malformed event header")
    if delivery and not _DELIVERY.fullmatch(delivery):
        raise _Refused(400, "malformed delivery id")
    return forge, event, delivery


def _not_an_object(spool: Spool) -> str | None:
    try:
        payload = json.loads(spool.body())
    except (ValueError, RecursionError):
        return "body is not JSON"
    return None if isinstance(payload, dict) else "body is not a JSON object"
