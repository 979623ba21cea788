"""Ledger benchmarks: compaction, log, search and show at several sizes, local and on S3.

    python benchmarks/bench_ledger.py [--sizes 1000,10000] [--s3-sizes 1000,10000] [--no-s3] [--s3-latency MS]

Each figure is the best of a few runs (compactions: one run each, they change the store); every timed
step is what a user runs. Records are written straight into the store (not through the CLI), the same
records at every location of a size, so that setting up 100,000 records stays quick. On S3 the server is
moto in its own process (one bucket per size): `Store.put_many` writes the records into a memory://
store, and its objects (inbox, journal entries and their records objects, byte for byte what it writes to
S3) are put straight into moto's backend, since moto serves ~150 requests a second (its own CPU, ~6 ms
per request) and 100,000 PUTs would take ~12 minutes. The first compaction, the 1,000 new records and
everything timed go over HTTP. Each put_many journals its records along with their keys, so a compaction
reads one journal object per write instead of one object per record. Moto scans the whole bucket for
every list request (and sorts what matches): at 100,000 records ~0.2 s even for a prefix with few keys,
~0.7 s a 1,000-key page of the inbox, where S3 answers in tens of milliseconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import Row, best_timed, cli_env, print_table, run_timed  # noqa: E402

WORDS = [
    "cache",
    "redis",
    "session",
    "token",
    "retry",
    "timeout",
    "schema",
    "permission",
    "handler",
    "query",
    "index",
    "lock",
]


def make_records(n: int, seed: str = "") -> list:  # type: ignore[type-arg]
    from comind.anchors import parse_anchor
    from comind.records import new_record

    prov = {"actor": "p-bench", "author_kind": "human", "source": "cli"}
    out = []
    for i in range(n):
        w = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)]
        out.append(
            new_record(
                "gotcha",
                title=f"{seed}{w[0]} {w[1]} trap {i}",
                body=f"When {w[2]} is used, {w[0]} breaks.",
                anchors=[parse_anchor(f"app/mod{i % 97}.py::f{i % 13}")],
                fields={"symptom": f"{w[1]} fails", "cause": f"{w[2]} unset"},
                provenance=prov,
                created_at="2026-11-01T00:00:00Z",
            )
        )
    return out


MOTO = """
import logging, sys
from moto.server import ThreadedMotoServer
from moto.s3.models import s3_backends
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
for line in sys.stdin:  # "BUCKET FILE": put the objects of FILE (see Moto.seed) straight into the bucket
    bucket, path = line.split()
    backend = next(b["aws"] for b in s3_backends.values() if bucket in b["aws"].buckets)
    n = 0
    with open(path, "rb") as f:
        while head := f.readline():
            key, size = head.split()
            backend.put_object(bucket, key.decode(), f.read(int(size)))
            n += 1
    print(n, flush=True)
server.stop()
"""


class LatencyProxy:
    """A TCP proxy in front of moto that holds every chunk sent to the server for `delay` seconds: the
    round trip of a real network, which a server on 127.0.0.1 does not have (requests sent at once
    wait once, requests sent one after another wait each time)."""

    def __init__(self, port: int, delay: float) -> None:
        import asyncio
        import threading

        self.target, self.delay = port, delay
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._serve, "127.0.0.1", 0), self.loop).result()
        self.port = int(server.sockets[0].getsockname()[1])

    async def _serve(self, reader: Any, writer: Any) -> None:
        import asyncio

        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)

        async def pipe(source: Any, sink: Any, delay: float) -> None:
            try:
                while data := await source.read(65536):
                    if delay:
                        await asyncio.sleep(delay)
                    sink.write(data)
                    await sink.drain()
            finally:
                sink.close()

        await asyncio.gather(
            pipe(reader, upstream_writer, self.delay), pipe(upstream_reader, writer, 0), return_exceptions=True
        )


class Moto:
    """A moto S3 server in its own process (so that it does not share the benchmark's GIL); with
    `latency_ms`, reached through a `LatencyProxy`."""

    def __init__(self, latency_ms: float = 0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", MOTO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        port = int(self.process.stdout.readline())
        self.seed_endpoint = f"http://127.0.0.1:{port}"  # buckets are made without the latency
        if latency_ms:
            port = LatencyProxy(port, latency_ms / 1000).port
        self.endpoint = f"http://127.0.0.1:{port}"
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "x",
                "AWS_SECRET_ACCESS_KEY": "x",
                "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": self.endpoint,
                "AWS_ALLOW_HTTP": "true",
            }
        )

    def bucket(self, name: str) -> str:
        import boto3

        boto3.client(
            "s3",
            endpoint_url=self.seed_endpoint,
            region_name="us-east-1",
            aws_access_key_id="x",
            aws_secret_access_key="x",
        ).create_bucket(Bucket=name)
        return f"s3://{name}"

    def seed(self, url: str, records: list, tmp: Path) -> int:  # type: ignore[type-arg]
        """Write `records` with Store.put_many into a memory:// store and copy its objects under `url` in
        moto's backend, without HTTP; returns how many objects."""
        import obstore as obs

        from comind import store as store_module
        from comind.store import Store

        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        memory = f"memory://bench-seed-{bucket}-{prefix}"
        Store(memory).put_many(records)
        objects = store_module.open_object_store(memory)
        path = tmp / "seed.objects"
        with path.open("wb") as f:
            for batch in obs.list(objects, chunk_size=1000):
                for meta in batch:
                    data = bytes(obs.get(objects, meta["path"]).bytes())
                    f.write(f"{prefix}/{meta['path']} {len(data)}\n".encode() + data)
        store_module._MEMORY.pop(memory, None)  # free it: memory:// stores live as long as the process
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{bucket} {path}\n")
        self.process.stdin.flush()
        count = int(self.process.stdout.readline())
        path.unlink()
        return count

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def s3_server(latency_ms: float = 0) -> Iterator[Moto]:
    moto = Moto(latency_ms)
    try:
        yield moto
    finally:
        moto.close()


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", *args],
            cwd=path,
            check=True,
            env={
                **os.environ,
                "GIT_AUTHOR_NAME": "b",
                "GIT_AUTHOR_EMAIL": "b@b",
                "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@b",
            },
        )
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


