"""tables/ is pure (docs/design.md "Layout"): no I/O, clock, float or global random; of
jackpot/ only its money."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import ROOT

SOURCES = sorted((ROOT / "tables").glob("*.py"))
ALLOWED = {"__future__", "collections", "collections.abc", "dataclasses", "enum", "itertools",
           "typing", "jackpot.money"}  # fmt: skip
FORBIDDEN_NAMES = {"float", "open", "print", "input"}


def imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.name)
def test_tables_imports_only_the_standard_pure_modules_and_money(path: Path) -> None:
    tree = ast.parse(path.read_text())
    outside = {name for name in imports(tree) if not name.startswith("tables")} - ALLOWED
    assert outside == set(), f"{path.name} imports {outside}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.name)
def test_tables_uses_no_float_nor_io(path: Path) -> None:
    tree = ast.parse(path.read_text())
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    floats = [node for node in ast.walk(tree) if isinstance(node, ast.Constant)
              and isinstance(node.value, float)]  # fmt: skip
    assert names & FORBIDDEN_NAMES == set()
    assert floats == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.name)
def test_every_module_starts_with_a_one_line_docstring(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    if path.name == "__init__.py" and docstring is None:
        return
    assert docstring is not None and "\n" not in docstring
