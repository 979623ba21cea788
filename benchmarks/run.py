"""Every performance measure of DESIGN §9 in one run, printed as one markdown table.

    python benchmarks/run.py [REPO ...] [--check-repo REPO] [--python-repo REPO] [--repeat 3]
                             [--large] [--no-s3] [--only AREA,...] [--work DIR] [--keep]

REPO: a work tree or a bare git dir (default: the mirrors under /work/.mirror, vitejs+vite and
pydantic+pydantic, when present). Each is cloned into a scratch folder (``--work``, default a
temporary one), so nothing is written into the given repositories. Areas (``--only``):

* ``harvest`` (every REPO): the git message pass against ``git log --format=%H%x00%B``; a first
  harvest (messages, plus the reverted commits' diffs and anchors) against PyDriller reading the
  same history (messages, plus ``modified_files`` of every reverted commit); a re-harvest with
  nothing new (target < 100 ms);
* ``index`` (every REPO): the cold code index against ``ast-grep scan`` with an all-definitions
  rule over the same files (target ≤ 2×); ``comind index`` with nothing new (target < 0.5 s); the
  Python import graph against grimp (``--python-repo``);
* ``why`` (every REPO): ``comind why path::symbol`` warm (target < 100 ms), next to
  ``comind --version`` (the interpreter and CLI floor);
* ``check`` (``--check-repo``, default the first REPO): a 10-file change with a few hundred
  records and graph, ast-grep and dependency constraints (benchmarks/scenario.py): ``comind check
  --base main`` at a new head with the index cached, and warm (target < 2 s), against ``semgrep
  scan --baseline-commit`` with the same ast-grep rules as semgrep rules; ``comind check --all``
  with 12 ast-grep rules against ``ast-grep scan`` with the same rules (``--python-repo``);
* ``ledger``: compaction, log, search and show at 1,000 and 10,000 records (and 100,000 with
  ``--large``) on a local path and on a local S3 server (moto, in its own process; the records are
  written by ``Store.put_many`` into memory:// and copied into moto's backend, see bench_ledger.py).

Wall times are the best of ``--repeat`` runs, peer and comind taking turns so that load from
other processes hits both alike; CLI figures include the interpreter's start (byte code cached,
as in a real install). Peak RSS is each process's own (/usr/bin/time), the highest over the runs.
A missing peer tool prints "not installed"; a measure that fails prints its error in the table.
Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import Row, Timed, best_timed, cli_env, fmt, run_timed, tool  # noqa: E402

MIRRORS = Path("/work/.mirror")
DEFAULT_REPOS = ["vitejs+vite", "pydantic+pydantic"]
PYTHON = sys.executable
COMIND = str(Path(sys.executable).with_name("comind"))
AREAS = ("harvest", "index", "why", "check", "ledger")


# --- helpers ---------------------------------------------------------------------------------------


def name_of(repo: str) -> str:
    p = Path(repo)
    return p.parent.name.split("+")[-1] if p.name in ("repo", ".git") else p.name.removesuffix(".git")


def git(cwd: Path | str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def clone(repo: str, dest: Path) -> Path:
    if not dest.exists():
        subprocess.run(["git", "clone", "-q", repo, str(dest)], check=True)
    return dest


def comind(cwd: Path, *args: str) -> Timed:
    return run_timed([COMIND, *args], cwd=cwd, env=cli_env())


def child(code: str, *args: str, cwd: Path | None = None) -> tuple[float, float | None, Any]:
    """Run a Python snippet that prints JSON with its own "seconds": (seconds, peak RSS, the JSON)."""
    done = run_timed([PYTHON, "-c", code, *args], cwd=cwd, env=cli_env())
    out = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return float(out["seconds"]), done.rss, out


def version_of(cmd: list[str]) -> str:
    exe = tool(cmd[0])
    if exe is None:
        return "not installed"
    try:
        out = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=60, env=cli_env()).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    found = re.search(r"\d+\.\d+[\w.]*", out)
    return found.group(0) if found else out or "?"


def dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def machine() -> list[str]:
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from comind import __version__

    try:
        load = " · load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        load = ""
    versions = {
        "comind": __version__,
        "Python": platform.python_version(),
        "git": version_of(["git", "--version"]),
        "pygit2": dist_version("pygit2"),
        "ast-grep": version_of(["ast-grep", "--version"]),
        "ast-grep-py": dist_version("ast-grep-py"),
        "py-tree-sitter": dist_version("tree-sitter"),
        "semgrep": version_of(["semgrep", "--version"]) if tool("semgrep") else "not installed",
        "grimp": dist_version("grimp"),
        "pydriller": dist_version("pydriller"),
        "moto": dist_version("moto"),
    }
    return [
        f"- machine: {os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}{load}",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
    ]


def failed(area: str, measure: str, exc: BaseException) -> Row:
    text = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    if os.environ.get("COMIND_DEBUG"):
        traceback.print_exc()
    return Row(measure, None, area=area, note=f"failed: {text[:300]}")


def missing(area: str, measure: str, peer: str) -> Row:
    return Row(measure, None, peer_name=peer, area=area, note=f"{peer.split()[0]}: not installed")


def guarded(area: str, label: str, fn: Callable[[], list[Row]]) -> list[Row]:
    print(f"[{area}] {label} …", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        rows = fn()
    except (Exception, SystemExit) as exc:  # one broken measure never stops the others
        rows = [failed(area, label, exc)]
    print(f"[{area}] {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return rows


# --- harvest ---------------------------------------------------------------------------------------

MESSAGE_PASS = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import bench_walk
which, repo, ref = sys.argv[2:5]
start = time.perf_counter()
if which == "git":
    n = bench_walk.git_log(repo, ref)
else:
    n = bench_walk.message_pass(repo, ref)[0]
print(json.dumps({"seconds": time.perf_counter() - start, "commits": n}))
"""

