"""Shared fixtures: real git repositories, a real S3-compatible server, the CLI run in-process."""

from __future__ import annotations

import logging
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# Deterministic git: a fixed identity, no user or system configuration.
os.environ.update(
    {
        "GIT_AUTHOR_NAME": "Ada Tester",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Tester",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        # the harvest's worker process only where a test asks for it (tests/harvest/test_worker.py):
        # the same records either way, and a test's result not left to the machine's load
        "COMIND_HARVEST_WORKER": "0",
    }
)
for _var in ("COMIND_STORE", "COMIND_CACHE", "COMIND_NOW", "COMIND_AUTHOR_KIND", "COMIND_DEBUG"):
    os.environ.pop(_var, None)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


SAMPLE = {
    "README.md": "demo\n",
    "a.py": "def f():\n    return 1\n",
    "app/__init__.py": "",
    "app/auth.py": "class Session:\n    def __init__(self, user):\n        self.user = user\n",
    "app/perm.py": "class Checker:\n    def check(self, user, perm):\n        if user.is_admin:\n"
    "            return True\n        return perm in user.grants\n",
    "app/db.py": "def raw_query(sql):\n    return sql\n",
    "app/handlers/__init__.py": "",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a small Python app in one commit on main."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for name, text in SAMPLE.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "initial commit")
    return path


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run `comind ARGS` in-process inside a repository and capture what it prints."""
    from comind.cli import main

    def run(repo_path: Path, *args: str) -> CliResult:
        capsys.readouterr()
        code = main(["-C", str(repo_path), *args]) if args and args[0] != "--version" else main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible server (moto) on 127.0.0.1 with a random port, for the whole session."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_url(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket on the local S3 server, with the standard AWS_* environment pointing at it."""
    import boto3

    bucket = f"comind-{uuid.uuid4().hex[:12]}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ALLOW_HTTP": "true",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/ledger"
