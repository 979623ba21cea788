"""Go: functions, methods (qualname ``Type.Method``, receiver without ``*`` or type
parameters), struct, interface and other type declarations, interface methods."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, text, unquote

if TYPE_CHECKING:
    from tree_sitter import Node

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}
_RECEIVER = re.compile(r"[A-Za-z_]\w*")


class Go(Language):
    name = "go"
    grammar = ("tree_sitter_go", "language")
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

    def kind_of(self, node: Node, spec: DefSpec, parent_kind: str | None) -> str:
        if node.type == "type_spec" and (t := node.child_by_field_name("type")) is not None:
            return _TYPE_KINDS.get(t.type, "type")
        return spec.kind

    def owner_of(self, node: Node) -> str | None:
        if node.type != "method_declaration" or (recv := node.child_by_field_name("receiver")) is None:
            return None
        for param in recv.named_children:
            t = param.child_by_field_name("type")
            if t is not None:
                m = _RECEIVER.search(text(t).lstrip("*& \t"))
                return m.group(0) if m else None
        return None

    def imports(self, node: Node) -> list[Import]:
        path, name = node.child_by_field_name("path"), node.child_by_field_name("name")
        if path is None:
            return []
        return [Import(unquote(text(path)), (), text(name) if name is not None else None, node.start_point[0] + 1)]


LANGUAGE = Go()
