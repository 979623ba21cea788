"""Replay every development history of both sets, validation and tuning, and print both tables.

    python benchmarks/replay_sets.py [--jobs 2] [--only validation|tuning] [--mirrors DIR]
                                     [--json OUT] [--against DIR] [--history NAME ...]

The histories, their set, language and merge style are listed in benchmarks/histories.yml; the set
follows from the history's name by the rule written there (`set_of`). Each history is replayed as
`comind eval replay --repo <copy> --json --audit benchmarks/replay-audit/<name>.yml`, niced, at most
--jobs at once, on a `git clone --mirror --shared` of `<mirrors>/<name>/repo` (a replay writes its cache
into the git directory: the mirror itself is never written). Validation is replayed first.

The columns: relands are the landings the replay tells by their messages, those a check could not
have seen included (`relands_skipped`: its revert landed later, the tree had it already, …); recall is
caught of those, and of those a check could see; flags are flags on ordinary commits (by message),
false flags those the audit judges false or has not judged. --report DIR prints a previous run's tables,
the audit files' verdicts applied as they are now (with --json OUT, it writes the reports so audited).

--json OUT writes each history's replay as OUT/<name>.json (what `benchmarks/compare_replays.py BEFORE
AFTER` compares), its near misses as OUT/<name>.nm.jsonl (what `benchmarks/try_rule.py OUT` judges
again) and both tables as OUT/summary.json. --against DIR reads a previous run's JSON and
says keep or drop: keep only when the validation set's pooled recall does not fall and its false flags
(judged false or not judged, on the audit) do not rise, over the histories both runs replayed. Exit
code: 0, or 1 on drop, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from comind.eval import verdicts
from comind.eval.verdicts import audited

HERE = Path(__file__).resolve().parent
LISTING = HERE / "histories.yml"
AUDITS = HERE / "replay-audit"
SETS = ("validation", "tuning")


def set_of(name: str, modulus: int = 5, validation_below: int = 2) -> str:
    """The set of history `owner+name`: validation when sha256(name), big-endian, mod `modulus` < `validation_below`."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest(), "big")
    return "validation" if digest % modulus < validation_below else "tuning"


@dataclass(frozen=True)
class History:
    name: str
    set: str
    language: str
    merge_style: str


def listing(path: Path = LISTING) -> tuple[dict[str, object], list[History]]:
    data = yaml.safe_load(path.read_text())
    rule = data["rule"]
    histories = [History(name, **fields) for name, fields in data["histories"].items()]
    return rule, histories


