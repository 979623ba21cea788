"""Python: functions, methods and classes; ``import`` and ``from … import`` statements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ._base import DefSpec, Import, Language, dotted

if TYPE_CHECKING:
    from ast_grep_py import SgNode


class Python(Language):
    name = "python"
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

    def start_line(self, node: SgNode, start: int) -> int:
        parent = node.parent()
        if parent is not None and parent.kind() == "decorated_definition":
            return parent.range().start.line + 1
        return start

    def has_docstring(self, body: SgNode) -> bool:
        first = next((c for c in body.named_children() if c.kind() != "comment"), None)
        if first is None or first.kind() != "expression_statement":
            return False
        kids = first.named_children()
        return len(kids) == 1 and kids[0].kind() in self.atomic_kinds

    def imports(self, node: SgNode) -> list[Import]:
        line = node.range().start.line + 1
        kind = node.kind()
        if kind == "future_import_statement":
            return [Import("__future__", (n.text(),), None, line) for n in node.field_children("name")]
        if kind == "import_statement":
            out = []
            for n in node.field_children("name"):
                module, alias = _name_alias(n)
                out.append(Import(module, (), alias, line))
            return out
        # from [.]*module import names
        module, level = "", 0
        m = node.field("module_name")
        if m is not None:
            if m.kind() == "relative_import":
                for c in m.children():
                    if c.kind() == "import_prefix":
                        level = len(c.text().strip())
                    elif c.kind() == "dotted_name":
                        module = "".join(c.text().split())
            else:
                module = "".join(m.text().split())
        names = node.field_children("name")
        if not names:  # a star import has no name field
            return [Import(module, ("*",), None, line, level)]
        out = []
        for n in names:
            name, alias = _name_alias(n)
            out.append(Import(module, (name,), alias, line, level))
        return out

    def callee(self, node: SgNode) -> str | None:
        f = node.field("function")
        if f is None or f.kind() not in ("identifier", "attribute"):
            return None
        return dotted(f.text())


def _name_alias(n: SgNode) -> tuple[str, str | None]:
    if n.kind() == "aliased_import":
        name, alias = n.field("name"), n.field("alias")
        return ("".join(name.text().split()) if name else "", alias.text() if alias else None)
    return "".join(n.text().split()), None


LANGUAGE = Python()
