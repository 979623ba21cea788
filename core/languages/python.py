"""Python: functions, methods and classes; ``import`` and ``from … import`` statements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted, text

if TYPE_CHECKING:
    from tree_sitter import Node


class Python(Language):
    name = "python"
    grammar = ("tree_sitter_python", "language")
    ast_grep_name = "python"
    extensions: ClassVar[tuple[str, ...]] = (".py", ".pyi")
    definition_kinds: ClassVar[Mapping[str, DefSpec]] = {
        "function_definition": DefSpec("function"),
        "class_definition": DefSpec("class", sig=("type_parameters", "superclasses")),
    }
    comment_kinds = frozenset({"comment", "line_continuation"})
    atomic_kinds = frozenset({"string", "concatenated_string"})
    call_kinds = frozenset({"call"})
    import_kinds = frozenset({"import_statement", "import_from_statement", "future_import_statement"})

    def start_line(self, node: Node, start: int) -> int:
        parent = node.parent
        if parent is not None and parent.type == "decorated_definition":
            return parent.start_point[0] + 1
        return start

    def has_docstring(self, body: Node) -> bool:
        first = next((c for c in body.named_children if c.type != "comment"), None)
        if first is None or first.type != "expression_statement":
            return False
        kids = first.named_children
        return len(kids) == 1 and kids[0].type in self.atomic_kinds

    def imports(self, node: Node) -> list[Import]:
        line = node.start_point[0] + 1
        kind = node.type
        if kind == "future_import_statement":
            return [Import("__future__", (text(n),), None, line) for n in node.children_by_field_name("name")]
        if kind == "import_statement":
            out = []
            for n in node.children_by_field_name("name"):
                module, alias = _name_alias(n)
                out.append(Import(module, (), alias, line))
            return out
        # from [.]*module import names
        module, level = "", 0
        m = node.child_by_field_name("module_name")
        if m is not None:
            if m.type == "relative_import":
                for c in m.children:
                    if c.type == "import_prefix":
                        level = len(text(c).strip())
                    elif c.type == "dotted_name":
                        module = "".join(text(c).split())
            else:
                module = "".join(text(m).split())
        names = node.children_by_field_name("name")
        if not names:  # a star import has no name field
            return [Import(module, ("*",), None, line, level)]
        out = []
        for n in names:
            name, alias = _name_alias(n)
            out.append(Import(module, (name,), alias, line, level))
        return out

    def callee(self, node: Node) -> str | None:
        f = node.child_by_field_name("function")
        if f is None or f.type not in ("identifier", "attribute"):
            return None
        return dotted(text(f))


def _name_alias(n: Node) -> tuple[str, str | None]:
    if n.type == "aliased_import":
        name, alias = n.child_by_field_name("name"), n.child_by_field_name("alias")
        return ("".join(text(name).split()) if name else "", text(alias) if alias else None)
    return "".join(text(n).split()), None


LANGUAGE = Python()
