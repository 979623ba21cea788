"""Benchmark compiled checks against the tools they wrap.

Run by hand (not a test):

    python benchmarks/bench_checks.py /path/to/repo-or-git-dir [--rev HEAD] [--rules 12] [--repeat 3]
                                      [--changed 10] [--semgrep-rules 5]

* ``--all`` with N ast-grep rules (Python): :func:`comind.checks.evaluate.evaluate` with ``base=None``
  against ``ast-grep scan`` with the same rules (one YAML file each, an ``sgconfig.yml``) over the
  revision's Python files exported to a temporary directory; the match counts are compared.
* semgrep on a change of about ``--changed`` Python files (the nearest first-parent ancestor with
  at least that many changed): ``evaluate(base=…, head=…)`` with M semgrep rules (one semgrep
  invocation for base and head) against ``semgrep scan --baseline-commit BASE`` in a checkout of
  head; the new-finding counts are compared. Skipped when semgrep is not installed.

Best of ``--repeat`` runs each, interleaved so machine noise hits both sides alike.
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
from datetime import date
from pathlib import Path
from typing import Any

import pygit2
import yaml

from comind.checks.context import CheckContext
from comind.checks.evaluate import evaluate
from comind.checks.types import compile_check
from comind.checks.types.semgrep import find_semgrep
from comind.codeindex import CodeIndex
from comind.records import new_record

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Row, print_table

AST_GREP = shutil.which("ast-grep") or str(Path(sys.executable).with_name("ast-grep"))

AST_GREP_RULES: list[dict[str, Any]] = [
    {"pattern": "eval($$$A)"},
    {"pattern": "exec($$$A)"},
    {"pattern": "print($$$A)"},
    {"kind": "assert_statement"},
    {"pattern": "isinstance($A, $B)"},
    {"kind": "global_statement"},
    {"pattern": "$A == None"},
    {"kind": "call", "has": {"field": "function", "regex": "^open$"}},
    {"kind": "lambda"},
    {"pattern": "raise NotImplementedError"},
    {"kind": "string", "regex": "TODO"},
    {"kind": "function_definition", "inside": {"kind": "function_definition", "stopBy": "end"}},
]
SEMGREP_RULES: list[dict[str, Any]] = [
    {"pattern": "eval(...)"},
    {"pattern": "exec(...)"},
    {"pattern": "print(...)"},
    {"pattern": "$A == None"},
    {"pattern": "isinstance($A, $B)"},
]
PROVENANCE = {"actor": "bench", "author_kind": "human", "source": "cli"}


def record(check: dict[str, Any], n: int) -> Any:
    return new_record(
        "constraint",
        title=f"rule {n}",
        anchors=[{"scope": "repo", "raw": "repo:"}],
        fields={"rule": f"rule {n}", "severity": "must", "check": check},
        provenance=PROVENANCE,
    )


def export_python(repo: pygit2.Repository, rev: str, dest: Path) -> int:
    commit = repo.revparse_single(rev).peel(pygit2.Commit)
    count = 0
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
                and path.endswith((".py", ".pyi"))
                and entry.size <= 1 << 20
            ):
                target = dest / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(entry.data)
                count += 1
    return count


def bench_ast_grep(repo_path: str, rev: str, n_rules: int, repeat: int, tmp: Path) -> list[Row]:
    repo = pygit2.Repository(repo_path)
    src = tmp / "sg" / "src"
    files = export_python(repo, rev, src)
    rules = [AST_GREP_RULES[i % len(AST_GREP_RULES)] for i in range(n_rules)]
    rule_dir = tmp / "sg" / "rules"
    rule_dir.mkdir(parents=True)
    for i, rule in enumerate(rules):
        (rule_dir / f"r{i}.yml").write_text(
            yaml.safe_dump(
                {"id": f"r{i}", "language": "python", "severity": "warning", "message": f"rule {i}", "rule": rule}
            )
        )
    (tmp / "sg" / "sgconfig.yml").write_text("ruleDirs: [rules]\n")
    checks = [
        (r, compile_check(r.id, r.fields["check"]))
        for r in (record({"type": "ast-grep", "language": "python", "rule": rule}, i) for i, rule in enumerate(rules))
    ]

    counts: dict[str, int] = {}

    def ours(cold: bool = True) -> float:
        if cold:  # the per-blob result cache lives next to the index cache
            (tmp / "checks.sqlite").unlink(missing_ok=True)
        start = time.perf_counter()
        index = CodeIndex(repo_path, tmp / "index.sqlite")
        ev = evaluate(checks, CheckContext(index), base=None, head=rev, today=date.today())
        counts["comind"] = len(ev.violations)
        return time.perf_counter() - start

    def theirs() -> float:
        start = time.perf_counter()
        # --no-ignore hidden: the export has dot-directories (.ci/) that ast-grep skips by default
        done = subprocess.run(
            [AST_GREP, "scan", "--no-ignore", "hidden", "--json=stream", "src"],
            cwd=tmp / "sg",
            capture_output=True,
            check=False,
        )
        counts["ast-grep"] = sum(1 for line in done.stdout.splitlines() if line.strip())
        return time.perf_counter() - start

    mine, peer, warm = [], [], []
    for _ in range(repeat):
        mine.append(ours())
        peer.append(theirs())
        warm.append(ours(cold=False))
    note = f"{files} Python files, {n_rules} rules; matches: comind {counts['comind']}, ast-grep {counts['ast-grep']}"
    return [
        Row(f"--all, {n_rules} ast-grep rules, cold", min(mine), "ast-grep scan", min(peer), note=note),
        Row(
            f"--all, {n_rules} ast-grep rules, warm (result cache)",
            min(warm),
            "ast-grep scan",
            min(peer),
            note="nothing changed since the last run",
        ),
    ]


def changed_base(repo_path: str, rev: str, want: int) -> tuple[str, int]:
    for k in range(1, 400):
        out = subprocess.run(
            ["git", "--git-dir", repo_path, "diff", "--name-only", f"{rev}~{k}", rev, "--", "*.py"],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            break
        n = len(out.stdout.split())
        if n >= want:
            base = subprocess.run(
                ["git", "--git-dir", repo_path, "rev-parse", f"{rev}~{k}"], capture_output=True, text=True, check=True
            ).stdout.strip()
            return base, n
    raise SystemExit(f"no ancestor of {rev} with {want} changed Python files")


def bench_semgrep(repo_path: str, rev: str, want: int, n_rules: int, repeat: int, tmp: Path) -> list[Row]:
    exe = find_semgrep()
    if exe is None:
        print("semgrep is not installed: semgrep benchmark skipped")
        return []
    git_dir = pygit2.Repository(repo_path).path
    head = subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", rev], capture_output=True, text=True, check=True
    ).stdout.strip()
    base, changed = changed_base(git_dir, head, want)
    rules = [
        {
            "id": f"s{i}",
            "languages": ["python"],
            "message": f"semgrep rule {i}",
            "severity": "WARNING",
            **SEMGREP_RULES[i % len(SEMGREP_RULES)],
        }
        for i in range(n_rules)
    ]
    checks = [
        (r, compile_check(r.id, r.fields["check"]))
        for r in (record({"type": "semgrep", "rule": rule}, i) for i, rule in enumerate(rules))
    ]
    work = tmp / "wt"
    subprocess.run(["git", "clone", "-q", "--no-checkout", git_dir, str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", head], check=True)
    rules_file = tmp / "semgrep-rules.yml"
    rules_file.write_text(yaml.safe_dump({"rules": rules}))
    env = dict(
        os.environ,
        SEMGREP_SEND_METRICS="off",
        SEMGREP_ENABLE_VERSION_CHECK="0",
        SEMGREP_SETTINGS_FILE=str(tmp / "settings.yml"),
        SEMGREP_LOG_FILE=str(tmp / "semgrep.log"),
    )
    counts: dict[str, int] = {}

    def ours() -> float:
        start = time.perf_counter()
        index = CodeIndex(repo_path, tmp / "index.sqlite")
        ev = evaluate(checks, CheckContext(index), base=base, head=head, today=date.today())
        if ev.warnings:
            print("comind warnings:", ev.warnings)
        counts["comind"] = len(ev.violations)
        return time.perf_counter() - start

    def theirs() -> float:
        start = time.perf_counter()
        done = subprocess.run(
            [
                exe,
                "scan",
                "--baseline-commit",
                base,
                "--config",
                str(rules_file),
                "--json",
                "--metrics=off",
                "--disable-version-check",
                "--quiet",
            ],
            cwd=work,
            env=env,
            capture_output=True,
            check=False,
        )
        try:
            counts["semgrep"] = len(json.loads(done.stdout)["results"])
        except (ValueError, KeyError):
            counts["semgrep"] = -1
            print(done.stderr.decode()[-2000:])
        return time.perf_counter() - start

    mine, peer = [], []
    for _ in range(repeat):
        mine.append(ours())
        peer.append(theirs())
    note = (
        f"{changed} changed Python files ({base[:10]}..{head[:10]}), {n_rules} rules; new findings: "
        f"comind {counts['comind']}, semgrep {counts['semgrep']}"
    )
    return [Row(f"diff-aware, {n_rules} semgrep rules", min(mine), "semgrep --baseline-commit", min(peer), note=note)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--rules", type=int, default=12)
    parser.add_argument("--semgrep-rules", type=int, default=5)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip", choices=["ast-grep", "semgrep"], action="append", default=[])
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="comind-bench-checks-") as tmp:
        if "ast-grep" not in args.skip:
            rows += bench_ast_grep(args.repo, args.rev, args.rules, args.repeat, Path(tmp))
        if "semgrep" not in args.skip:
            rows += bench_semgrep(args.repo, args.rev, args.changed, args.semgrep_rules, args.repeat, Path(tmp))
    print_table(f"Checks on {args.repo}", rows)


if __name__ == "__main__":
    main()