def measures(
    sizes: list[int], use_s3: bool = True, repeat: int = 3, s3_sizes: list[int] | None = None, s3_latency_ms: float = 0
) -> list[Row]:
    from comind.store import Store

    rows: dict[str, list[Row]] = {"local": [], "s3": []}  # local rows first, as the table always had them
    s3_sizes = sizes if s3_sizes is None else s3_sizes
    server = f"moto server, {s3_latency_ms:g} ms added to each request" if s3_latency_ms else "moto server"
    with tempfile.TemporaryDirectory() as tmp, s3_server(s3_latency_ms) if use_s3 else _nothing() as moto:
        for n in sorted(set(sizes) | (set(s3_sizes) if moto else set())):
            start = time.perf_counter()
            records = make_records(n)
            made = time.perf_counter() - start
            for where in ("local", "s3"):
                if n not in (sizes if where == "local" else s3_sizes if moto else ()):
                    continue
                base = Path(tmp) / f"{where}-{n}"
                repo = git_repo(base / "repo")
                start = time.perf_counter()
                if where == "s3" and moto:
                    url = f"{moto.bucket(f'bench-n{n}')}/ledger"  # a bucket per size: moto scans all of one per list
                    objects = moto.seed(url, records, base)
                    how = f"Store.put_many into memory://, {objects:,} objects copied into moto"
                else:
                    url = str(base / "store")
                    Store(url).put_many(records)
                    how = "Store.put_many"
                print(
                    f"[ledger] {n:,} records ({where}): written in {time.perf_counter() - start:.0f} s ({how}; "
                    f"records made once per size, in {made:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                store = Store(url)
                start = time.perf_counter()
                store.compact()  # the first: no snapshot to start from, so it lists the inbox
                rows[where].append(
                    Row(
                        f"first compaction, {n:,} records ({where})",
                        time.perf_counter() - start,
                        area="ledger",
                        note="in the benchmark process"
                        + ("; moto's listing of the inbox included" if where == "s3" else ""),
                    )
                )
                # compaction of 1,000 new records on top of n already compacted
                store.put_many(make_records(1000, seed="new "))
                # timed in a child process (its own figure, without the start-up) for its peak RSS
                done = run_timed([sys.executable, "-c", COMPACT, url], env=cli_env())
                rows[where].append(
                    Row(
                        f"compact 1,000 new onto {n:,} ({where})",
                        float(done.stdout),
                        rss=done.rss,
                        area="ledger",
                        target="< 1 s",
                        note=server if where == "s3" else "",
                    )
                )
                cli_time(repo, "log", "--json", store=url)()  # cold: fills the view
                for label, args, target in (
                    ("log --json", ("log", "--json"), ""),
                    ("search", ("search", "redis", "session"), ""),
                    ("show ID", ("show", records[n // 2].id), "< 100 ms"),
                ):
                    wall, rss = best_timed(cli_time(repo, *args, store=url), repeat)
                    rows[where].append(
                        Row(
                            f"{label}, {n:,} records, warm ({where})",
                            wall,
                            rss=rss,
                            area="ledger",
                            target=target if where == "local" else "",
                            note="wall incl. interpreter start"
                            + (f"; {server}" if where == "s3" and s3_latency_ms else ""),
                        )
                    )
                print(f"[ledger] {n:,} records ({where}): done", file=sys.stderr, flush=True)
    return rows["local"] + rows["s3"]


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--s3-sizes", help="sizes on S3 (default: --sizes)")
    parser.add_argument("--no-s3", action="store_true")
    parser.add_argument(
        "--s3-latency",
        type=float,
        default=0,
        metavar="MS",
        help="hold each request to moto this long, as a network would (default: 0)",
    )
    args = parser.parse_args()
    s3_sizes = [int(s) for s in args.s3_sizes.split(",")] if args.s3_sizes else None
    rows = measures(
        [int(s) for s in args.sizes.split(",")], not args.no_s3, s3_sizes=s3_sizes, s3_latency_ms=args.s3_latency
    )
    rows.append(
        Row("peak RSS of the benchmark process", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, unit="MiB")
    )
    print_table("ledger", rows)


if __name__ == "__main__":
    main()
