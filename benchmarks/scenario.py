"""A realistic `comind check` scenario on a real repository, for the benchmarks.

    python benchmarks/scenario.py MIRROR DEST [--commit SHA] [--records 300]

From a clone of MIRROR (a work tree or a bare git dir) in DEST:

* the change: a first-parent commit C of the default branch touching 9-12 files, at least 5 of
  them source files of the repository's main language (or ``--commit``); ``main`` is moved to
  C's parent and the branch ``feature`` (checked out) holds C, so ``comind check --base main``
  reviews exactly that change;
* the ledger: ``comind harvest`` (reverts, Lore) plus ``--records`` authored records (gotchas,
  decisions, constraints, intents) anchored to definitions across the source tree, resolved at
  ``main`` — among them every top-level definition of the changed files, so the change stales
  some and gets context for others;
* constraints with compiled checks: two ``graph`` rules, four ``ast-grep`` rules and one
  ``dependency`` rule for the main language (TypeScript/JavaScript or Python), plus the same
  ast-grep rules as semgrep rules in ``DEST/.bench/semgrep.yml`` for the semgrep comparison.

Records go straight into the store through the Python API (``comind remember`` per record would
take minutes); everything the benchmark times is the CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

COMIND = str(Path(sys.executable).with_name("comind"))
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "CI": "1",
}

# Per main language: source prefix of the definitions to anchor to, graph/ast-grep/dependency specs
# (ast-grep rule, equivalent semgrep pattern).
RULES: dict[str, dict[str, Any]] = {
    "typescript": {
        "ast_grep_language": "typescript",
        "semgrep_language": "typescript",
        "glob": "**/*.ts",
        "patterns": [
            ("console.log($$$A)", "console.log(...)"),
            ("debugger", "debugger;"),
            ("$A as any", "($A as any)"),
            ("new Function($$$A)", "new Function(...)"),
        ],
        "dependency": {"ecosystem": "npm", "package": "esbuild", "forbid": "<0.18"},
    },
    "python": {
        "ast_grep_language": "python",
        "semgrep_language": "python",
        "glob": "**/*.py",
        "patterns": [
            ("print($$$A)", "print(...)"),
            ("eval($$$A)", "eval(...)"),
            ("isinstance($A, $B)", "isinstance($A, $B)"),
            ("$A == None", "$A == None"),
        ],
        "dependency": {"ecosystem": "pypi", "package": "typing-extensions", "forbid": "<4.0"},
    },
}
RULES["javascript"] = RULES["tsx"] = RULES["typescript"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=ENV).stdout


def main_language(dest: Path, rev: str) -> str:
    from comind.languages import language_for_path

    counts: Counter[str] = Counter()
    for path in git(dest, "ls-tree", "-r", "--name-only", rev).split("\n"):
        lang = language_for_path(path)
        if lang is not None:
            counts[{"tsx": "typescript", "javascript": "typescript"}.get(lang.name, lang.name)] += 1
    return counts.most_common(1)[0][0] if counts else "python"


def pick_change(dest: Path, branch: str, language: str, want: tuple[int, int] = (9, 12)) -> str:
    """The newest first-parent commit touching 9-12 files, at least 5 in the main language."""
    from comind.languages import language_for_path

    for sha in git(dest, "rev-list", "--first-parent", "--no-merges", "-2000", branch).split():
        names = git(dest, "diff", "--name-only", f"{sha}^", sha).split("\n")
        names = [n for n in names if n]
        if not want[0] <= len(names) <= want[1]:
            continue
        source = [
            n
            for n in names
            if (lang := language_for_path(n)) is not None
            and RULES.get(lang.name, {}).get("ast_grep_language") == RULES[language]["ast_grep_language"]
        ]
        if len(source) >= 5:
            return sha
    raise SystemExit(f"no commit with {want[0]}-{want[1]} changed files on {branch}")


def build(
    mirror: str, dest: Path, *, commit: str | None = None, records: int = 300, quiet: bool = True
) -> dict[str, Any]:
    """Set the scenario up in ``dest`` (an existing ``dest`` with a finished scenario is reused)."""
    done = dest / ".bench" / "scenario.json"
    if done.is_file():
        return dict(json.loads(done.read_text()))
    if dest.exists():
        raise SystemExit(f"{dest} exists but holds no finished scenario: remove it first")
    subprocess.run(["git", "clone", "-q", mirror, str(dest)], check=True, env=ENV)
    branch = git(dest, "symbolic-ref", "--short", "HEAD").strip()
    language = main_language(dest, "HEAD")
    spec = RULES[language]
    change = commit or pick_change(dest, branch, language)
    change = git(dest, "rev-parse", change).strip()
    base = git(dest, "rev-parse", f"{change}^").strip()
    git(dest, "checkout", "-q", "-B", "feature", change)
    git(dest, "branch", "-f", "main", base)
    files = [n for n in git(dest, "diff", "--name-only", base, change).split("\n") if n]
    out = subprocess.run([COMIND, "-C", str(dest), "harvest"], capture_output=True, text=True, env=ENV, check=True)
    if not quiet:
        print(out.stdout.strip(), file=sys.stderr)
    written = _records(dest, base, files, spec, records)
    (dest / ".bench").mkdir(exist_ok=True)
    (dest / ".bench" / "semgrep.yml").write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "id": f"r{i}",
                        "languages": [spec["semgrep_language"]],
                        "severity": "WARNING",
                        "message": f"rule {i}",
                        "pattern": semgrep,
                    }
                    for i, (_, semgrep) in enumerate(spec["patterns"])
                ]
            }
        )
    )
    (dest / ".bench" / "sgconfig.yml").write_text("ruleDirs: [rules]\n")
    (dest / ".bench" / "rules").mkdir(exist_ok=True)
    for i, (pattern, _) in enumerate(spec["patterns"]):
        (dest / ".bench" / "rules" / f"r{i}.yml").write_text(
            json.dumps(
                {
                    "id": f"r{i}",
                    "language": spec["ast_grep_language"],
                    "severity": "warning",
                    "message": f"rule {i}",
                    "rule": {"pattern": pattern},
                }
            )
        )
    info = {
        "repo": str(dest),
        "mirror": mirror,
        "language": language,
        "base": base,
        "head": change,
        "files_changed": len(files),
        "records": written,
    }
    done.write_text(json.dumps(info, indent=1))
    # the .bench folder is untracked: semgrep and git see only the repository's files
    with open(dest / ".git" / "info" / "exclude", "a") as f:
        f.write("\n.bench/\n")
    return info


def _records(dest: Path, base: str, changed: list[str], spec: dict[str, Any], n: int) -> int:
    from comind.anchoring import resolve_anchor
    from comind.anchors import parse_anchor
    from comind.errors import ComindError
    from comind.records import new_record
    from comind.workspace import Workspace

    ws = Workspace(dest)
    snapshot = ws.index.snapshot(base)
    language = spec["ast_grep_language"]
    same = {"typescript": ("typescript", "tsx", "javascript")}.get(language, (language,))
    paths = sorted(p for p, e in snapshot.files.items() if e.language in same and not _test_path(p))
    targets: list[str] = []
    for path in changed:  # every top-level definition of the changed files (as of the base)
        targets += [f"{path}::{d.qualname}" for d in snapshot.definitions(path) if "." not in d.qualname]
    step = max(1, len(paths) // max(1, n))
    for path in paths[::step]:
        defs = snapshot.definitions(path)
        for d in dict.fromkeys((defs[len(defs) // 2], defs[0]) if defs else ()):  # two a file, middle first
            targets.append(f"{path}::{d.qualname}")
    targets = list(dict.fromkeys(targets))[:n]
    prov = {"actor": "p-bench", "author_kind": "human", "source": "cli", "head_commit": base}
    kinds = ("gotcha", "decision", "constraint", "intent")
    fields: dict[str, dict[str, Any]] = {
        "gotcha": {"symptom": "it breaks", "cause": "an order dependency"},
        "decision": {"chosen": "this way", "alternatives": [{"option": "the other way", "why_not": "slower"}]},
        "constraint": {"rule": "keep it pure", "severity": "should"},
        "intent": {"need": "callers rely on it"},
    }
    out = []
    for i, target in enumerate(targets):
        kind = kinds[i % len(kinds)]
        try:
            anchor = resolve_anchor(ws.index, parse_anchor(target, "subject"), base)
        except ComindError:
            continue
        out.append(
            new_record(
                kind,
                title=f"{kind} about {target.rsplit('::', 1)[-1]}"[:120],
                anchors=[anchor],
                fields=fields[kind],
                provenance=prov,
                valid_from=base,
                created_at="2026-11-01T00:00:00Z",
            )
        )
    repo_anchor = [resolve_anchor(ws.index, parse_anchor("repo:", "subject"), base)]
    src = spec["glob"]
    checks = [
        {
            "type": "ast-grep",
            "language": language,
            "files": [src],
            "rule": {"pattern": pattern},
            "message": f"no {pattern}",
        }
        for pattern, _ in spec["patterns"]
    ]
    if language == "typescript":
        checks += [
            {"type": "graph", "from": "packages/*/src/node/**", "forbid": ["packages/*/src/client/**"]},
            {"type": "graph", "from": "packages/*/src/client/**", "forbid": ["packages/*/src/node/**"]},
        ]
    else:
        top = sorted({p.split("/")[0] for p in paths if p.endswith("__init__.py") and p.count("/") == 1})
        pkg = top[0] if top else "app"
        checks += [
            {"type": "graph", "from": f"{pkg}.**", "forbid": ["tests.**"]},
            {"type": "graph", "from": f"{pkg}.**", "forbid": ["pytest"]},
        ]
    checks.append({"type": "dependency", **spec["dependency"]})
    for i, check in enumerate(checks):
        out.append(
            new_record(
                "constraint",
                title=f"checked constraint {i}: {check['type']}",
                anchors=repo_anchor,
                fields={"rule": f"checked rule {i}", "severity": "must", "check": check},
                provenance=prov,
                valid_from=base,
                created_at="2026-11-01T00:00:00Z",
            )
        )
    ws.store.put_many(out)
    return len(out)


def _test_path(path: str) -> bool:
    parts = path.split("/")
    return any(p in ("test", "tests", "__tests__", "playground", "fixtures") for p in parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("mirror")
    ap.add_argument("dest", type=Path)
    ap.add_argument("--commit")
    ap.add_argument("--records", type=int, default=300)
    args = ap.parse_args()
    print(json.dumps(build(args.mirror, args.dest, commit=args.commit, records=args.records, quiet=False), indent=1))


if __name__ == "__main__":
    main()
