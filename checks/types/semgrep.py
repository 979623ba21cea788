"""``semgrep`` checks: a semgrep rule, run by the semgrep CLI when it is installed.

```yaml
type: semgrep
rule:
  id: no-eval
  languages: [python]
  pattern: eval(...)
  message: eval() of untrusted input
  severity: ERROR
files: ["src/**"]      # optional; ignores: [...] too
```

All semgrep checks of an evaluation run in **one** invocation of the CLI, base and head together:
the files the rules can match (by their languages, ``files``/``ignores`` and the rule's ``paths``;
in diff-aware mode only the files the change touched) are exported from git into a temporary
directory (``head/…`` and ``base/…``) with an empty ``.semgrepignore`` (semgrep's default one
skips ``tests/``), and semgrep runs there with ``--metrics=off --disable-version-check`` and its
settings, log and version cache redirected into that directory, so it never touches the network
or the home directory. The matched text is sliced from the exported bytes by the byte offsets
semgrep reports (its ``extra.lines`` only says "requires login").

semgrep missing → every semgrep check is "not run" (a warning, never a silent pass); a run longer
than the timeout is killed (with its process group) → "semgrep timed out"; a rule semgrep rejects
(exit 2 or 7, JSON ``errors``) → CheckError naming the constraint.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from comind.checks.context import CheckContext
from comind.checks.globs import any_path_matches, path_matches, unmatched_files
from comind.checks.interface import Check, CheckError, CheckField, NotRun, Outcome, Violation, check_strings, describe

MAX_FILE_SIZE = 1_000_000  # semgrep's own --max-target-bytes default
NOT_INSTALLED = "semgrep is not installed (install comind[semgrep], put semgrep on PATH or set COMIND_SEMGREP)"
_PATTERN_KEYS = (
    "pattern",
    "patterns",
    "pattern-either",
    "pattern-regex",
    "match",
    "mode",
    "pattern-sources",
    "join",
    "taint",
    "r2c-internal-project-depends-on",
    "extract",
)
_ANY_FILE = frozenset({"generic", "regex", "none", "aliengrep", "spacegrep"})
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "py": (".py", ".pyi"),
    "python3": (".py", ".pyi"),
    "python2": (".py",),
    "javascript": (".js", ".jsx", ".mjs", ".cjs"),
    "js": (".js", ".jsx", ".mjs", ".cjs"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "go": (".go",),
    "golang": (".go",),
    "java": (".java",),
    "rust": (".rs",),
    "ruby": (".rb",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h"),
    "c++": (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h"),
    "csharp": (".cs",),
    "c#": (".cs",),
    "kotlin": (".kt", ".kts"),
    "kt": (".kt", ".kts"),
    "php": (".php",),
    "scala": (".scala", ".sc"),
    "swift": (".swift",),
    "bash": (".sh", ".bash"),
    "sh": (".sh", ".bash"),
    "json": (".json",),
    "yaml": (".yml", ".yaml"),
    "terraform": (".tf", ".hcl"),
    "hcl": (".tf", ".hcl"),
    "html": (".html", ".htm"),
    "lua": (".lua",),
    "ocaml": (".ml", ".mli"),
    "solidity": (".sol",),
    "sol": (".sol",),
    "elixir": (".ex", ".exs"),
    "ex": (".ex", ".exs"),
    "clojure": (".clj", ".cljs", ".cljc", ".edn"),
    "dart": (".dart",),
    "r": (".r", ".R"),
    "julia": (".jl",),
    "jsonnet": (".jsonnet", ".libsonnet"),
    "apex": (".cls",),
    "vue": (".vue",),
    "xml": (".xml",),
    "dockerfile": ("Dockerfile",),
    "docker": ("Dockerfile",),
}


def find_semgrep(name: str | None = None) -> str | None:
    """The semgrep executable: ``name`` (a path, or looked up on PATH only); by default
    ``$COMIND_SEMGREP``, then ``semgrep`` on PATH, then next to the running Python (a venv)."""
    if name:
        if os.sep in name or "/" in name:
            return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
        return shutil.which(name)
    env = os.environ.get("COMIND_SEMGREP")
    if env:
        return find_semgrep(env)
    found = shutil.which("semgrep")
    if found:
        return found
    sibling = Path(sys.executable).parent / "semgrep"
    return str(sibling) if sibling.is_file() and os.access(sibling, os.X_OK) else None


def _plain(value: Any, where: str, depth: int = 0) -> Any:
    """A YAML/JSON-plain copy of a rule (strings, numbers, booleans, null, lists, mappings)."""
    if depth > 40:
        raise CheckError("nested too deeply", where)
    if isinstance(value, str):
        if "\0" in value:
            raise CheckError("contains a NUL character", where)
        return value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CheckError(f"expected a finite number, got {value!r}", where)
        return value
    if isinstance(value, list | tuple):
        return [_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise CheckError(f"keys must be text, got {describe(k)}", where)
            out[k] = _plain(v, f"{where}.{k}", depth + 1)
        return out
    raise CheckError(f"expected plain YAML values, got {describe(value)}", where)


def _semgrep_glob(pattern: str, path: str) -> bool:
    """semgrep's ``paths`` patterns (gitignore style): with an inner ``/`` anchored at the root,
    else matched against any trailing part of the path."""
    text = pattern.strip()
    if "/" in text.rstrip("/"):
        return path_matches(text.lstrip("/"), path)
    parts = path.split("/")
    return any(path_matches(text, "/".join(parts[i:])) for i in range(len(parts)))


class SemgrepCheck(Check):
    type: ClassVar[str] = "semgrep"
    file_local: ClassVar[bool] = True
    fields: ClassVar[tuple[CheckField, ...]] = (
        CheckField("rule", "mapping", True, "one semgrep rule: id, languages, pattern(s), message, severity"),
        CheckField("files", "globs", False, "only files matching these path globs"),
        CheckField("ignores", "globs", False, "never files matching these path globs"),
    )

    def compile(self) -> None:
        spec = self.spec
        rule = _plain(spec["rule"], "check.rule")
        languages = rule.get("languages")
        if isinstance(languages, str):
            languages = [languages]
        if (
            not isinstance(languages, list)
            or not languages
            or not all(isinstance(x, str) and x.strip() for x in languages)
        ):
            raise CheckError("expected a list of semgrep languages, e.g. [python]", "check.rule.languages")
        if not any(k in rule for k in _PATTERN_KEYS):
            raise CheckError(f"a semgrep rule needs one of {', '.join(_PATTERN_KEYS[:5])}", "check.rule")
        for key in ("id", "message", "severity"):
            if key in rule and (not isinstance(rule[key], str) or not rule[key].strip()):
                raise CheckError(f"expected non-empty text, got {describe(rule[key])}", f"check.rule.{key}")
        if "id" not in spec and isinstance(rule.get("id"), str):
            self.rule = rule["id"]
        paths = rule.pop("paths", None) or {}
        if not isinstance(paths, Mapping):
            raise CheckError("expected a mapping with include: and/or exclude:", "check.rule.paths")
        self.include = check_strings(paths["include"], "check.rule.paths.include") if "include" in paths else []
        self.exclude = check_strings(paths["exclude"], "check.rule.paths.exclude") if "exclude" in paths else []
        self.files: list[str] = check_strings(spec["files"], "check.files") if "files" in spec else []
        self.ignores: list[str] = check_strings(spec["ignores"], "check.ignores") if "ignores" in spec else []
        rule["languages"] = languages
        rule.setdefault("message", self.message or f"matches semgrep rule {self.rule}")
        rule.setdefault("severity", "WARNING")
        self.semgrep_rule: dict[str, Any] = rule
        lowered = [x.strip().lower() for x in languages]
        if any(x in _ANY_FILE or x not in EXTENSIONS for x in lowered):
            self.extensions: tuple[str, ...] | None = None  # semgrep decides
        else:
            self.extensions = tuple(sorted({e for x in lowered for e in EXTENSIONS[x]}))

    def typed(self, path: str) -> bool:
        """Whether ``path`` is a file of the rule's languages (any file for generic ones)."""
        if self.extensions is None:
            return True
        base = path.rsplit("/", 1)[-1]
        return base.endswith(tuple(e for e in self.extensions if e.startswith("."))) or base in self.extensions

    def wants(self, path: str) -> bool:
        if not self.typed(path):
            return False
        if self.files and not any_path_matches(self.files, path):
            return False
        if self.ignores and any_path_matches(self.ignores, path):
            return False
        if self.include and not any(_semgrep_glob(p, path) for p in self.include):
            return False
        return not any(_semgrep_glob(p, path) for p in self.exclude)

    def evaluate(self, ctx: CheckContext, revision: str) -> Iterator[Violation]:
        outcome = type(self).evaluate_many([self], ctx, revision)[self]
        if outcome.not_run:
            raise NotRun(outcome.not_run)
        yield from outcome.violations

    def cannot_run(self, ctx: CheckContext) -> str | None:
        return NOT_INSTALLED if find_semgrep(ctx.semgrep) is None else None

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        # the revision's file list is the one exporting the targets walked
        languages = "/".join(self.semgrep_rule["languages"]) if self.extensions is not None else ""
        fields = (
            ("files", self.files),
            ("ignores", self.ignores),
            ("rule.paths.include", self.include),
            ("rule.paths.exclude", self.exclude),
        )
        return unmatched_files(
            [p for p in ctx.tree_files(revision) if self.typed(p)],
            language=("languages", languages) if languages else ("", ""),
            extensions=self.extensions or (),
            selectors=[("files", self.files, path_matches), ("rule.paths.include", self.include, _semgrep_glob)],
            wants=self.wants,
            set_fields=[name for name, globs in fields if globs],
        )

    @classmethod
    def evaluate_many(cls, checks: Sequence[Check], ctx: CheckContext, revision: str) -> dict[Check, Outcome]:
        mine = [c for c in checks if isinstance(c, SemgrepCheck)]
        commit = ctx.commit(revision)
        stash: dict[str, dict[Check, Outcome]] = ctx.cache.setdefault("semgrep", {})
        ready = stash.get(commit, {})
        if mine and all(c in ready for c in mine):
            return {c: ready[c] for c in mine}
        revisions = [commit]
        # run base and head in one invocation: the engine asks for head first, then the base
        if ctx.base is not None and ctx.head == commit and ctx.base != commit:
            revisions.append(ctx.base)
        outcomes = _run(mine, ctx, revisions)
        for rev, found in outcomes.items():
            stash.setdefault(rev, {}).update(found)
        return outcomes[commit]


