"""Go: functions, methods (qualname ``Type.Method``, receiver without ``*`` or type
parameters), struct, interface and other type declarations, interface methods."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, unquote

if TYPE_CHECKING:
    from ast_grep_py import SgNode

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}
_RECEIVER = re.compile(r"[A-Za-z_]\w*")


class Go(Language):
    name = "go"
    ast_grep_name = "go"
    extensions: ClassVar[tuple[str, ...]] = (".go",)
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_declaration": DefSpec("function", sig=("type_parameters", "parameters", "result")),
        "method_declaration": DefSpec("method", sig=("receiver", "parameters", "result")),
        "method_elem": DefSpec("method", sig=("parameters", "result"), body=None),
        "type_spec": DefSpec("type", sig=("type_parameters",), body="type"),
        "type_alias": DefSpec("type", sig=("type_parameters",), body="type"),
    }
    atomic_kinds = frozenset({"interpreted_string_literal", "raw_string_literal", "rune_literal"})
    call_kinds = frozenset({"call_expression"})
    import_kinds = frozenset({"import_spec"})
    string_calls = False  # no interpolation in its string literals

    def kind_of(self, node: SgNode, spec: DefSpec, parent_kind: str | None) -> str:
        if node.kind() == "type_spec" and (t := node.field("type")) is not None:
            return _TYPE_KINDS.get(t.kind(), "type")
        return spec.kind

    def owner_of(self, node: SgNode) -> str | None:
        if node.kind() != "method_declaration" or (recv := node.field("receiver")) is None:
            return None
        for param in recv.named_children():
            t = param.field("type")
            if t is not None:
                m = _RECEIVER.search(t.text().lstrip("*& \t"))
                return m.group(0) if m else None
        return None

    def imports(self, node: SgNode) -> list[Import]:
        path, name = node.field("path"), node.field("name")
        if path is None:
            return []
        return [Import(unquote(path.text()), (), name.text() if name is not None else None,
                       node.range().start.line + 1)]


LANGUAGE = Go()
