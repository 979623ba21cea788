"""The check types, one module each, registered in :data:`CHECK_TYPES`; compiling a constraint's
``fields.check`` into a :class:`~comind.checks.interface.Check`.

Adding a check type is one module (a :class:`~comind.checks.interface.Check` subclass) and one
line in :data:`CHECK_TYPES`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from comind.checks.interface import Check, CheckError, describe
from comind.checks.types import astgrep, dependency, graph, semgrep, testref

CHECK_TYPES: dict[str, type[Check]] = {
    cls.type: cls
    for cls in (
        graph.GraphCheck,
        dependency.DependencyCheck,
        astgrep.AstGrepCheck,
        semgrep.SemgrepCheck,
        testref.TestCheck,
    )
}


def compile_check(record_id: str, spec: Any) -> Check:
    """Compile a constraint's ``fields.check`` into a :class:`Check`; CheckError naming the record."""
    try:
        if not isinstance(spec, Mapping):
            raise CheckError(f"expected a mapping with a type, got {describe(spec)}", "check")
        types = CHECK_TYPES
        kind = spec.get("type")
        if not isinstance(kind, str) or kind not in types:
            got = "nothing" if kind is None else describe(kind)
            raise CheckError(f"unknown check type {got}; known types: {', '.join(types)}", "check.type")
        return types[kind].parse(spec, record_id)
    except CheckError as exc:
        if record_id:
            raise exc.for_record(record_id) from None
        raise


def load_check_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a check spec from a YAML file (for ``comind remember … --check FILE``).

    The file holds one check mapping (``type: graph`` …). Without ``type``, an ast-grep rule file
    (``language`` and ``rule``) and a semgrep config with exactly one rule (``rules: [...]``) are
    recognised. Raises CheckError naming the file.
    """
    import yaml

    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise CheckError(f"cannot read the file ({exc.strerror or exc})", "check", source=name) from None
    if len(raw) > 64 * 1024:
        raise CheckError(f"{len(raw)} bytes, at most 65536", "check", source=name)
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CheckError("not UTF-8 text", "check", source=name) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise CheckError(f"not valid YAML{at}: {problem}", "check", source=name) from None
    try:
        if not isinstance(data, dict):
            raise CheckError(f"expected a mapping with a type, got {describe(data)}", "check")
        if "type" not in data:
            if isinstance(data.get("rules"), list):
                if len(data["rules"]) != 1:
                    raise CheckError(
                        f"a semgrep config for one constraint holds exactly one rule, found {len(data['rules'])}",
                        "check.rules",
                    )
                data = {"type": "semgrep", "rule": data["rules"][0]}
            elif "rule" in data and "language" in data:
                data = {"type": "ast-grep", **data}
        compile_check("", data)
    except CheckError as exc:
        raise exc.for_source(name) from None
    return data


def check_of(record: Any) -> Check | None:
    """The compiled check of a constraint record (None when it has none)."""
    fields = record.fields
    if "check" not in fields:
        return None
    return compile_check(record.id, fields["check"])


def compile_checks(records: Iterable[Any]) -> list[tuple[Any, Check]]:
    """(record, check) for every constraint record carrying a check; CheckError on a broken one."""
    out: list[tuple[Any, Check]] = []
    for record in records:
        if record.kind != "constraint":
            continue
        check = check_of(record)
        if check is not None:
            out.append((record, check))
    return out