def _run(checks: list[SemgrepCheck], ctx: CheckContext, revisions: list[str]) -> dict[str, dict[Check, Outcome]]:
    out: dict[str, dict[Check, Outcome]] = {
        rev: {c: Outcome([], complete=ctx.scope(rev) is None) for c in checks} for rev in revisions
    }
    if not checks:
        return out

    def not_run(reason: str) -> dict[str, dict[Check, Outcome]]:
        return {rev: {c: Outcome([], complete=False, not_run=reason) for c in checks} for rev in revisions}

    exe = find_semgrep(ctx.semgrep)
    if exe is None:
        return not_run(NOT_INSTALLED)
    # which files to export, per revision
    targets: dict[tuple[str, str], str] = {}  # (label, path) -> blob id
    labels = {rev: ("head" if i == 0 else "base") for i, rev in enumerate(revisions)}
    for rev in revisions:
        scope = ctx.scope(rev)
        for path, oid in ctx.tree_files(rev).items():
            if (scope is None or path in scope) and any(c.wants(path) for c in checks):
                targets[(labels[rev], path)] = oid
    data: dict[tuple[str, str], bytes] = {}
    for key, oid in sorted(targets.items()):
        obj = ctx.repo[oid]
        raw = bytes(obj.data) if hasattr(obj, "data") else b""
        if len(raw) <= MAX_FILE_SIZE and b"\0" not in raw:
            data[key] = raw
    if not data:
        return out
    with tempfile.TemporaryDirectory(prefix="comind-semgrep-") as tmp:
        root = Path(tmp)
        tree = root / "t"
        tree.mkdir()
        (tree / ".semgrepignore").write_text("")
        for (label, path), raw in data.items():
            target = tree / label / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(raw)
        rules_file = root / "rules.yml"
        lines = ["rules:"]
        for i, check in enumerate(checks):
            lines.append("- " + json.dumps({**check.semgrep_rule, "id": f"r{i}"}, ensure_ascii=False))
        rules_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = dict(os.environ)
        env.update(
            {
                "SEMGREP_SEND_METRICS": "off",
                "SEMGREP_ENABLE_VERSION_CHECK": "0",
                "SEMGREP_SETTINGS_FILE": str(root / "settings.yml"),
                "SEMGREP_LOG_FILE": str(root / "semgrep.log"),
                "SEMGREP_VERSION_CACHE_PATH": str(root / "version-cache"),
                "NO_COLOR": "1",
            }
        )
        cmd = [
            exe,
            "scan",
            "--config",
            str(rules_file),
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--quiet",
            "--no-git-ignore",
            "--project-root",
            str(tree),
            "--jobs",
            str(max(1, ctx.workers)),
            ".",
        ]
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=tree,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            return not_run(f"semgrep could not be started ({exc.strerror or exc})")
        try:
            stdout, stderr = proc.communicate(timeout=ctx.semgrep_timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return not_run(f"semgrep timed out after {ctx.semgrep_timeout:g} s")
        try:
            report = json.loads(stdout)
            if not isinstance(report, dict):
                raise ValueError("not an object")
        except ValueError:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            return not_run(f"semgrep failed (exit {proc.returncode}): {' / '.join(tail) or 'no output'}"[:500])
        failure = _raise_rule_errors(checks, report, proc.returncode)
        if failure:
            return not_run(failure)
        by_label = {label: rev for rev, label in labels.items()}
        unreadable = 0
        for result in report.get("results", []):
            try:
                index = int(str(result["check_id"]).rsplit(".", 1)[-1].lstrip("r"))
                label, _, path = str(result["path"]).removeprefix("./").partition("/")
                check, rev = checks[index], by_label[label]
                raw = data[(label, path)]
                start, end = result["start"], result["end"]
            except (KeyError, ValueError, IndexError, TypeError):
                unreadable += 1
                continue
            if not check.wants(path):
                continue
            text = raw[int(start.get("offset", 0)) : int(end.get("offset", 0))].decode("utf-8", "replace")
            message = str(result.get("extra", {}).get("message") or check.semgrep_rule["message"])
            out[rev][check].violations.append(
                check.violation(path, int(start.get("line", 0)) or None, int(end.get("line", 0)) or None, text, message)
            )
        skipped = [e for e in report.get("errors", []) if isinstance(e, dict) and e.get("level") != "error"]
        notes = []
        if skipped:
            notes.append(f"semgrep reported {len(skipped)} problem(s) with files, e.g. {_error_text(skipped[0])}"[:300])
        if unreadable:
            notes.append(f"{unreadable} semgrep result(s) could not be read")
        for rev in revisions:
            for check in checks:
                out[rev][check].warnings.extend(notes)
    return out


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill semgrep and its children (it runs semgrep-core), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def _error_text(error: Mapping[str, Any]) -> str:
    text = str(error.get("message") or error.get("long_msg") or error.get("short_msg") or error.get("type") or "")
    return " / ".join(line.strip() for line in text.strip().splitlines() if line.strip())[:400]


def _raise_rule_errors(checks: list[SemgrepCheck], report: Mapping[str, Any], returncode: int) -> str | None:
    """A rule semgrep rejects is the constraint's CheckError (exit 2); another fatal error is returned
    as the reason the checks did not run."""
    errors = [e for e in report.get("errors", []) if isinstance(e, dict) and e.get("level") == "error"]
    for error in errors:
        index = None
        rule_id = error.get("rule_id")
        if isinstance(rule_id, str) and rule_id.rsplit(".", 1)[-1].lstrip("r").isdigit():
            index = int(rule_id.rsplit(".", 1)[-1].lstrip("r"))
        else:
            for span in error.get("spans") or []:
                line = (span.get("start") or {}).get("line") if isinstance(span, dict) else None
                if isinstance(line, int) and 2 <= line < 2 + len(checks):
                    index = line - 2  # one rule per line after "rules:"
                    break
        if index is None and len(checks) == 1 and returncode != 0:
            index = 0
        if index is not None and 0 <= index < len(checks):
            raise CheckError(
                f"semgrep rejects the rule: {_error_text(error)}",
                "check.rule",
                record_id=checks[index].record_id or None,
            )
    if errors and returncode != 0:
        return f"semgrep failed (exit {returncode}): {_error_text(errors[0])}"
    return None
