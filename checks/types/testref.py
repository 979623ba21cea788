"""``test`` checks: the constraint is proven by a named test, which must exist (and may run).

```yaml
type: test
test: "tests/test_auth.py::test_revocation"     # or path::Class::method, or just a path
run: false                                       # true: run it at head with pytest
timeout: 300                                     # seconds, for run: true
```

Existence is read from the code index of the revision (``Class::method`` is the qualname
``Class.method``; a parametrisation suffix ``[...]`` is ignored). With ``run: true`` the test is
run at head only, never at the base: ``python -m pytest -q NODE`` in the work tree, which must be
checked out at head. A failure (or a timeout) is a violation that no base can excuse; a work tree
that is missing or elsewhere is a warning, and the check's verdict stays unknown.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import ClassVar

import pygit2

from comind.checks.context import CheckContext
from comind.checks.interface import Check, CheckError, CheckField, Outcome, Violation

_NAME = re.compile(r"^[A-Za-z_$][\w$]*$")


class TestCheck(Check):
    __test__ = False  # not a pytest test class, whatever its name

    type: ClassVar[str] = "test"
    fields: ClassVar[tuple[CheckField, ...]] = (
        CheckField("test", "str", True, 'a test node like "tests/test_auth.py::test_revocation"'),
        CheckField("run", "bool", False, "run the test at head with pytest (default false)"),
        CheckField("timeout", "number", False, "seconds before a run is stopped (default 300)"),
    )

    def compile(self) -> None:
        node = self.spec["test"].strip()
        path, *parts = node.split("::")
        if not path or path.startswith("/") or "\\" in path or any(seg in ("", ".", "..") for seg in path.split("/")):
            raise CheckError(
                f'expected a test node like "tests/test_auth.py::test_revocation", got {node!r}'[:300], "check.test"
            )
        if parts:
            parts[-1] = re.sub(r"\[.*\]$", "", parts[-1])
        if any(not _NAME.match(p) for p in parts):
            raise CheckError(f"expected path::function or path::Class::method, got {node!r}"[:300], "check.test")
        self.node = node
        self.path = path
        self.qualname = ".".join(parts) or None
        self.run: bool = bool(self.spec.get("run", False))
        timeout = self.spec.get("timeout")
        self.timeout: float | None = float(timeout) if timeout is not None else None
        if self.run and not path.endswith(".py"):
            raise CheckError(f"run: true runs pytest, so the test must be in a Python file, not {path!r}", "check.run")

    def affected_by(self, ctx: CheckContext, paths: Iterable[str]) -> bool:
        return self.path in set(paths)

    def _find(self, ctx: CheckContext, revision: str) -> tuple[bool, int | None]:
        """Whether the node exists at the revision, and the line of its definition."""
        if self.path not in ctx.tree_files(revision):
            return False, None
        if self.qualname is None:
            return True, None
        found = ctx.snapshot(revision).find(self.path, self.qualname)
        return (True, found.start_line) if found is not None else (False, None)

    def unmatched(self, ctx: CheckContext, revision: str) -> list[str]:
        # a missing test is a violation, but one the base had too is reported by no finding
        if self._find(ctx, revision)[0]:
            return []
        missing = self.path not in ctx.tree_files(revision)
        names = "a file this tree does not have" if missing else f"no test of {self.path}"
        return [f"test {self.node!r} names {names}, so the check cannot pass"]

    def evaluate(self, ctx: CheckContext, revision: str) -> Iterable[Violation]:
        return type(self).evaluate_many([self], ctx, revision)[self].violations

    @classmethod
    def evaluate_many(cls, checks: Sequence[Check], ctx: CheckContext, revision: str) -> dict[Check, Outcome]:
        out: dict[Check, Outcome] = {}
        commit = ctx.commit(revision)
        for check in checks:
            assert isinstance(check, TestCheck)
            outcome = out[check] = Outcome([])
            exists, line = check._find(ctx, commit)
            if not exists:
                what = "file" if check.qualname is None else "test"
                outcome.violations.append(
                    check.violation(
                        check.path,
                        None,
                        None,
                        f"test {check.node} missing",
                        check.message or f"the {what} {check.node} that proves this constraint does not exist",
                    )
                )
                continue
            if check.run and (ctx.head is None or commit == ctx.head):
                check._run(ctx, commit, line, outcome)
        return out

    def _run(self, ctx: CheckContext, commit: str, line: int | None, outcome: Outcome) -> None:
        work_tree = ctx.work_tree
        if work_tree is None:
            outcome.complete = False
            outcome.warnings.append(f"test {self.node} not run: no work tree")
            return
        try:
            at = str(pygit2.Repository(str(work_tree)).head.target)
        except (pygit2.GitError, KeyError, ValueError):
            at = None
        if at != commit:
            outcome.complete = False
            outcome.warnings.append(
                f"test {self.node} not run: the work tree {work_tree} is at "
                f"{(at or 'no commit')[:12]}, not at head {commit[:12]}"
            )
            return
        timeout = self.timeout or ctx.test_timeout
        cmd = [ctx.python or sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", self.node]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=work_tree,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            outcome.complete = False
            outcome.warnings.append(f"test {self.node} not run: {exc.strerror or exc}")
            return
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.communicate()
            outcome.violations.append(
                self.violation(
                    self.path,
                    line,
                    line,
                    f"test {self.node} fails",
                    self.message
                    or f"the test {self.node} that proves this constraint did not finish within {timeout:g} s",
                    head_only=True,
                )
            )
            return
        if proc.returncode == 0:
            return
        tail = [x for x in output.decode("utf-8", "replace").strip().splitlines() if x.strip()][-3:]
        what = {1: "fails", 5: "was not collected by pytest"}.get(
            proc.returncode, f"could not be run (pytest exit {proc.returncode})"
        )
        outcome.violations.append(
            self.violation(
                self.path,
                line,
                line,
                f"test {self.node} fails",
                self.message or f"the test {self.node} that proves this constraint {what}: {' / '.join(tail)}"[:1000],
                head_only=True,
            )
        )