@dataclass
class Figures:
    """One history's figures, or several pooled: counts only, ratios computed."""

    commits: int = 0  # ordinary commits (scanned changes that are not relands)
    relands: int = 0  # every reland told by its message, the skipped ones included
    seeable: int = 0  # relands a check could have seen (not skipped)
    caught: int = 0
    flags: int = 0  # on ordinary commits (a flagged reland is a catch)
    audit_false: int = 0  # judged false, plus not judged
    unjudged: int = 0
    seconds: float = 0.0

    @classmethod
    def of(cls, replay: Mapping[str, object]) -> Figures:
        audit = replay.get("audit") or {}
        assert isinstance(audit, dict)
        skipped = replay.get("relands_skipped") or []
        assert isinstance(skipped, list)
        seconds = replay.get("seconds") or {}
        assert isinstance(seconds, dict)
        seeable = int(replay["relands"])  # type: ignore[call-overload]
        flags = int(replay["false_flags"])  # type: ignore[call-overload]  # flags on ordinary commits
        return cls(
            commits=int(replay["ordinary_commits"]),  # type: ignore[call-overload]
            relands=seeable + len(skipped),
            seeable=seeable,
            caught=int(replay["relands_flagged"]),  # type: ignore[call-overload]
            flags=flags,
            audit_false=int(audit.get("false_flags", flags)),
            unjudged=int(audit.get("unaudited", flags)),
            seconds=float(seconds.get("total", 0.0)),
        )

    def __add__(self, other: Figures) -> Figures:
        return Figures(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    @property
    def recall(self) -> float | None:
        return self.caught / self.relands if self.relands else None

    @property
    def recall_seeable(self) -> float | None:
        return self.caught / self.seeable if self.seeable else None

    def per_1000(self, count: int) -> float:
        return 1000 * count / self.commits if self.commits else 0.0

    def row(self) -> dict[str, object]:
        return {
            "ordinary_commits": self.commits,
            "relands": self.relands,
            "caught": self.caught,
            "recall": _round(self.recall),
            "relands_seeable": self.seeable,
            "recall_seeable": _round(self.recall_seeable),
            "flags": self.flags,
            "flags_per_1000": round(self.per_1000(self.flags), 3),
            "audit_false_flags": self.audit_false,
            "audit_false_per_1000": round(self.per_1000(self.audit_false), 3),
            "unjudged": self.unjudged,
            "seconds": round(self.seconds, 1),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def pooled(figures: Iterable[Figures]) -> Figures:
    return sum(figures, Figures())


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def table(title: str, rows: Mapping[str, Figures], failed: Mapping[str, str]) -> str:
    head = (
        "| history | ordinary commits | relands | caught | recall | recall of those a check could see "
        "| flags | flags per 1,000 | false flags (audit) per 1,000 | unjudged | time |"
    )
    lines = [f"{title}", "", head, "|" + "---|" * 11]

    def line(name: str, f: Figures) -> str:
        seeable = f"{_ratio(f.recall_seeable)} ({f.caught} of {f.seeable})" if f.seeable else "—"
        return (
            f"| {name} | {f.commits:,} | {f.relands} | {f.caught} | {_ratio(f.recall)} | {seeable} | {f.flags} "
            f"| {f.per_1000(f.flags):.2f} | {f.per_1000(f.audit_false):.2f} ({f.audit_false}) | {f.unjudged} "
            f"| {f.seconds:.0f} s |"
        )

    for name, f in rows.items():
        lines.append(line(name.replace("+", "/"), f))
    for name, why in failed.items():
        lines.append(f"| {name.replace('+', '/')} | not replayed: {why} |" + " |" * 9)
    lines.append(line(f"**pooled ({len(rows)})**", pooled(rows.values())))
    return "\n".join(lines)


def _mirror(mirrors: Path, name: str) -> Path | None:
    for candidate in (mirrors / name / "repo", mirrors / f"{name}.git", mirrors / name):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def _commits(git_dir: Path) -> int:
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-list", "--count", "HEAD"], capture_output=True, text=True, check=False
    )
    return int(out.stdout.strip() or 0)


def _comind() -> list[str]:
    beside = Path(sys.executable).parent / "comind"
    return [str(beside)] if beside.exists() else [sys.executable, "-c", "from comind.cli import main; main()"]


def replay(
    name: str, source: Path, work: Path, out: Path | None, comind: Sequence[str]
) -> tuple[str, dict[str, object] | str]:
    """Replay one history on a shared clone of its mirror: (name, the replay's JSON or why it failed)."""
    copy = work / f"{name}.git"
    shutil.rmtree(copy, ignore_errors=True)
    cloned = subprocess.run(
        ["git", "clone", "-q", "--mirror", "--shared", str(source), str(copy)], capture_output=True, text=True
    )
    if cloned.returncode:
        return name, f"git clone: {cloned.stderr.strip()[:200]}"
    command = ["nice", "-n", "10", *comind, "eval", "replay", "--repo", str(copy), "--json"]
    audit = AUDITS / f"{name}.yml"
    if audit.exists():
        command += ["--audit", str(audit.relative_to(HERE.parent))]
    if out is not None:  # every pair judged, for benchmarks/try_rule.py
        command += ["--near-misses", str((out / f"{name}.nm.jsonl").resolve())]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=HERE.parent)
    shutil.rmtree(copy, ignore_errors=True)
    if done.returncode:
        return name, f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}"
    result = json.loads(done.stdout)
    result.setdefault("seconds", {}).setdefault("total", time.monotonic() - started)
    if out is not None:
        (out / f"{name}.json").write_text(done.stdout)
    return name, result


def reaudited(name: str, report: dict[str, object]) -> dict[str, object]:
    """The report with the audit file's verdicts as they are now (judged since the replay, say)."""
    audit = AUDITS / f"{name}.yml"
    if not audit.exists():
        return report
    return audited(report, verdicts.load(audit), str(audit.relative_to(HERE.parent)))


def load_run(directory: Path) -> dict[str, Figures]:
    runs: dict[str, Figures] = {}
    for path in sorted(directory.glob("*.json")):
        if path.name != "summary.json" and path.stat().st_size:
            runs[path.stem] = Figures.of(json.loads(path.read_text()))
    return runs


