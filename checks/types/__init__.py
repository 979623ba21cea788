"""The check types, one module each, registered in :data:`CHECK_TYPES`; compiling a constraint's
``fields.check`` into a :class:`~comind.checks.interface.Check`.

Adding a check type is one module (a :class:`~comind.checks.interface.Check` subclass) and one
line in :data:`_MODULES`. A type's module is imported when a check of that type is compiled: a
ledger with no ast-grep check never loads ast-grep's thread pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comind.records import Record

import importlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from comind import config as configuration
from comind.checks.interface import Check, CheckError, describe

# type name -> (its module in this package, its Check class)
_MODULES = {
    "graph": ("graph", "GraphCheck"),
    "dependency": ("dependency", "DependencyCheck"),
    "ast-grep": ("astgrep", "AstGrepCheck"),
    "semgrep": ("semgrep", "SemgrepCheck"),
    "test": ("testref", "TestCheck"),
}


class _Registry(Mapping[str, type[Check]]):
    """The check types by name, each class imported on first use."""

    def __getitem__(self, name: str) -> type[Check]:
        module, cls = _MODULES[name]
        found: type[Check] = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


CHECK_TYPES: Mapping[str, type[Check]] = _Registry()


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
    name = os.fspath(path)
    try:  # bounded like .comind.yml: a regular file, no aliases, bounded depth and numbers
        data = configuration.parse_yaml(configuration.read_text(Path(name)))
    except FileNotFoundError as exc:
        raise CheckError(f"cannot read the file ({exc.strerror or exc})", "check", source=name) from None
    except configuration.ConfigError as exc:
        raise CheckError(str(exc), "check", source=name) from None
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


def check_of(record: Record) -> Check | None:
    """The compiled check of a constraint record (None when it has none)."""
    fields = record.fields
    if "check" not in fields:
        return None
    return compile_check(record.id, fields["check"])


def compile_checks(records: Iterable[Record]) -> list[tuple[Record, Check]]:
    """(record, check) for every constraint record carrying a check; CheckError on a broken one."""
    out: list[tuple[Any, Check]] = []
    for record in records:
        if record.kind != "constraint":
            continue
        check = check_of(record)
        if check is not None:
            out.append((record, check))
    return out