PYDRILLER = """
import json, re, sys, time
from pydriller import Repository
repo, branch = sys.argv[1:3]
start = time.perf_counter()
reverted, n = [], 0
for c in Repository(repo, only_in_branch=branch).traverse_commits():
    n += 1
    reverted += re.findall(r"This reverts commit ([0-9a-f]{7,40})", c.msg)
lines = 0
for sha in dict.fromkeys(reverted):
    try:
        for c in Repository(repo, single=sha).traverse_commits():
            lines += sum(f.added_lines + f.deleted_lines for f in c.modified_files)
    except Exception:
        pass
print(json.dumps({"seconds": time.perf_counter() - start, "commits": n, "reverted": len(set(reverted)),
                  "lines": lines}))
"""


def harvest_rows(repo: str, work: Path, repeat: int) -> list[Row]:
    from comind.git import open_repo
    from comind.harvest.walker import default_branch

    area, name = "harvest", name_of(repo)
    rows: list[Row] = []
    git_dir = open_repo(repo).path.rstrip("/")
    ref = default_branch(git_dir)
    ours: list[tuple[float, float | None]] = []
    peer: list[tuple[float, float | None]] = []
    commits = 0
    for _ in range(repeat):
        s, rss, out = child(MESSAGE_PASS, str(HERE), "git", git_dir, ref)
        peer.append((s, rss))
        s, rss, out = child(MESSAGE_PASS, str(HERE), "pass", git_dir, ref)
        ours.append((s, rss))
        commits = int(out["commits"])
    rows.append(
        Row(
            f"{name}: message pass ({commits:,} commits)",
            min(o[0] for o in ours),
            "git log %H%x00%B",
            min(p[0] for p in peer),
            area=area,
            target="≤ 2×",
            rss=max((o[1] or 0) for o in ours) or None,
            peer_rss=max((p[1] or 0) for p in peer) or None,
            note="walk + revert markers + Lore + subject index, in process; git's output read and split in Python",
        )
    )

    dest = clone(repo, work / f"harvest-{name}")
    branch = git(dest, "symbolic-ref", "--short", "HEAD").strip()
    first: list[tuple[float, float | None]] = []
    theirs: list[tuple[float, float | None]] = []
    summary = ""
    drill_note = ""
    has_pydriller = dist_version("pydriller") != "not installed"
    for _ in range(repeat):
        shutil.rmtree(dest / ".git" / "comind", ignore_errors=True)
        done = comind(dest, "harvest")
        first.append((done.wall, done.rss))
        summary = done.stdout.decode().strip()
        if has_pydriller:
            s, rss, out = child(PYDRILLER, str(dest), branch)
            theirs.append((s, rss))
            drill_note = f"PyDriller: {out['commits']:,} commits, {out['reverted']} reverted commits' diffs"
    rows.append(
        Row(
            f"{name}: first harvest",
            min(f[0] for f in first),
            "PyDriller" if has_pydriller else "PyDriller (not installed)",
            min(t[0] for t in theirs) if theirs else None,
            area=area,
            rss=max((f[1] or 0) for f in first) or None,
            peer_rss=max((t[1] or 0) for t in theirs) or None if theirs else None,
            note=f"`comind harvest` CLI: {summary}; {drill_note or 'pydriller not installed'}",
        )
    )
    wall, rss = best_timed(lambda: comind(dest, "harvest"), max(repeat, 5))
    floor, floor_rss = best_timed(lambda: comind(dest, "--version"), max(repeat, 5))
    rows.append(
        Row(
            f"{name}: re-harvest, nothing new",
            wall,
            "comind --version",
            floor,
            area=area,
            target="< 100 ms",
            rss=rss,
            peer_rss=floor_rss,
            note="CLI wall incl. interpreter; the peer is the CLI's floor (start, parse arguments)",
        )
    )
    return rows


