"""`definitions_at` (which walks only the top-level statements it needs) against the whole file's walk.

    python benchmarks/check_definitions.py REPO [REPO ...] [--commits 300] [--random 3] [--seed 1]

For a sample of each history's commits (spread over the default branch, first parent), every file
a commit modified in a language comind reads, both sides: the lines the commit removed (in the
parent's blob) and added (in its own), as a harvest anchors them, plus `--random` sets of random
lines and the lines where some top-level statements start. Each call's definitions must equal those
the full walk (`parse_file`) gives for the same lines (`innermost` of all of them). Prints any
difference (non-zero exit then).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

import pygit2

from comind.anchoring import innermost
from comind.languages import Definition, language_for_path, parse_file


def expected(path: str, data: bytes, lines: list[int]) -> tuple[Definition, ...]:
    definitions = parse_file(path, data).definitions
    picked = {id(d) for n in lines if (d := innermost(definitions, n)) is not None}
    return tuple(d for d in definitions if id(d) in picked)


def changed_lines(patch: pygit2.Patch) -> tuple[list[int], list[int]]:
    removed, added = [], []
    for hunk in patch.hunks:
        for line in hunk.lines:
            if line.origin == "-":
                removed.append(line.old_lineno)
            elif line.origin == "+":
                added.append(line.new_lineno)
    return removed, added


def samples(repo: pygit2.Repository, commits: int) -> list[pygit2.Commit]:
    head = repo.revparse_single("HEAD").peel(pygit2.Commit)
    walker = repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    history = [c for c in walker if len(c.parents) >= 1]
    step = max(1, len(history) // commits)
    return history[::step][:commits]


def calls(repo: pygit2.Repository, commit: pygit2.Commit, rnd: random.Random, extra: int):
    """(path, data, lines) of what the commit changed, both sides, and `extra` random sets per file."""
    try:
        patches = list(repo.diff(commit.parents[0], commit, context_lines=0))
    except pygit2.GitError:  # a blob the clone lacks
        return
    for patch in patches:
        delta = patch.delta
        if delta.status_char() != "M" or language_for_path(delta.new_file.path) is None:
            continue
        removed, added = changed_lines(patch)
        for oid, lines in ((delta.old_file.id, removed), (delta.new_file.id, added)):
            blob = repo.get(oid)
            if blob is None or blob.size > 1 << 20:
                continue
            data = bytes(blob.data)
            if b"\0" in data:
                continue
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            path = delta.new_file.path
            if lines:
                yield path, data, lines
            count = data.count(b"\n") + 1
            for _ in range(extra):
                yield path, data, sorted(rnd.sample(range(1, count + 1), min(count, rnd.choice((1, 2, 5)))))
            lang = language_for_path(path)
            assert lang is not None
            tops = [n.start_point[0] for n in lang.parse(data).root_node.children]
            if tops:
                at = rnd.sample(tops, min(3, len(tops)))
                yield path, data, sorted({n + d for n in at for d in (0, 1, 2) if n + d >= 1})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--random", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    paths: Counter[str] = Counter()
    total = bad = 0
    for path in args.repos:
        repo = pygit2.Repository(path)
        name = Path(path).parent.name if Path(path).name in ("repo", ".git") else Path(path).name
        files: set[tuple[str, str]] = set()
        before = total, bad
        for commit in samples(repo, args.commits):
            for file, data, lines in calls(repo, commit, rnd, args.random):
                lang = language_for_path(file)
                assert lang is not None
                files.add((file, str(pygit2.hash(data))))
                paths[lang.name] += 1
                total += 1
                got = lang.definitions_at(data, lines)
                want = expected(file, data, lines)
                if got != want:
                    bad += 1
                    print(f"DIFFERENT {name} {commit.id} {file} lines {lines[:8]}", file=sys.stderr)
                    print(f"  partial: {[(d.qualname, d.start_line, d.end_line) for d in got][:6]}", file=sys.stderr)
                    print(f"  whole:   {[(d.qualname, d.start_line, d.end_line) for d in want][:6]}", file=sys.stderr)
        print(f"{name}: {len(files)} files, {total - before[0]} calls, {bad - before[1]} different", flush=True)
    print(f"all: {total} calls ({dict(paths)}), {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
