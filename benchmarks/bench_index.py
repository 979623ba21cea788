"""Benchmark the code index against ast-grep's CLI and the Python import graph against grimp.

Run by hand (not a test):

    python benchmarks/bench_index.py /path/to/repo-or-git-dir [--rev HEAD] [--repeat 3]

It exports the revision's indexable files to a temporary directory once, then, best of
``--repeat`` runs each, interleaved so machine noise hits both sides alike:

* cold: ``CodeIndex.snapshot`` on an empty cache, in a fresh process (peak RSS of it and its
  workers), against ``ast-grep scan`` with one all-definitions rule per language over the exported
  files (the same definition node kinds the index uses); also the CPU time of both, which on a
  busy machine says more than the wall time;
* warm: ``snapshot`` again on the filled cache, in-process and in a fresh process;
* import graph: ``ImportGraph`` of the warm snapshot against ``grimp.build_graph`` for each
  top-level Python package found (the edge sets are compared too).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

from comind.codeindex import MAX_FILE_SIZE, CodeIndex
from comind.languages import LANGUAGES, language_for_path

AST_GREP = shutil.which("ast-grep") or str(Path(sys.executable).with_name("ast-grep"))
NO_IGNORE = ("hidden", "dot", "exclude", "global", "parent", "vcs")


def export(repo: pygit2.Repository, rev: str, dest: Path) -> tuple[int, int]:
    """Write the files the index would parse; return (files, bytes)."""
    commit = repo.revparse_single(rev).peel(pygit2.Commit)
    count = size = 0
    stack = [(commit.tree, "")]
    while stack:
        tree, prefix = stack.pop()
        for entry in tree:
            path = prefix + (entry.name or "")
            if isinstance(entry, pygit2.Tree):
                stack.append((entry, path + "/"))
            elif (
                isinstance(entry, pygit2.Blob)
                and entry.filemode in (0o100644, 0o100755)
                and language_for_path(path)
                and entry.size <= MAX_FILE_SIZE
            ):
                target = dest / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(entry.data)
                count, size = count + 1, size + entry.size
    return count, size


def rules_file(dest: Path) -> Path:
    docs = []
    for lang in LANGUAGES.values():
        kinds = sorted(k for k, spec in lang.definition_kinds.items() if spec.kind)
        rule = {"any": [{"kind": k} for k in kinds]}
        docs.append(json.dumps({"id": f"defs-{lang.name}", "language": lang.ast_grep_name, "rule": rule}))
    path = dest / "rules.yml"
    path.write_text("\n---\n".join(docs) + "\n")  # JSON is YAML
    return path


def timed(cmd: list[str], out: Path) -> tuple[float, int, float]:
    """Run ``cmd`` with stdout to ``out``; (wall seconds, peak RSS KiB, CPU seconds).

    The peak RSS comes from /usr/bin/time: Linux carries a process's maxrss across fork and exec,
    so wait4() on a child of this (large) process would report at least this process's size.
    The CPU time (user + system, with the workers) tells more than the wall time when other work
    shares the machine: then parallel workers may not get the cores they would on a quiet one.
    """
    rss_file = out.with_suffix(".rss")
    with open(out, "wb") as sink:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", str(rss_file), *cmd], stdout=sink)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with status {done.returncode}")
    rss, user, system = rss_file.read_text().split()[-3:]
    return wall, int(rss), float(user) + float(system)


def run_cli(rules: Path, files: Path, out: Path) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS KiB, matches, CPU seconds) of one ast-grep scan.

    Every exported file is scanned, as the index parses them all: by default ast-grep skips hidden
    files and folders (vite's docs/.vitepress) and honours ignore files."""
    no_ignore = [arg for kind in NO_IGNORE for arg in ("--no-ignore", kind)]
    wall, rss, cpu = timed([AST_GREP, "scan", *no_ignore, "-r", str(rules), "--json=stream", str(files)], out)
    with open(out, "rb") as f:
        matches = sum(1 for _ in f)
    return wall, rss, matches, cpu


CHILD = """
import json, resource, sys, time
import pygit2, comind.languages  # imported on first use by the index: not part of the timed indexing
from comind.codeindex import CodeIndex
repo, cache, rev = sys.argv[1:4]
start = time.perf_counter()
snap = CodeIndex(repo, cache).snapshot(rev)
wall = time.perf_counter() - start
defs = sum(len(fs.definitions) for fs in snap.all_symbols().values()) if len(sys.argv) > 4 else -1
print(json.dumps({"wall": wall, "rss_workers": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "parsed": snap.stats.parsed, "files": snap.stats.files, "defs": defs,
                  "skipped": snap.stats.skipped, "errors": snap.stats.errors}))
"""


def run_index(
    repo: str, cache: Path, rev: str, count_defs: bool = False
) -> tuple[float, int, dict[str, object], float]:
    """(outer wall seconds incl. interpreter start, peak RSS KiB of the main process, its report,
    CPU seconds of the process and its workers incl. interpreter start)."""
    out = cache.with_suffix(".json")
    wall, rss, cpu = timed([sys.executable, "-c", CHILD, repo, str(cache), rev, *(["1"] if count_defs else [])], out)
    return wall, rss, json.loads(out.read_text()), cpu