# --- index -----------------------------------------------------------------------------------------

GRAPH_CHILD = """
import json, sys, time
from comind.codeindex import CodeIndex
from comind.graph import ImportGraph
start = time.perf_counter()
graph = ImportGraph(CodeIndex(sys.argv[1], sys.argv[2]).snapshot("HEAD"))
seconds = time.perf_counter() - start
edges = sorted({(e.importer, e.imported, e.path, graph.path_of(e.imported) or "") for e in graph.import_edges()
                if e.internal})
print(json.dumps({"seconds": seconds, "edges": edges}))
"""


def index_rows(repo: str, work: Path, repeat: int, grimp_too: bool) -> list[Row]:
    import bench_index
    import pygit2

    area, name = "index", name_of(repo)
    rows: list[Row] = []
    tmp = work / f"index-{name}"
    shutil.rmtree(tmp, ignore_errors=True)
    files = tmp / "files"
    n_files, n_bytes = bench_index.export(pygit2.Repository(repo), "HEAD", files)
    rules = bench_index.rules_file(tmp)
    have_sg = tool("ast-grep") is not None
    ours: list[tuple[float, float | None]] = []
    theirs: list[tuple[float, float | None]] = []
    workers = 0.0
    report: dict[str, Any] = {}
    rss: float | None
    matches = 0
    cpu_ours: list[float] = []
    cpu_theirs: list[float] = []
    for i in range(repeat):
        if have_sg:
            wall, rss, matches, cpu = bench_index.run_cli(rules, files, tmp / "cli.json")
            theirs.append((wall, rss / 1024))
            cpu_theirs.append(cpu)
        _outer, kib, got, cpu = bench_index.run_index(repo, tmp / f"cold{i}.sqlite", "HEAD")
        report = dict(got)
        ours.append((float(report["wall"]), kib / 1024))
        cpu_ours.append(cpu)
        workers = max(workers, int(report["rss_workers"]) / 1024)
    cpu_note = (
        f"; CPU (user+sys) {min(cpu_ours):.2f} s vs {min(cpu_theirs):.2f} s = {min(cpu_ours) / min(cpu_theirs):.2f}×"
        if cpu_theirs
        else ""
    )
    note = (
        f"{n_files:,} files, {n_bytes / 1e6:.1f} MB: {report.get('parsed')} blobs parsed; definitions "
        f"with fingerprints, imports and calls vs ast-grep's matches only ({matches:,}); comind in process "
        f"(start-up excluded, as for a long CLI run), parse workers' peak {workers:.0f} MiB each{cpu_note}"
    )
    rows.append(
        Row(
            f"{name}: code index, cold",
            min(o[0] for o in ours),
            "ast-grep scan" if have_sg else "ast-grep (not installed)",
            min(t[0] for t in theirs) if theirs else None,
            area=area,
            target="≤ 2×",
            rss=max(o[1] or 0 for o in ours),
            peer_rss=max(t[1] or 0 for t in theirs) if theirs else None,
            note=note,
        )
    )
    dest = clone(repo, work / f"harvest-{name}")
    comind(dest, "index")
    wall, rss = best_timed(lambda: comind(dest, "index"), repeat)
    rows.append(
        Row(
            f"{name}: `comind index`, nothing new",
            wall,
            area=area,
            target="< 0.5 s",
            rss=rss,
            note="CLI wall incl. interpreter",
        )
    )
    if grimp_too:
        rows += grimp_rows(repo, name, files, tmp, repeat)
    shutil.rmtree(files, ignore_errors=True)
    return rows


