"""A check whose selector matches nothing at head is a warning, never a silent pass: one line per
selector, naming the constraint, the check type, the selector and what it looked for. Real
repositories with real commits; semgrep's only stand-in is an executable that must not be run."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from check_repo import APP, NO_EVAL, NO_RAW, app_repo, check_all, constraint
from gitrepo import GitRepo

from comind.records import short_id

FILES = {
    **APP,
    "tests/test_db.py": "from myapp.db import safe\n\n\ndef test_safe():\n    assert safe('x') == 'x'\n",
    "pyproject.toml": '[project]\nname = "myapp"\nversion = "1"\ndependencies = ["requests>=2"]\n',
    "uv.lock": 'version = 1\n\n[[package]]\nname = "requests"\nversion = "2.31.0"\n',
}


def repo_with_change(tmp_path: Path) -> tuple[GitRepo, str]:
    """The app at a base, and a branch making an unrelated change to a handler."""
    repo, base = app_repo(tmp_path, FILES)
    repo.write("myapp/handlers/views.py", APP["myapp/handlers/views.py"] + "\n\ndef more():\n    return 2\n")
    repo.commit("an unrelated change")
    return repo, base


def warned(tmp_path: Path, spec: dict[str, Any], **options: Any) -> list[list[str]]:
    """The warnings of one constraint with ``spec``, diff-aware and then with --all."""
    repo, base = repo_with_change(tmp_path)
    record = constraint(spec)
    return [check_all(repo, [], records=[record], base=b, **options).warnings for b in (base, None)]


def sid(warnings: list[str]) -> set[str]:
    return {w.split(" ", 2)[1] for w in warnings}


def test_graph_forbid_glob_naming_no_module_warns(tmp_path: Path) -> None:
    spec = {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.legacy.*", "myapp.db.raw_query"]}
    repo, base = repo_with_change(tmp_path)
    record = constraint(spec)
    for b in (base, None):
        ev = check_all(repo, [], records=[record], base=b)
        assert ev.warnings == [
            f"constraint {short_id(record.id)} (graph): forbid glob 'myapp.legacy.*' matches no module, definition "
            "or import of this tree (other forbid globs do)"
        ]
        assert ev.violations == [] and ev.findings == []  # a warning, never a failure
    alone = {**spec, "forbid": ["myapp.legacy.*"]}
    for warnings in warned(tmp_path / "alone", alone):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "forbid glob 'myapp.legacy.*' matches no module, definition or import of this tree, "
            "so the check cannot fail"
        ]


def test_a_module_s_own_variable_and_calls_never_warn(tmp_path: Path) -> None:
    # `myapp.db.POOL` is a module variable the index does not hold; a call target names a function
    for spec in (
        {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.db.POOL"]},
        {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.db.raw_query"], "edges": "calls"},
    ):
        assert warned(tmp_path / str(len(spec)), spec) == [[], []]


def test_graph_from_glob_naming_no_module_warns(tmp_path: Path) -> None:
    spec = {**NO_RAW, "from": "myapp/handler/**"}
    for warnings in warned(tmp_path, spec):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "from glob 'myapp/handler/**' matches no module of this tree, so the check cannot fail"
        ]


def test_graph_required_target_naming_nothing_warns_while_its_violation_is_old(tmp_path: Path) -> None:
    """A require naming nothing fails at head: --all reports the violation, so only the diff-aware
    run, where it is part of the baseline, warns."""
    diff_aware, every = warned(tmp_path, {"type": "graph", "from": "myapp.handlers.*", "require": ["myapp.dbx"]})
    assert [w.split(": ", 1)[1] for w in diff_aware] == [
        "require glob 'myapp.dbx' matches no module, definition or import of this tree, so the check cannot pass"
    ]
    assert every == []


def test_ast_grep_files_glob_matching_no_file_warns(tmp_path: Path) -> None:
    for warnings in warned(tmp_path, {**NO_EVAL, "files": ["src/**/*.py"]}):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "files glob 'src/**/*.py' matches no python file of this tree, so the check cannot fail"
        ]
    for warnings in warned(tmp_path / "ts", {**NO_EVAL, "language": "typescript"}):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "language typescript: no .ts, .mts or .cts file in this tree, so the check cannot fail"
        ]


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


SEMGREP = {
    "type": "semgrep",
    "rule": {"id": "no-eval", "languages": ["python"], "pattern": "eval(...)", "message": "no eval"},
}


def test_semgrep_path_globs_matching_no_file_warn(tmp_path: Path) -> None:
    # with no file to scan semgrep is never started: one that would fail proves it
    never = executable(tmp_path / "bin" / "semgrep", "#!/bin/sh\nexit 9\n")
    spec = {**SEMGREP, "files": ["src/**"]}
    for warnings in warned(tmp_path, spec, semgrep=str(never)):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "files glob 'src/**' matches no python file of this tree, so the check cannot fail"
        ]
    spec = {**SEMGREP, "rule": {**SEMGREP["rule"], "paths": {"include": ["lib/"]}}}
    for warnings in warned(tmp_path / "include", spec, semgrep=str(never)):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "rule.paths.include glob 'lib/' matches no python file of this tree, so the check cannot fail"
        ]


def test_a_check_that_did_not_run_does_not_warn(tmp_path: Path) -> None:
    repo, base = repo_with_change(tmp_path)
    unrun, control = constraint({**SEMGREP, "files": ["src/**"]}), constraint({**NO_EVAL, "files": ["src/**"]})
    for b in (base, None):  # semgrep not installed: a not_run finding, and no word on its globs
        ev = check_all(repo, [], records=[unrun, control], base=b, semgrep=str(tmp_path / "no-such-semgrep"))
        assert [(f.type, f.record_id) for f in ev.findings] == [("not_run", unrun.id)]
        assert sid(ev.warnings) == {short_id(control.id)}


def test_test_check_naming_a_missing_test_warns_while_its_violation_is_old(tmp_path: Path) -> None:
    diff_aware, every = warned(tmp_path, {"type": "test", "test": "tests/test_db.py::test_raw"})
    assert [w.split(": ", 1)[1] for w in diff_aware] == [
        "test 'tests/test_db.py::test_raw' names no test of tests/test_db.py, so the check cannot pass"
    ]
    assert every == []  # --all reports the missing test as a violation: no need to say it twice
    diff_aware, _ = warned(tmp_path / "file", {"type": "test", "test": "tests/test_auth.py::test_revocation"})
    assert [w.split(": ", 1)[1] for w in diff_aware] == [
        "test 'tests/test_auth.py::test_revocation' names a file this tree does not have, so the check cannot pass"
    ]


def test_dependency_forbid_of_a_package_no_manifest_names_warns(tmp_path: Path) -> None:
    spec = {"type": "dependency", "ecosystem": "pypi", "package": "reqeusts", "forbid": ">=3"}
    for warnings in warned(tmp_path, spec):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "package pypi/reqeusts is named by no manifest or lockfile of this tree, so the check cannot fail"
        ]
    spec = {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": ">=3", "paths": ["svc/**"]}
    for warnings in warned(tmp_path / "paths", spec):
        assert [w.split(": ", 1)[1] for w in warnings] == [
            "paths glob 'svc/**' matches no file of this tree that declares a dependency, so the check cannot fail"
        ]


def test_a_manifest_that_cannot_be_read_is_named_with_why(tmp_path: Path) -> None:
    """A malformed manifest read as "named by no manifest": the warning names the file it could not
    read and the parser's reason, on one line, for each ecosystem (a ban of every version too)."""
    repo = GitRepo(tmp_path)
    repo.write("package.json", '{"dependencies": {"lodash": "^4.17.21",}}\n')
    repo.write("web/pyproject.toml", '[project\ndependencies = ["requests>=2"]\n')
    repo.write("Cargo.toml", '[dependencies]\nserde = "1"\n[dependencies]\n')
    repo.write("go.mod", "module example.com/x\n\nrequire (\n\tgithub.com/foo/bar\n)\n")
    repo.commit("manifests")
    said = {
        ("npm", "lodash"): "package.json: JSONDecodeError: Expecting property name enclosed in double quotes",
        ("pypi", "requests"): "web/pyproject.toml: TOMLDecodeError: Expected ']' at the end of a table",
        ("cargo", "serde"): "Cargo.toml: TOMLDecodeError: Cannot declare ('dependencies',) twice",
        ("go", "github.com/foo/bar"): "go.mod: cannot read require line 'github.com/foo/bar'",
    }
    for (ecosystem, package), reason in said.items():
        for forbid in ("<1", ">=0"):
            spec = {"type": "dependency", "ecosystem": ecosystem, "package": package, "forbid": forbid}
            [warning] = check_all(repo, spec, base=None).warnings
            assert "\n" not in warning
            assert warning.split(": ", 1)[1].startswith(
                f"package {ecosystem}/{package} is named by no manifest or lockfile that could be read, "
                f"so the check cannot fail (reading {reason}"
            ), warning
    spec = {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": "<1", "paths": ["web/**"]}
    [warning] = check_all(repo, spec, base=None).warnings
    assert "under 'web/**' that could be read, so the check cannot fail (reading web/pyproject.toml: " in warning
    # a required package missing is a violation, which names the file too
    [missing] = check_all(repo, {**spec, "require": ">=2"}, base=None).violations
    assert missing.message.startswith(
        "pypi/requests is required (>=2) but no manifest or lockfile under web/** that could be read names it "
        "(reading web/pyproject.toml: TOMLDecodeError: "
    ), missing.message


def test_a_broken_manifest_that_never_names_the_package_is_not_blamed(tmp_path: Path) -> None:
    """A parser's test fixtures keep a broken package.json or Cargo.toml on purpose (7 of 61 real
    histories at HEAD). One that never mentions the package cannot be the one naming it: a ban of
    every version stays quiet, and an absent package is warned of as when every file was read."""
    repo = GitRepo(tmp_path)
    repo.write("package.json", '{"dependencies": {"express": "^4.21.0"}}\n')
    repo.write("tests/fixtures/broken/package.json", '{"name": "broken",\n')
    repo.write("pyproject.toml", '[project]\nname = "app"\ndependencies = ["flask>=3"]\n')
    repo.write("tests/fixtures/bad/pyproject.toml", '[project\ndependencies = ["Python_Dateutil>=2"]\n')
    repo.commit("a parser's fixtures")
    ban = {"type": "dependency", "ecosystem": "npm", "package": "left-pad", "forbid": ">=0"}
    assert check_all(repo, ban, base=None).warnings == []
    [warning] = check_all(repo, {**ban, "forbid": "<1"}, base=None).warnings
    assert warning.endswith(
        "package npm/left-pad is named by no manifest or lockfile of this tree, so the check cannot fail"
    ), warning
    # one that mentions it, as its ecosystem may spell the name, may be the one: still named
    said = {"type": "dependency", "ecosystem": "pypi", "package": "python-dateutil", "forbid": ">=0"}
    [warning] = check_all(repo, said, base=None).warnings
    assert "that could be read, so the check cannot fail (reading tests/fixtures/bad/pyproject.toml: " in warning


def test_selectors_matching_something_do_not_warn(tmp_path: Path) -> None:
    """Every type with selectors that match; a third-party package forbidden before anyone imports
    it, a function named inside a module, a package banned outright. Beside them one that matches
    nothing, so the run is known to look."""
    repo, base = repo_with_change(tmp_path)
    never = executable(tmp_path / "bin" / "semgrep", "#!/bin/sh\nexit 9\n")
    quiet = [
        NO_RAW,
        {"type": "graph", "from": ["myapp.handlers.*", "tests/**"], "forbid": ["httpx", "myapp.db.safe"]},
        {"type": "graph", "from": "myapp.handlers.*", "require": ["myapp.services.fetch"], "indirect": True},
        {"type": "graph", "from": "myapp/**", "forbid": ["myapp.db"], "files": ["myapp/handlers/**"]},
        {**NO_EVAL, "files": ["myapp/**/*.py"], "ignores": ["tests/**"]},
        {"type": "test", "test": "tests/test_db.py::test_safe"},
        {"type": "dependency", "ecosystem": "pypi", "package": "requests", "forbid": ">=3", "paths": ["*.toml"]},
        {"type": "dependency", "ecosystem": "pypi", "package": "left-pad", "forbid": ">=0"},
    ]
    records = [constraint(s) for s in quiet]
    loud = constraint({**NO_RAW, "from": "myapp/handler/**"})
    for b in (base, None):
        ev = check_all(repo, [], records=[*records, loud], base=b, semgrep=str(never))
        assert sid(ev.warnings) == {short_id(loud.id)}, ev.warnings
    # semgrep over files it wants: it runs (and here fails to), so it is no vacuous pass either way
    ev = check_all(repo, {**SEMGREP, "files": ["myapp/**"]}, base=None, semgrep=str(never))
    assert ev.warnings == [] and [f.type for f in ev.findings] == ["not_run"]


def test_a_third_party_java_package_beside_sample_code_under_com_does_not_warn(tmp_path: Path) -> None:
    """Java names packages by reversed domains: `com.example` samples beside `com.acme.app` share
    only `com`, which makes no package of the tree's own, so `com.squareup.moshi` is third-party
    (as in google/gson, whose test-shrinker holds com.example classes); `com.acme.nosuch` is not."""
    repo = GitRepo(tmp_path)
    repo.write("src/main/java/com/acme/app/Json.java", "package com.acme.app;\n\npublic class Json {}\n")
    repo.write("src/main/java/com/acme/db/Pool.java", "package com.acme.db;\n\npublic class Pool {}\n")
    repo.write("samples/src/main/java/com/example/Demo.java", "package com.example;\n\npublic class Demo {}\n")
    repo.commit("app and a sample")
    third_party = constraint({"type": "graph", "from": "com.acme.**", "forbid": ["com.squareup.moshi.**"]})
    typo = constraint({"type": "graph", "from": "com.acme.**", "forbid": ["com.acme.nosuch.**"]})
    ev = check_all(repo, [], records=[third_party, typo], base=None)
    assert sid(ev.warnings) == {short_id(typo.id)}, ev.warnings
