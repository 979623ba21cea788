"""Diff-aware evaluation and governed suppressions, on real repositories with real commits."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_repo import APP, NO_EVAL, NO_RAW, app_repo, check_all, constraint, suppression, texts
from gitrepo import GitRepo

from comind.checks.evaluate import violation_finding
from comind.checks.interface import CheckError
from comind.checks.types import compile_check, compile_checks, load_check_file

RAW = "from myapp.db import raw_query\n\n\ndef index():\n    return raw_query('1')\n"


def raw_repo(tmp_path: Path) -> tuple[GitRepo, str]:
    """A base without violations, and a branch adding raw_query imports in two handlers."""
    repo, base = app_repo(tmp_path)
    repo.write("myapp/handlers/views.py", RAW)
    repo.write("myapp/handlers/legacy.py", RAW)
    repo.commit("raw queries")
    return repo, base


def test_suppression_anchored_to_a_file_silences_only_there(tmp_path: Path) -> None:
    repo, base = raw_repo(tmp_path)
    record = constraint(NO_RAW)
    waiver = suppression(record.id, anchors=[{"scope": "file", "path": "myapp/handlers/legacy.py", "role": "subject"}])
    ev = check_all(repo, [], records=[record], base=base, suppressions=[waiver])
    assert [v.path for v in ev.violations] == ["myapp/handlers/views.py"]
    assert [(s.violation.path, s.suppression_id) for s in ev.suppressed] == [("myapp/handlers/legacy.py", waiver.id)]
    assert ev.findings == [] and ev.failing == [record.id]


def test_suppression_by_short_id_symbol_and_directory(tmp_path: Path) -> None:
    repo, base = raw_repo(tmp_path)
    record = constraint(NO_RAW)
    by_dir = suppression(record.id[-8:], anchors=[{"scope": "file", "path": "myapp/handlers/", "role": "subject"}])
    ev = check_all(repo, [], records=[record], base=base, suppressions=[by_dir])
    assert ev.violations == [] and len(ev.suppressed) == 2
    # diff-aware, a direct-edge check looks at the changed files only: its verdict for head is unknown
    assert ev.unknown == [record.id] and ev.passing == []
    ev = check_all(repo, [], records=[record], base=None, suppressions=[by_dir])
    assert ev.passing == [record.id]  # every violation at head is waived: the check passes (T4)
    # a symbol anchor holds for lines inside that definition only
    spec = {**NO_EVAL, "id": "no-eval"}
    repo.write("myapp/tools.py", "def ok(x):\n    return eval(x)\n\n\ndef bad(x):\n    return eval(x)\n")
    head = repo.commit("evals")
    record = constraint(spec)
    by_symbol = suppression(
        "no-eval", anchors=[{"scope": "symbol", "path": "myapp/tools.py", "symbol": "ok", "role": "subject"}]
    )
    ev = check_all(repo, [], records=[record], base=base, head=head, suppressions=[by_symbol])
    assert [(v.path, v.line) for v in ev.violations] == [("myapp/tools.py", 6)]
    assert [s.violation.line for s in ev.suppressed] == [2]


def test_expired_suppression_is_a_finding_and_silences_nothing(tmp_path: Path) -> None:
    repo, base = raw_repo(tmp_path)
    record = constraint(NO_RAW)
    old = suppression(record.id, expires="2026-02-28")  # TODAY is 2026-03-01
    month = suppression(record.id, expires="2026-03", title="Valid through March")
    ev = check_all(repo, [], records=[record], base=base, suppressions=[old])
    assert len(ev.violations) == 2 and ev.suppressed == []
    assert [(f.type, f.level, f.rule, f.record_id) for f in ev.findings] == [
        ("suppression", "warning", "comind/suppression-expired", old.id)
    ]
    assert "expired on 2026-02-28" in ev.findings[0].message and "team-data" in ev.findings[0].message
    ev = check_all(repo, [], records=[record], base=base, suppressions=[month])
    assert ev.violations == [] and len(ev.suppressed) == 2 and ev.findings == []


def test_unused_suppression_is_a_finding(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    repo.write("myapp/handlers/views.py", APP["myapp/handlers/views.py"] + "\n\ndef more():\n    return 1\n")
    repo.commit("harmless")
    record = constraint({**NO_RAW, "indirect": True})  # indirect: the whole graph, even diff-aware
    unused = suppression(record.id)
    stray = suppression("0190f0f0-0000-7000-8000-000000000000", title="Names nothing")
    ev = check_all(repo, [], records=[record], base=base, suppressions=[unused, stray])
    assert ev.violations == [] and ev.passing == [record.id]
    found = {f.record_id: f for f in ev.findings}
    assert set(found) == {unused.id, stray.id}
    assert found[unused.id].rule == "comind/suppression-unused" and "matches no violation" in found[unused.id].message
    assert "no checked constraint" in found[stray.id].message
    # where head was only partly looked at (diff-aware ast-grep, direct edges), unused cannot be known
    for partial in (constraint(NO_EVAL), constraint(NO_RAW)):
        ev = check_all(repo, [], records=[partial], base=base, suppressions=[suppression(partial.id)])
        assert ev.findings == [] and ev.unknown == [partial.id]


def test_new_is_against_the_merge_base(tmp_path: Path) -> None:
    """main fixed a violation after the branch forked; the branch still has it: not the branch's doing."""
    files = dict(APP)
    files["myapp/handlers/views.py"] = RAW
    repo, fork = app_repo(tmp_path, files)
    repo.write("myapp/other.py", "X = 1\n")
    repo.commit("unrelated work on the branch")
    repo.checkout("main")
    repo.write("myapp/handlers/views.py", "def index():\n    return 1\n")
    repo.commit("fix on main")
    for spec in (NO_RAW, {**NO_RAW, "indirect": True}):  # per changed file, and on the whole graph
        ev = check_all(repo, spec, base="main", head="feature")
        assert ev.base == fork and ev.violations == []


