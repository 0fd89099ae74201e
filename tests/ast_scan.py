"""Reading the service's own source for the codes it can produce (the docs tests)."""

from __future__ import annotations

import ast
from collections.abc import Callable


def constants(node: ast.AST | None) -> list[str]:
    """The string constants an expression can be: ``"x"`` or ``"x" if c else "y"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return constants(node.body) + constants(node.orelse)
    return []


def call_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def local_values(fn: ast.AST) -> Callable[[ast.AST | None], list[str]]:
    """What an expression in ``fn`` can be: its string constants, or, for a local name, the
    constants assigned to that name anywhere in ``fn``."""
    assigned: dict[str, list[str]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            for target in n.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).extend(constants(n.value))

    def values(node: ast.AST | None) -> list[str]:
        if isinstance(node, ast.Name):
            return assigned.get(node.id, [])
        return constants(node)

    return values
