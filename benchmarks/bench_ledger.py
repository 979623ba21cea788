"""Ledger benchmarks: compaction, log, search and show at several sizes, local and on S3.

    python benchmarks/bench_ledger.py [--sizes 1000,10000] [--s3-sizes 1000,10000] [--no-s3]

Each figure is the best of a few runs (compactions: one run each, they change the store). Records are
written straight into the store (not through the CLI) so that setting up 100,000 records stays quick;
every timed step is what a user runs. On S3 (a moto server on 127.0.0.1, ~5 ms per request) each
put_many journals its records along with their keys, so a compaction reads one journal object per
write instead of one object per record.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import Row, best_timed, cli_env, print_table, run_timed  # noqa: E402

WORDS = ["cache", "redis", "session", "token", "retry", "timeout", "schema", "permission", "handler", "query",
         "index", "lock"]


def make_records(n: int, seed: str = "") -> list:  # type: ignore[type-arg]
    from comind.anchors import parse_anchor
    from comind.records import new_record

    prov = {"actor": "p-bench", "author_kind": "human", "source": "cli"}
    out = []
    for i in range(n):
        w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)]
        out.append(new_record("gotcha", title=f"{seed}{w[0]} {w[1]} trap {i}",
                              body=f"When {w[2]} is used, {w[0]} breaks.",
                              anchors=[parse_anchor(f"app/mod{i % 97}.py::f{i % 13}")],
                              fields={"symptom": f"{w[1]} fails", "cause": f"{w[2]} unset"}, provenance=prov,
                              created_at="2026-11-01T00:00:00Z"))
    return out


@contextmanager
def s3_server() -> Iterator[str]:
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ.update({"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "us-east-1",
                       "AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"})
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                 aws_secret_access_key="x").create_bucket(Bucket="bench")
    try:
        yield "s3://bench"
    finally:
        server.stop()


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=path, check=True, env={**os.environ, "GIT_AUTHOR_NAME": "b",
                       "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"})
    return path


def cli_time(repo: Path, *args: str, store: str) -> Callable[[], tuple[float, float | None]]:
    """One CLI run as users start it (byte code cached): (wall seconds, peak RSS MiB)."""
    comind = str(Path(sys.executable).parent / "comind")

    def run() -> tuple[float, float | None]:
        done = run_timed([comind, "-C", str(repo), "--store", store, *args], env=cli_env())
        return done.wall, done.rss

    return run


COMPACT = """
import sys, time
from comind.store import Store
store = Store(sys.argv[1])
start = time.perf_counter()
store.compact()
print(time.perf_counter() - start)
"""


def measures(sizes: list[int], use_s3: bool = True, repeat: int = 3, s3_sizes: list[int] | None = None) -> list[Row]:
    from comind.store import Store

    rows: list[Row] = []
    locations = ["local"] + (["s3"] if use_s3 else [])
    with tempfile.TemporaryDirectory() as tmp, (s3_server() if use_s3 else _nothing()) as s3:
        for where in locations:
            for n in (s3_sizes or sizes) if where == "s3" else sizes:
                base = Path(tmp) / f"{where}-{n}"
                repo = git_repo(base / "repo")
                url = str(base / "store") if where == "local" else f"{s3}/n{n}"
                store = Store(url)
                records = make_records(n)
                store.put_many(records)
                start = time.perf_counter()
                store.compact()  # the first: no snapshot to start from, so it lists the inbox
                rows.append(Row(f"first compaction, {n:,} records ({where})", time.perf_counter() - start,
                                area="ledger", note="in the benchmark process"))
                # compaction of 1,000 new records on top of n already compacted
                store.put_many(make_records(1000, seed="new "))
                # timed in a child process (its own figure, without the start-up) for its peak RSS
                done = run_timed([sys.executable, "-c", COMPACT, url], env=cli_env())
                rows.append(Row(f"compact 1,000 new onto {n:,} ({where})", float(done.stdout), rss=done.rss,
                                area="ledger", target="< 1 s", note="moto server" if where == "s3" else ""))
                cli_time(repo, "log", "--json", store=url)()  # cold: fills the view
                for label, args, target in (("log --json", ("log", "--json"), ""),
                                            ("search", ("search", "redis", "session"), ""),
                                            ("show ID", ("show", records[n // 2].id), "< 100 ms")):
                    wall, rss = best_timed(cli_time(repo, *args, store=url), repeat)
                    rows.append(Row(f"{label}, {n:,} records, warm ({where})", wall, rss=rss, area="ledger",
                                    target=target if where == "local" else "",
                                    note="wall incl. interpreter start"))
    return rows


@contextmanager
def _nothing() -> Iterator[str]:
    yield ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--s3-sizes", help="sizes on S3 (default: --sizes); setting up 100,000 on moto takes long")
    parser.add_argument("--no-s3", action="store_true")
    args = parser.parse_args()
    s3_sizes = [int(s) for s in args.s3_sizes.split(",")] if args.s3_sizes else None
    rows = measures([int(s) for s in args.sizes.split(",")], not args.no_s3, s3_sizes=s3_sizes)
    rows.append(Row("peak RSS of the benchmark process", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                    unit="MiB"))
    print_table("ledger", rows)


if __name__ == "__main__":
    main()