def test_a_new_package_marker_renames_modules_so_the_whole_graph_is_checked(tmp_path: Path) -> None:
    """Adding __init__.py makes views.py the module myapp.handlers.views: its old import is now a
    violation of a module-glob check, though views.py itself did not change."""
    files = {k: v for k, v in APP.items() if k != "myapp/handlers/__init__.py"}
    files["myapp/handlers/views.py"] = RAW
    repo, base = app_repo(tmp_path, files)
    spec = {**NO_RAW, "from": "myapp.handlers.*"}
    assert check_all(repo, spec, base=None).violations == []
    repo.write("myapp/handlers/__init__.py", "")
    repo.commit("make handlers a package")
    ev = check_all(repo, spec, base=base)
    assert [(v.path, v.text) for v in ev.violations] == [("myapp/handlers/views.py", "imports myapp.db.raw_query")]


def test_a_change_that_only_adds_files(tmp_path: Path) -> None:
    repo, base = app_repo(tmp_path)
    repo.write("myapp/handlers/admin.py", RAW)
    repo.write("myapp/tools.py", "def run(x):\n    return eval(x)\n")
    repo.commit("add files")
    ev = check_all(repo, [NO_RAW, NO_EVAL], base=base)
    assert sorted((v.path, v.text) for v in ev.violations) == [
        ("myapp/handlers/admin.py", "imports myapp.db.raw_query"),
        ("myapp/tools.py", "eval(x)"),
    ]


def test_renamed_file_keeps_its_violations_old(tmp_path: Path) -> None:
    files = dict(APP)
    files["myapp/handlers/views.py"] = RAW
    repo, base = app_repo(tmp_path, files)
    repo.mv("myapp/handlers/views.py", "myapp/handlers/pages.py")
    repo.commit("rename")
    ev = check_all(repo, NO_RAW, base=base)
    assert ev.violations == [] and ev.baseline == 1
    ev = check_all(repo, NO_RAW, base=None)
    assert texts(ev) == ["imports myapp.db.raw_query"]
    assert "myapp.handlers.pages imports myapp.db.raw_query" in ev.violations[0].message


def test_several_types_in_one_evaluation(tmp_path: Path) -> None:
    repo, base = raw_repo(tmp_path)
    records = [
        constraint(NO_RAW),
        constraint(NO_EVAL, severity="should"),
        constraint({"type": "test", "test": "tests/test_x.py::test_x"}),
    ]
    ev = check_all(repo, [], records=records, base=base)
    # the test was missing at the base already: not new, but the check fails at head
    assert [v.record_id for v in ev.violations] == [records[0].id] * 2
    assert ev.unknown == [records[1].id] and sorted(ev.failing) == sorted([records[0].id, records[2].id])
    must = violation_finding(records[0], ev.violations[0], in_diff=True)
    should = violation_finding(records[1], ev.violations[0])
    assert (must.type, must.level, must.in_diff) == ("violation", "error", True)
    assert should.level == "warning" and must.fingerprint == ev.violations[0].fingerprint


def test_fingerprint_ignores_lines_and_spacing() -> None:
    from comind.checks.interface import Violation

    a = Violation("r", "a.py", 3, 3, "eval( x )", "m")
    b = Violation("r", "a.py", 30, 31, "eval(x)", "other message")
    assert a.fingerprint == b.fingerprint and a.key == b.key
    assert a.fingerprint != Violation("r", "b.py", 3, 3, "eval(x)", "m").fingerprint


def test_compile_checks_over_records(tmp_path: Path) -> None:
    good = constraint(NO_RAW)
    plain = constraint(NO_RAW)
    plain.data["fields"].pop("check")
    assert [(r.id, c.type) for r, c in compile_checks([good, plain])] == [(good.id, "graph")]
    broken = constraint({"type": "graph", "from": "a"})
    with pytest.raises(CheckError, match=f"^constraint {broken.id[-8:]}: check: a graph check needs forbid"):
        compile_checks([good, broken])


def test_load_check_file(tmp_path: Path) -> None:
    path = tmp_path / "check.yml"
    path.write_text("type: graph\nfrom: myapp/handlers/**\nforbid: [myapp.db.raw_query]\n")
    assert load_check_file(path) == {"type": "graph", "from": "myapp/handlers/**", "forbid": ["myapp.db.raw_query"]}
    path.write_text(
        "rules:\n  - id: no-eval\n    languages: [python]\n    pattern: eval(...)\n"
        "    message: no eval\n    severity: ERROR\n"
    )
    spec = load_check_file(path)
    assert spec["type"] == "semgrep" and spec["rule"]["id"] == "no-eval"
    compile_check("", spec)
    path.write_text("id: no-eval\nlanguage: python\nrule:\n  pattern: eval($X)\nmessage: eval of $X\n")
    assert load_check_file(path)["type"] == "ast-grep"
    for text, message in [
        ("type: graph\nfrom: [a\n", "not valid YAML at line"),
        ("- a\n- b\n", "check: expected a mapping with a type, got a list"),
        ("language: python\nrule:\n  pattern: 'def ('\n", "check.rule.pattern: the pattern 'def (' is not valid"),
        ("rules: []\n", "check.rules: a semgrep config for one constraint holds exactly one rule, found 0"),
    ]:
        path.write_text(text)
        with pytest.raises(CheckError) as err:
            load_check_file(path)
        assert str(err.value).startswith(f"{path}: "), str(err.value)
        assert message in str(err.value)
    with pytest.raises(CheckError, match="cannot read the file"):
        load_check_file(tmp_path / "missing.yml")