def verdict(before: Mapping[str, Figures], after: Mapping[str, Figures], names: Sequence[str]) -> tuple[bool, str]:
    """Keep only when validation recall does not fall and validation false flags do not rise."""
    common = [n for n in names if n in before and n in after]
    if not common:
        return False, "no validation history in both runs: nothing to compare"
    b, a = pooled(before[n] for n in common), pooled(after[n] for n in common)
    recall_ok = (a.recall or 0.0) >= (b.recall or 0.0)
    false_ok = a.audit_false <= b.audit_false
    keep = recall_ok and false_ok
    said = (
        f"{'KEEP' if keep else 'DROP'} on {len(common)} validation histories: recall {_ratio(b.recall)} -> "
        f"{_ratio(a.recall)} ({b.caught}/{b.relands} -> {a.caught}/{a.relands}){'' if recall_ok else ' FELL'}; "
        f"false flags (audit) {b.audit_false} -> {a.audit_false} ({b.per_1000(b.audit_false):.2f} -> "
        f"{a.per_1000(a.audit_false):.2f} per 1,000){'' if false_ok else ' ROSE'}; "
        f"flags {b.flags} -> {a.flags}"
    )
    return keep, said


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="replays at once (default 2)")
    parser.add_argument("--only", choices=SETS, help="replay one set only")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="where <owner+name>/repo are")
    parser.add_argument("--json", type=Path, dest="out", help="write <name>.json per history and summary.json here")
    parser.add_argument("--against", type=Path, help="a previous run's --json directory: print keep or drop")
    parser.add_argument("--history", action="append", default=[], help="replay only this owner+name (repeatable)")
    parser.add_argument(
        "--comind",
        type=Path,
        help="the comind executable to replay with (default: this environment's); e.g. "
        "another checkout's .venv/bin/comind, to replay a version before a change",
    )
    parser.add_argument(
        "--smallest-first", action="store_true", help="each set's smallest history first (a run with little time)"
    )
    parser.add_argument("--report", type=Path, help="replay nothing: print the tables of a previous run's --json DIR")
    parser.add_argument("--work", type=Path, help="where the shared clones go (default: a temporary directory)")
    args = parser.parse_args(argv)
    rule, histories = listing()
    wrong = [h.name for h in histories if h.set != set_of(h.name, int(rule["modulus"]), int(rule["validation_below"]))]  # type: ignore[call-overload]
    if wrong:
        parser.error(f"{LISTING.name}: set disagrees with the rule for {', '.join(wrong)}")
    if args.comind is not None and not os.access(args.comind, os.X_OK):
        parser.error(f"--comind {args.comind}: not an executable")
    comind = [str(args.comind)] if args.comind else _comind()
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.report is not None and not args.report.is_dir():
        parser.error(f"--report {args.report}: not a directory")
    if args.against is not None and not args.against.is_dir():
        parser.error(f"--against {args.against}: not a directory")
    known = {h.name for h in histories}
    if unknown := [n for n in args.history if n not in known]:
        parser.error(f"not in {LISTING.name}: {', '.join(unknown)}")
    chosen = [
        h for h in histories if (not args.only or h.set == args.only) and (not args.history or h.name in args.history)
    ]
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    failed: dict[str, str] = {}
    sources: dict[str, Path] = {}
    for h in chosen:
        found = _mirror(args.mirrors, h.name)
        if found is None:
            failed[h.name] = f"no mirror under {args.mirrors}"
        else:
            sources[h.name] = found
    results: dict[str, dict[str, object]] = {}
    if args.report is not None:
        for h in chosen:
            path = args.report / f"{h.name}.json"
            if path.is_file() and path.stat().st_size:
                results[h.name] = reaudited(h.name, json.loads(path.read_text()))
                if args.out is not None:
                    (args.out / path.name).write_text(json.dumps(results[h.name], indent=2) + "\n")
            failed.pop(h.name, None)
            if h.name not in results:
                failed[h.name] = f"not in {args.report}"
        sources = {}
    # Validation first, each set's largest history first, so a run cut short has its validation table.
    order = sorted(
        sources,
        key=lambda n: (
            SETS.index(next(h.set for h in chosen if h.name == n)),
            _commits(sources[n]) * (1 if args.smallest_first else -1),
        ),
    )
    work = args.work or Path(tempfile.mkdtemp(prefix="replay-sets-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for name, got in pool.map(lambda n: replay(n, sources[n], work, args.out, comind), order):
                if isinstance(got, str):
                    failed[name] = got
                else:
                    results[name] = got
                print(f"# {name}: {'failed: ' + got if isinstance(got, str) else 'done'}", file=sys.stderr, flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    figures = {n: Figures.of(r) for n, r in results.items()}
    summary: dict[str, object] = {"seconds": round(time.monotonic() - started, 1), "jobs": args.jobs}
    for which in SETS:
        names = [h.name for h in chosen if h.set == which]
        if not names:
            continue
        rows = {n: figures[n] for n in sorted(names, key=str.lower) if n in figures}
        print(table(f"## {which}", rows, {n: failed[n] for n in names if n in failed}))
        print()
        summary[which] = {
            "histories": {n: f.row() for n, f in rows.items()},
            "pooled": pooled(rows.values()).row(),
            "not_replayed": {n: failed[n] for n in names if n in failed},
        }
    if args.report is not None:
        print(f"{len(results)} read from {args.report}")
    else:
        print(
            f"{len(results)} replayed in {summary['seconds']} s with --jobs {args.jobs} (load {os.getloadavg()[0]:.1f})"
        )
    if args.out is not None:
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.against is None:
        return 0
    validation = [h.name for h in histories if h.set == "validation"]
    if not any(n in figures for n in validation):
        print("no verdict: this run replayed no validation history")
        return 0
    keep, said = verdict(load_run(args.against), figures, validation)
    print(said)
    return 0 if keep else 1


if __name__ == "__main__":
    sys.exit(main())
