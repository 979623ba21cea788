"""The webhook server under load: a burst of signed events, and unauthenticated bodies in memory.

    python benchmarks/bench_server.py [--burst 200] [--bodies 24] [--body-mb 24]

Run by hand (never in the test suite). Both runs start `comind bot serve` as a user does, in a
fresh git repository, as a process of its own:

* burst: a fake GitHub (tests/fakes/forge.py, real HTTP) holds N pull requests, each with a
  `/comind help` comment by a writer; N signed `issue_comment` events are posted at once, one per
  pull request, and the run waits until the bot has answered every pull request (each once).
  Every delivery is then sent again: each must be answered 200 (received before) and handled no
  second time.
* memory: the server's resident set (VmRSS) when idle, then its peak (VmHWM, from /proc) while N
  clients post N-MB bodies at once, first unsigned (refused from the headers), then with a forged
  signature (streamed to disk while the HMAC is computed, then deleted).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from fakes import forge as fakeforge  # noqa: E402

SECRET = "bench secret"
TOKEN = "ghp_" + "B3nchT0k" * 5
WAIT = 600.0


def repository(tmp: Path) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


class Serve:
    """`comind bot serve --port 0` in a process of its own, its log in a file."""

    def __init__(self, repo: Path, env: dict[str, str]) -> None:
        self.log = repo.parent / "serve.log"
        command = [sys.executable, "-c", "from comind.cli import main; raise SystemExit(main())"]
        with self.log.open("w") as err:
            self.proc = subprocess.Popen(
                [*command, "-C", str(repo), "bot", "serve", "--port", "0"], stderr=err, env=env, cwd=repo
            )
        deadline = time.monotonic() + 60
        while "listening on" not in self.log.read_text():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"the server did not start:\n{self.log.read_text()}")
            time.sleep(0.05)
        self.url = self.log.read_text().split("listening on ")[1].split()[0]

    def status(self, field: str) -> int:
        """A /proc/PID/status field in kB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise KeyError(field)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def signed(event: str, body: bytes, delivery: str) -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "Content-Type": "application/json",
        "X-Hub-Signature-256": fakeforge.github_signature(SECRET, body),
    }


def burst(count: int) -> dict[str, object]:
    for fake in fakeforge.fake_github():
        return _burst(fake, count)
    raise AssertionError("no fake forge")


def _burst(fake: fakeforge.FakeGitHub, count: int) -> dict[str, object]:
    fake.server.RequestHandlerClass.disable_nagle_algorithm = True
    fake.add_token(TOKEN, "comind-bot")
    fake.set_permission("alice", "write")
    comments = []
    for number in range(1, count + 1):
        fake.add_pull(number, title=f"Change {number}", author="alice")
        comments.append(fake.add_issue_comment(number, "alice", "/comind help"))
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "COMIND_WEBHOOK_SECRET": SECRET,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_API_URL": fake.base,
            "COMIND_RETRY_BACKOFF": "0",
            "COMIND_FORGE_THROTTLE": "0",
        }
        server = Serve(repository(Path(tmp)), env)
        try:
            bodies = [json.dumps(fake.github_issue_comment_event(c)).encode() for c in comments]
            headers = [signed("issue_comment", body, f"burst-{n}") for n, body in enumerate(bodies)]

            def send(n: int) -> int:
                try:
                    return requests.post(server.url, data=bodies[n], headers=headers[n], timeout=60).status_code
                except requests.RequestException:
                    return 0

            start = time.monotonic()
            with ThreadPoolExecutor(count) as pool:
                codes = list(pool.map(send, range(count)))
            accepted = time.monotonic() - start

            def answered() -> list[int]:
                return [c["number"] for c in fake.issue_comments.values() if c["user"] == "comind-bot"]

            while len(set(answered())) < codes.count(202) and time.monotonic() - start < WAIT:
                time.sleep(0.1)
            done = time.monotonic() - start
            with ThreadPoolExecutor(50) as pool:
                again = list(pool.map(send, range(count)))
            time.sleep(1.0)  # a duplicate handled again would post a second answer by now
            replies = answered()
        finally:
            code = server.stop()
        log = server.log.read_text()
    return {
        "events": count,
        "accepted_202": codes.count(202),
        "refused": count - codes.count(202),
        "pull_requests_answered": len(set(replies)),
        "answers_posted": len(replies),
        "redelivered_200": again.count(200),
        "seconds_to_accept_all": round(accepted, 2),
        "seconds_to_answer_all": round(done, 2),
        "tracebacks_in_log": log.count("Traceback"),
        "exit_code": code,
    }


def memory(count: int, megabytes: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COMIND_WEBHOOK_SECRET": SECRET}
        server = Serve(repository(Path(tmp)), env)
        try:
            assert requests.get(server.url.rstrip("/") + "/healthz", timeout=60).status_code == 200
            idle = server.status("VmRSS")
            idle_peak = server.status("VmHWM")
            body = b'{"a": "' + b"x" * (megabytes * 1024 * 1024 - 9) + b'"}'

            def post(headers: dict[str, str]) -> int:
                try:
                    return requests.post(server.url, data=body, headers=headers, timeout=120).status_code
                except requests.ConnectionError:
                    return 0  # answered (401) and closed before the whole body was sent

            with ThreadPoolExecutor(count) as pool:
                unsigned = list(
                    pool.map(post, [{"X-GitHub-Event": "push", "Content-Type": "application/json"}] * count)
                )
            after_unsigned = server.status("VmHWM")
            forged_headers = signed("push", b"another body", "forged") | {"X-GitHub-Delivery": "forged"}
            with ThreadPoolExecutor(count) as pool:
                forged = list(pool.map(post, [forged_headers] * count))
            peak = server.status("VmHWM")
            left = sum(1 for _ in (Path(tmp) / "repo" / ".git" / "comind" / "webhooks" / "incoming").iterdir())
        finally:
            code = server.stop()
    return {
        "bodies": count,
        "body_mb": megabytes,
        "idle_rss_mb": round(idle / 1024, 1),
        "idle_peak_mb": round(idle_peak / 1024, 1),
        "peak_after_unsigned_mb": round(after_unsigned / 1024, 1),
        "peak_after_forged_mb": round(peak / 1024, 1),
        "peak_over_idle_mb": round((peak - idle) / 1024, 1),
        "unsigned_answers": sorted(set(unsigned)),
        "forged_answers": sorted(set(forged)),
        "bodies_left_on_disk": left,
        "exit_code": code,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", type=int, default=200, help="signed events on as many pull requests")
    parser.add_argument("--bodies", type=int, default=24, help="concurrent unauthenticated bodies")
    parser.add_argument("--body-mb", type=int, default=24, help="size of each body in MB")
    args = parser.parse_args()
    if not Path("/proc/self/status").exists():
        raise SystemExit("reads /proc: Linux only")
    print(json.dumps({"burst": burst(args.burst)}, indent=2), flush=True)
    print(json.dumps({"memory": memory(args.bodies, args.body_mb)}, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
