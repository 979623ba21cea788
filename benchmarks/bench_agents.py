"""Benchmark the agent surfaces: `comind hook` and `comind preflight --diff` beside `comind --version`.

Run by hand (not a test), on a harvested clone it may commit to and reset:

    git clone --shared /work/.mirror/vitejs+vite/repo /tmp/hooks-vite && comind -C /tmp/hooks-vite harvest
    python benchmarks/bench_agents.py /tmp/hooks-vite [--repeat 30] [--must]

Warm, interleaved, each run a new process as the agent starts it (a new session id each time, so
every call does the whole work and prints its block): `comind --version`, `comind hook claude
SessionStart`, `comind hook claude PreToolUse` on a real Edit payload (a line added inside a
symbol records are on), and `comind preflight --diff` with the same edit in the working tree.
p50 and p95 of each, and the ratio of each p50 to `--version`'s.

Then at a new head: a commit is made, the first hook call is timed (it must answer from the
cached view and say so, not wait for the new head's work), and the background refresh it started
is timed to its end; the commit is reset afterwards. With --must, a `must` constraint with an
ast-grep check on the edited file's language is remembered and the PreToolUse runs its check
(the slow path: the check runs on in-memory commits of the file before and after the edit).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from common import cli_env, header, run_timed, tool

COMIND = tool("comind") or "comind"


def pick_edit(repo: Path) -> dict[str, Any]:
    """A real Edit payload: a comment line added inside the first symbol a record in the hooks'
    view is on (so the PreToolUse parses the file and shows records)."""
    view = json.loads((repo / ".git/comind/hooks/view.json").read_text())
    for entry in view["entries"].values():
        found = re.fullmatch(r"read (.+):(\d+)-(\d+)", entry.get("verify", ""))
        if not found:
            continue
        path, first, last = found.group(1), int(found.group(2)), int(found.group(3))
        file = repo / path
        if not file.is_file() or last - first < 2:
            continue
        lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
        line = lines[first]  # the symbol's second line: inside it
        if not line.strip() or lines.count(line) != 1:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        comment = "# comind bench\n" if path.endswith(".py") else "// comind bench\n"
        return {"file_path": str(file), "old_string": line, "new_string": line + indent + comment, "replace_all": False}
    raise SystemExit("no record in the hooks' view is on a symbol of a file in the work tree; harvest first")


def payload(repo: Path, event: str, args: dict[str, Any] | None = None) -> bytes:
    data: dict[str, Any] = {
        "session_id": f"bench-{uuid.uuid4()}",
        "transcript_path": str(Path(tempfile.gettempdir()) / "bench.jsonl"),
        "cwd": str(repo),
        "hook_event_name": event,
    }
    if args is None:
        data["source"] = "startup"
    else:
        data |= {"tool_name": "Edit", "tool_input": args, "tool_use_id": "toolu_bench"}
    return json.dumps(data).encode()


def hook_call(repo: Path, event: str, body: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(
        [COMIND, "hook", "claude", event], input=body, cwd=repo, capture_output=True, env=cli_env(), check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"comind hook claude {event} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return wall, done.stdout


def preflight(repo: Path, args: dict[str, Any]) -> float:
    file = Path(args["file_path"])
    original = file.read_text(encoding="utf-8")
    file.write_text(original.replace(args["old_string"], args["new_string"], 1), encoding="utf-8")
    try:
        return run_timed(
            [COMIND, "preflight", "--diff", "--format", "agent"], cwd=repo, env=cli_env(), check=False
        ).wall
    finally:
        file.write_text(original, encoding="utf-8")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(repo: Path, repeat: int, args: dict[str, Any]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"version": [], "session": [], "edit": [], "preflight": []}
    for _ in range(2):  # warm every cache first
        hook_call(repo, "SessionStart", payload(repo, "SessionStart"))
        hook_call(repo, "PreToolUse", payload(repo, "PreToolUse", args))
        preflight(repo, args)
    for _ in range(repeat):
        times["version"].append(run_timed([COMIND, "--version"], env=cli_env()).wall)
        times["session"].append(hook_call(repo, "SessionStart", payload(repo, "SessionStart"))[0])
        times["edit"].append(hook_call(repo, "PreToolUse", payload(repo, "PreToolUse", args))[0])
        times["preflight"].append(preflight(repo, args))
    return times


def wait_refresh(repo: Path, started: float, limit: float = 600.0) -> float:
    lock = repo / ".git/comind/hooks/refresh.lock"
    while lock.exists() and time.perf_counter() - started < limit:
        time.sleep(0.05)
    return time.perf_counter() - started


def new_head(repo: Path, args: dict[str, Any]) -> dict[str, Any]:
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "bench: a new head"], check=True)
    try:
        started = time.perf_counter()
        wall, out = hook_call(repo, "PreToolUse", payload(repo, "PreToolUse", args))
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        refresh = wait_refresh(repo, started)
        after, _ = hook_call(repo, "PreToolUse", payload(repo, "PreToolUse", args))
        return {"first": wall, "said": "note: as of" in text, "refresh": refresh, "after": after}
    finally:
        subprocess.run([*git, "reset", "-q", "--hard", "HEAD~1"], check=True)
        subprocess.run([COMIND, "-C", str(repo), "hook", "refresh"], check=True, env=cli_env())


def add_must(repo: Path, args: dict[str, Any]) -> str:
    path = Path(args["file_path"]).relative_to(repo).as_posix()
    language = {"py": "python", "ts": "typescript", "tsx": "tsx", "js": "javascript"}.get(path.rsplit(".", 1)[-1])
    if language is None:
        raise SystemExit(f"--must: no ast-grep language for {path}")
    spec = Path(tempfile.mkdtemp()) / "no-eval.yml"
    spec.write_text(f"type: ast-grep\nlanguage: {language}\nrule: {{pattern: 'eval($X)'}}\nmessage: 'eval of $X'\n")
    title = "bench: never eval input"
    done = subprocess.run(
        [COMIND, "-C", str(repo), "-q", "remember", "constraint", "--title", title, "--on", path, "--rule", "no eval",
         "--severity", "must", "--check", str(spec)],
        check=True, env=cli_env(), capture_output=True, text=True,
    )  # fmt: skip
    subprocess.run([COMIND, "-C", str(repo), "hook", "refresh"], check=True, env=cli_env())
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--must", action="store_true", help="also time a PreToolUse that runs a must check")
    opts = parser.parse_args()
    repo = opts.repo.resolve()
    subprocess.run([COMIND, "-C", str(repo), "hook", "refresh"], check=True, env=cli_env())
    files = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True)
    args = pick_edit(repo)
    times = measure(repo, opts.repeat, args)
    base = statistics.median(times["version"])
    print(f"\n### agent surfaces, {repo.name} ({files.stdout.count(chr(10)):,} files; {header()})\n")
    print(f"edit: {Path(args['file_path']).relative_to(repo)}; {opts.repeat} runs each, interleaved, warm\n")
    print("| measure | p50 | p95 | p50 / --version | target |")
    print("|---|---|---|---|---|")
    names = {
        "version": ("`comind --version`", ""),
        "session": ("`comind hook claude SessionStart`", "p95 < 100 ms"),
        "edit": ("`comind hook claude PreToolUse` (Edit)", "p95 < 100 ms"),
        "preflight": ("`comind preflight --diff`", "< 300 ms"),
    }
    for key, (label, target) in names.items():
        p50, p95 = statistics.median(times[key]), pct(times[key], 0.95)
        print(f"| {label} | {p50 * 1000:.0f} ms | {p95 * 1000:.0f} ms | {p50 / base:.2f}× | {target} |")
    head = new_head(repo, args)
    print(
        f"| new head: first PreToolUse | {head['first'] * 1000:.0f} ms | | {head['first'] / base:.2f}× | "
        f"must not wait (answered from the cache, said so: {'yes' if head['said'] else 'NO'}) |"
    )
    print(f"| new head: the background refresh, to its end | {head['refresh']:.2f} s | | | not waited on |")
    print(
        f"| new head: PreToolUse after the refresh | {head['after'] * 1000:.0f} ms | | {head['after'] / base:.2f}× | |"
    )
    if opts.must:
        record = add_must(repo, args)
        try:
            walls = [hook_call(repo, "PreToolUse", payload(repo, "PreToolUse", args))[0] for _ in range(opts.repeat)]
        finally:  # the clone's ledger as it was
            erase = [COMIND, "-C", str(repo), "-q", "ledger", "erase", record]
            subprocess.run(erase, check=True, env=cli_env(), capture_output=True)
            subprocess.run([COMIND, "-C", str(repo), "hook", "refresh"], check=True, env=cli_env())
        print(
            f"| PreToolUse running a must check (ast-grep) | {statistics.median(walls) * 1000:.0f} ms | "
            f"{pct(walls, 0.95) * 1000:.0f} ms | {statistics.median(walls) / base:.2f}× | |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