GRIMP_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import grimp
start = time.perf_counter()
g = grimp.build_graph(sys.argv[2], cache_dir=None)
seconds = time.perf_counter() - start
edges = sorted([m, i] for m in g.modules for i in g.find_modules_directly_imported_by(m))
print(json.dumps({"seconds": seconds, "edges": edges}))
"""


def grimp_rows(repo: str, name: str, files: Path, tmp: Path, repeat: int) -> list[Row]:
    import bench_index

    area = "index"
    packages = bench_index.python_packages(files)
    if not packages:
        return []
    if dist_version("grimp") == "not installed":
        return [missing(area, f"{name}: Python import graph", "grimp (not installed)")]
    cache = tmp / f"cold{repeat - 1}.sqlite"
    rows = []
    for root, package in packages[:2]:
        ours: list[tuple[float, float | None]] = []
        theirs: list[tuple[float, float | None]] = []
        edges: list[tuple[str, str, str, str]] = []
        their_edges: list[list[str]] = []
        for _ in range(repeat):
            s, rss, out = child(GRIMP_CHILD, str(root), package)
            theirs.append((s, rss))
            their_edges = out["edges"]
            s, rss, out = child(GRAPH_CHILD, repo, str(cache))
            ours.append((s, rss))
            edges = [tuple(e) for e in out["edges"]]
        # the same files as grimp's: a monorepo may hold several packages of one name (tests/)
        folder = (root / package).relative_to(files).as_posix() + "/"
        mine = {(a, b) for a, b, pa, pb in edges if pa.startswith(folder) and pb.startswith(folder)}
        their = {(a, b) for a, b in their_edges}
        rows.append(
            Row(
                f"{name}: Python import graph ({package})",
                min(o[0] for o in ours),
                "grimp",
                min(t[0] for t in theirs),
                area=area,
                rss=max(o[1] or 0 for o in ours),
                peer_rss=max(t[1] or 0 for t in theirs),
                note=f"from the warm index, every language of the revision vs grimp's one package; "
                f"edges comind {len(mine)}, grimp {len(their)}, only comind {len(mine - their)}, "
                f"only grimp {len(their - mine)}",
            )
        )
    return rows


# --- why -------------------------------------------------------------------------------------------


def why_rows(repo: str, work: Path, repeat: int) -> list[Row]:
    area, name = "why", name_of(repo)
    dest = clone(repo, work / f"harvest-{name}")
    if not (dest / ".git" / "comind" / "harvest-state.json").exists():
        comind(dest, "harvest")
    comind(dest, "index")
    anchor = pick_anchor(dest)
    first = comind(dest, "why", anchor)  # fills the memo (re-anchoring, hop, verdicts)
    items = sum(1 for line in first.stdout.decode().splitlines() if line.startswith("  ") and "  T" in line)
    # comind and its floor take turns
    pairs = [(comind(dest, "why", anchor), comind(dest, "--version")) for _ in range(max(repeat, 7))]
    wall = min(p[0].wall for p in pairs)
    floor = min(p[1].wall for p in pairs)
    return [
        Row(
            f"{name}: `comind why {anchor}`, warm",
            wall,
            "comind --version",
            floor,
            area=area,
            target="< 100 ms",
            rss=max(p[0].rss or 0 for p in pairs),
            peer_rss=max(p[1].rss or 0 for p in pairs),
            note=f"CLI wall incl. interpreter; {items} records shown; first (cold) call {fmt(first.wall, 's')}; "
            "the peer is the CLI's floor (start, parse arguments)",
        )
    ]


def pick_anchor(dest: Path) -> str:
    """A path::symbol at HEAD that records are anchored to (the most anchored), else a big file's
    middle definition."""
    from collections import Counter

    from comind.workspace import Workspace

    ws = Workspace(dest)
    snapshot = ws.index.snapshot("HEAD")
    counts: Counter[str] = Counter()
    ledger = ws.ledger()
    ledger.sync(warn=False)
    for record in ledger.all():
        for a in record.anchors:
            if a.get("scope") == "symbol" and snapshot.find(a.get("path", ""), a.get("symbol", "")):
                counts[f"{a['path']}::{a['symbol']}"] += 1
    ledger.close()
    if counts:
        return counts.most_common(1)[0][0]
    path = max(snapshot.files, key=lambda p: (len(snapshot.definitions(p)), p))
    defs = snapshot.definitions(path)
    return f"{path}::{defs[len(defs) // 2].qualname}" if defs else path


# --- check -----------------------------------------------------------------------------------------

TS_RULES: list[dict[str, Any]] = [
    {"pattern": "console.log($$$A)"},
    {"kind": "debugger_statement"},
    {"pattern": "$A as any"},
    {"pattern": "new Function($$$A)"},
    {"pattern": "eval($$$A)"},
    {"pattern": "process.exit($$$A)"},
    {"pattern": "JSON.parse($$$A)"},
    {"pattern": "setTimeout($$$A)"},
    {"kind": "arrow_function"},
    {"pattern": "throw new Error($$$A)"},
    {"kind": "string", "regex": "TODO"},
    {"kind": "function_declaration", "inside": {"kind": "function_declaration", "stopBy": "end"}},
]


def check_rows(repo: str, work: Path, repeat: int) -> list[Row]:
    import scenario

    area, name = "check", name_of(repo)
    rows: list[Row] = []
    dest = work / f"check-{name}"
    info = scenario.build(repo, dest)
    pristine = work / f"check-{name}-pristine"
    if not pristine.exists():  # what CI keeps from the previous pipeline (on main): then a new head arrives
        comind(dest, "index", "--rev", "HEAD")
        comind(dest, "index", "--rev", "main")
        run_timed([COMIND, "check", "--base", "main~1", "--head", "main"], cwd=dest, env=cli_env(), check=False)
        shutil.copytree(dest, pristine, symlinks=True)
    change = (
        f"{info['files_changed']} files changed ({info['base'][:10]}..{info['head'][:10]}), "
        f"{info['records']} records written + the harvest's"
    )
    # first check of a new head with the index cached: a fresh copy each time
    first: list[tuple[float, float | None]] = []
    for i in range(repeat):
        copy = work / f"check-{name}-run{i}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(pristine, copy, symlinks=True)
        done = run_timed([COMIND, "check", "--base", "main"], cwd=copy, env=cli_env(), check=False)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"comind check exited {done.returncode}")
        first.append((done.wall, done.rss))
        shutil.rmtree(copy, ignore_errors=True)
    semgrep = tool("semgrep")
    sg_env = cli_env(
        SEMGREP_SETTINGS_FILE=str(work / "semgrep-settings.yml"),
        SEMGREP_LOG_FILE=str(work / "semgrep.log"),
        SEMGREP_VERSION_CACHE_PATH=str(work / "semgrep-v"),
    )
    sg_cmd = [
        semgrep or "semgrep",
        "scan",
        "--baseline-commit",
        info["base"],
        "--config",
        str(dest / ".bench" / "semgrep.yml"),
        "--json",
        "--metrics=off",
        "--disable-version-check",
        "--quiet",
    ]
    warm: list[tuple[float, float | None]] = []
    peer: list[tuple[float, float | None]] = []
    findings = sg_findings = -1
    run_timed([COMIND, "check", "--base", "main"], cwd=dest, env=cli_env(), check=False)  # fills the caches
    for _ in range(repeat):
        done = run_timed([COMIND, "check", "--base", "main", "--format", "json"], cwd=dest, env=cli_env(), check=False)
        warm.append((done.wall, done.rss))
        try:
            findings = len(json.loads(done.stdout)["findings"])
        except (ValueError, KeyError):
            findings = -1
        if semgrep:
            got = run_timed(sg_cmd, cwd=dest, env=sg_env, check=False)
            peer.append((got.wall, got.rss))
            try:
                sg_findings = len(json.loads(got.stdout)["results"])
            except (ValueError, KeyError):
                sg_findings = -1
    peer_name = "semgrep --baseline-commit" if semgrep else "semgrep (not installed)"
    what = (
        "7 constraints (4 ast-grep, 2 graph, 1 dependency), dead ends of the harvested attempts, stale "
        "records and context; semgrep: the 4 ast-grep rules as semgrep rules"
    )
    rows.append(
        Row(
            f"{name}: `comind check --base main`, new head, index cached",
            min(f[0] for f in first),
            peer_name,
            min(p[0] for p in peer) if peer else None,
            area=area,
            target="< 2 s",
            rss=max(f[1] or 0 for f in first),
            peer_rss=max(p[1] or 0 for p in peer) if peer else None,
            note=f"{change}; the first check of this head (caches as a check of main left them: index "
            f"of both sides, ledger view): verdicts and re-anchoring computed; {what}",
        )
    )
    rows.append(
        Row(
            f"{name}: `comind check --base main`, warm",
            min(w[0] for w in warm),
            peer_name,
            min(p[0] for p in peer) if peer else None,
            area=area,
            target="< 2 s",
            rss=max(w[1] or 0 for w in warm),
            peer_rss=max(p[1] or 0 for p in peer) if peer else None,
            note=f"the same change checked again; findings: comind {findings} (notes included), "
            f"semgrep {sg_findings if peer else 'n/a'}",
        )
    )
    return rows


def check_all_rows(repo: str, work: Path, repeat: int, n_rules: int = 12) -> list[Row]:
    """`comind check --all` with N ast-grep constraints against `ast-grep scan` with the same rules."""
    import bench_checks
    import scenario
    import yaml

    area, name = "check", name_of(repo)
    dest = clone(repo, work / f"all-{name}")
    language = scenario.main_language(dest, "HEAD")
    sg_lang = "python" if language == "python" else "typescript"
    pool = bench_checks.AST_GREP_RULES if language == "python" else TS_RULES
    rules = [pool[i % len(pool)] for i in range(n_rules)]
    glob = "**/*.py" if language == "python" else "**/*.ts"
    marker = dest / ".git" / "comind" / "bench-all.json"
    if not marker.exists():
        from comind.anchoring import resolve_anchor
        from comind.anchors import parse_anchor
        from comind.records import new_record
        from comind.workspace import Workspace

        ws = Workspace(dest)
        anchor = [resolve_anchor(ws.index, parse_anchor("repo:", "subject"), "HEAD")]
        prov = {"actor": "p-bench", "author_kind": "human", "source": "cli"}
        ws.store.put_many(
            [
                new_record(
                    "constraint",
                    title=f"rule {i}",
                    anchors=anchor,
                    provenance=prov,
                    fields={
                        "rule": f"rule {i}",
                        "severity": "must",
                        "check": {"type": "ast-grep", "language": sg_lang, "files": [glob], "rule": rule},
                    },
                )
                for i, rule in enumerate(rules)
            ]
        )
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("{}")
    sg = work / f"all-{name}-sg"
    shutil.rmtree(sg, ignore_errors=True)
    (sg / "rules").mkdir(parents=True)
    for i, rule in enumerate(rules):
        (sg / "rules" / f"r{i}.yml").write_text(
            yaml.safe_dump(
                {
                    "id": f"r{i}",
                    "language": sg_lang,
                    "severity": "warning",
                    "message": f"rule {i}",
                    "rule": rule,
                    "files": [glob],
                }
            )
        )
    (sg / "sgconfig.yml").write_text("ruleDirs: [rules]\n")
    ast_grep = tool("ast-grep")
    files = len([p for p in git(dest, "ls-files", glob).split("\n") if p])
    cold: list[tuple[float, float | None]] = []
    warm: list[tuple[float, float | None]] = []
    peer: list[tuple[float, float | None]] = []
    ours_n = theirs_n = -1
    comind(dest, "index")
    for _ in range(repeat):
        for cache in (dest / ".git" / "comind").glob("checks.sqlite*"):
            cache.unlink()
        done = run_timed(
            [COMIND, "check", "--all", "--no-harvest", "--format", "json"], cwd=dest, env=cli_env(), check=False
        )
        cold.append((done.wall, done.rss))
        done = run_timed(
            [COMIND, "check", "--all", "--no-harvest", "--format", "json"], cwd=dest, env=cli_env(), check=False
        )
        warm.append((done.wall, done.rss))
        try:
            ours_n = sum(1 for f in json.loads(done.stdout)["findings"] if f["type"] == "violation")
        except (ValueError, KeyError):
            ours_n = -1
        if ast_grep:
            # --no-ignore hidden: comind reads every tracked file, dot-folders included
            got = run_timed(
                [ast_grep, "scan", "-c", str(sg / "sgconfig.yml"), "--no-ignore", "hidden", "--json=stream", "."],
                cwd=dest,
                env=cli_env(),
                check=False,
            )
            peer.append((got.wall, got.rss))
            theirs_n = sum(1 for line in got.stdout.splitlines() if line.strip())
    peer_name = "ast-grep scan" if ast_grep else "ast-grep (not installed)"
    note = f"{files:,} {language} files, {n_rules} rules; matches: comind {ours_n}, ast-grep {theirs_n}"
    best = min(p[0] for p in peer) if peer else None
    prss = max(p[1] or 0 for p in peer) if peer else None
    return [
        Row(
            f"{name}: `comind check --all`, {n_rules} ast-grep rules, cold",
            min(c[0] for c in cold),
            peer_name,
            best,
            area=area,
            rss=max(c[1] or 0 for c in cold),
            peer_rss=prss,
            note=note + "; per-blob result cache emptied",
        ),
        Row(
            f"{name}: `comind check --all`, {n_rules} ast-grep rules, warm",
            min(w[0] for w in warm),
            peer_name,
            best,
            area=area,
            rss=max(w[1] or 0 for w in warm),
            peer_rss=prss,
            note="nothing changed since the last run (results cached per rule and blob)",
        ),
    ]


# --- ledger ----------------------------------------------------------------------------------------


def ledger_rows(large: bool, use_s3: bool, repeat: int) -> list[Row]:
    import bench_ledger

    sizes = [1000, 10000] + ([100000] if large else [])
    if use_s3 and dist_version("moto") == "not installed":
        return [*bench_ledger.measures(sizes, False, repeat), missing("ledger", "S3 measures", "moto (not installed)")]
    return bench_ledger.measures(sizes, use_s3, repeat)


# --- the table -------------------------------------------------------------------------------------


def print_rows(rows: list[Row]) -> None:
    print("| area | measure | comind | peer | peer figure | ratio | target | peak RSS comind | peak RSS peer | note |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [
            r.area,
            r.measure,
            fmt(r.comind, r.unit),
            r.peer_name,
            fmt(r.peer, r.unit),
            r.ratio,
            r.target,
            f"{r.rss:.0f} MiB" if r.rss else "",
            f"{r.peer_rss:.0f} MiB" if r.peer_rss else "",
            r.note.replace("|", "/"),
        ]
        print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    ap.add_argument("repos", nargs="*", help="work trees or git dirs (default: mirrors of vite and pydantic)")
    ap.add_argument("--check-repo", help="repository of the `comind check` scenario (default: the first REPO)")
    ap.add_argument(
        "--python-repo",
        help="Python repository for grimp and the --all check (default: the first REPO with a Python package)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="also 100,000 ledger records (slow)")
    ap.add_argument("--no-s3", action="store_true", help="skip the ledger measures on a local S3 server")
    ap.add_argument("--only", default=",".join(AREAS), help=f"comma-separated areas of {', '.join(AREAS)}")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args(argv)
    areas = [a.strip() for a in args.only.split(",") if a.strip()]
    for a in areas:
        if a not in AREAS:
            ap.error(f"unknown area {a!r} (one of {', '.join(AREAS)})")
    repos = args.repos or [str(MIRRORS / m / "repo") for m in DEFAULT_REPOS if (MIRRORS / m / "repo").exists()]
    if not repos and set(areas) - {"ledger"}:
        ap.error("no repository given and no mirror found under /work/.mirror")
    work = args.work or Path(tempfile.mkdtemp(prefix="comind-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    python_repo = args.python_repo or next(
        (r for r in repos if name_of(r) in ("pydantic", "flask", "requests", "pytest", "sympy")), None
    )
    rows: list[Row] = []
    started = time.perf_counter()
    try:
        for repo in repos:

            def each(fn: Callable[..., list[Row]], *more: Any, r: str = repo) -> Callable[[], list[Row]]:
                return lambda: fn(r, work, args.repeat, *more)

            if "harvest" in areas:
                rows += guarded("harvest", name_of(repo), each(harvest_rows))
            if "index" in areas:
                rows += guarded("index", name_of(repo), each(index_rows, repo == python_repo))
            if "why" in areas:
                rows += guarded("why", name_of(repo), each(why_rows))
        if "check" in areas:
            check_repo = args.check_repo or (repos[0] if repos else None)
            if check_repo:
                rows += guarded("check", name_of(check_repo), lambda: check_rows(check_repo, work, args.repeat))
            if python_repo:
                rows += guarded(
                    "check", f"--all on {name_of(python_repo)}", lambda: check_all_rows(python_repo, work, args.repeat)
                )
        if "ledger" in areas:
            rows += guarded("ledger", "1,000 … records", lambda: ledger_rows(args.large, not args.no_s3, args.repeat))
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\n## comind benchmarks\n")
    print("\n".join(machine()))
    print(
        f"- command: `{' '.join([Path(sys.executable).name, 'benchmarks/run.py', *(argv or sys.argv[1:])])}` "
        f"({time.perf_counter() - started:.0f} s); best of {args.repeat}, CLI figures incl. interpreter start\n"
    )
    print_rows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