GRIMP_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import grimp
start = time.perf_counter()
g = grimp.build_graph(sys.argv[2], cache_dir=None)
wall = time.perf_counter() - start
edges = sorted([m, i] for m in g.modules for i in g.find_modules_directly_imported_by(m))
print(json.dumps({"wall": wall, "edges": edges}))
"""


def python_packages(files: Path) -> list[tuple[Path, str]]:
    found = []
    for root in (files, files / "src"):
        if root.is_dir():
            for child in sorted(root.iterdir()):
                if (child / "__init__.py").is_file() and child.name.isidentifier():
                    found.append((root, child.name))
    return found


def row(name: str, ours: float, theirs: float | None, unit: str = "s") -> str:
    ratio = f"{ours / theirs:.2f}x" if theirs else "-"
    other = f"{theirs:.3f} {unit}" if theirs is not None else "-"
    return f"| {name:<34} | {ours:>10.3f} {unit} | {other:>12} | {ratio:>7} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    repo = pygit2.Repository(args.repo)
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp_name:
        tmp = Path(tmp_name)
        files = tmp / "files"
        n_files, n_bytes = export(repo, args.rev, files)
        rules = rules_file(tmp)
        cli_version = subprocess.run([AST_GREP, "--version"], capture_output=True, text=True).stdout.strip()
        print(
            f"{args.repo} @ {args.rev}: {n_files} indexable files, {n_bytes / 1e6:.1f} MB; "
            f"{os.cpu_count()} CPUs; {cli_version}"
        )

        cli_best = cold_best = cold_outer = cli_cpu = cold_cpu = float("inf")
        cli_rss = cold_rss = worker_rss = matches = 0
        report: dict[str, object] = {}
        for i in range(args.repeat):
            wall, rss, matches, cpu = run_cli(rules, files, tmp / "cli.json")
            cli_best, cli_rss, cli_cpu = min(cli_best, wall), max(cli_rss, rss), min(cli_cpu, cpu)
            outer, rss, report, cpu = run_index(args.repo, tmp / f"cold{i}.sqlite", args.rev)
            cold_cpu = min(cold_cpu, cpu)
            cold_best, cold_outer = min(cold_best, float(report["wall"])), min(cold_outer, outer)  # type: ignore[arg-type]
            cold_rss, worker_rss = max(cold_rss, rss), max(worker_rss, int(report["rss_workers"]))  # type: ignore[call-overload]

        warm_cache = tmp / f"cold{args.repeat - 1}.sqlite"
        warm_in = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            ix = CodeIndex(args.repo, warm_cache)
            snap = ix.snapshot(args.rev)
            warm_in = min(warm_in, time.perf_counter() - start)
        assert snap.stats.parsed == 0
        warm_outer, _, warm_report, _ = min(
            (run_index(args.repo, warm_cache, args.rev) for _ in range(args.repeat)), key=lambda r: r[0]
        )
        _, _, counted, _ = run_index(args.repo, warm_cache, args.rev, count_defs=True)

        print(
            f"index: {report['files']} files, {report['parsed']} blobs parsed cold, "
            f"{counted['defs']} definitions, {report['errors']} with syntax errors, skipped {report['skipped']}; "
            f"ast-grep matched {matches} definitions"
        )
        print()
        title = f"measure (best of {args.repeat})"
        print(f"| {title:<34} | {'comind':>12} | {'reference':>12} | {'ratio':>7} |")
        print(f"|{'-' * 36}|{'-' * 14}|{'-' * 14}|{'-' * 9}|")
        print(row("cold index vs ast-grep scan", cold_best, cli_best))
        print(row("cold, incl. interpreter start", cold_outer, cli_best))
        print(row("cold CPU (user+sys, incl. start)", cold_cpu, cli_cpu))
        print(row("warm snapshot (in process)", warm_in, None))
        print(row("warm, fresh process incl. start", warm_outer, None))
        print(row("warm snapshot() in that process", float(warm_report["wall"]), None))  # type: ignore[arg-type]
        print(row("peak RSS, cold (MiB) vs ast-grep", cold_rss / 1024, cli_rss / 1024, "M"))
        print(row("peak RSS of a parse worker (MiB)", worker_rss / 1024, None, "M"))

        packages = python_packages(files)
        if packages:
            from comind.graph import ImportGraph

            start = time.perf_counter()
            graph = ImportGraph(CodeIndex(args.repo, warm_cache).snapshot(args.rev))
            ours_wall = time.perf_counter() - start
            edges = graph.edges()
        for root, package in packages:
            done = subprocess.run(
                [sys.executable, "-c", GRIMP_CHILD, str(root), package], check=True, capture_output=True, text=True
            )
            theirs = json.loads(done.stdout)
            prefix = package + "."
            ours_edges = {
                (a, b)
                for a, b in edges
                if (a == package or a.startswith(prefix)) and (b == package or b.startswith(prefix))
            }
            their_edges = {(a, b) for a, b in theirs["edges"]}
            # comind's figure covers every language and package of the revision, grimp's one package
            print(row(f"import graph vs grimp ({package})", ours_wall, theirs["wall"]))
            print(
                f"|   {package}: edges comind {len(ours_edges)}, grimp {len(their_edges)}, "
                f"only comind {len(ours_edges - their_edges)}, only grimp {len(their_edges - ours_edges)}"
            )


if __name__ == "__main__":
    main()
