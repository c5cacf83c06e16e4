"""The size rules of issue 28: no module of `xlagui/` over 500 lines, no function over 60.

A module's size is its number of lines. A function's is counted from its `def` line (its
decorators not included) to its last line, docstring and nested functions included; a method
is a function, a nested function is counted on its own too. Tests, benchmarks and scripts are
not held to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xlagui"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def long_modules() -> list[str]:
    """Each module over the limit, as "path: N lines"."""
    out = []
    for path in modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            out.append(f"{rel(path)}: {lines} lines")
    return out


def function_sizes(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, lines from `def` to the end) of every function in
    `source`, methods and nested functions included."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                found.append((name, child.lineno, end - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def long_functions() -> list[str]:
    """Each function over the limit, as "path:line name: N lines"."""
    out = []
    for path in modules():
        for name, line, size in function_sizes(path.read_text(encoding="utf-8")):
            if size > MAX_FUNCTION_LINES:
                out.append(f"{rel(path)}:{line} {name}: {size} lines")
    return out


def test_function_sizes_are_counted_from_def_to_the_last_line() -> None:
    source = (
        "import functools\n"
        "@functools.cache\n"
        "def f():\n"
        '    """doc"""\n'
        "    def inner():\n"
        "        return 1\n"
        "    return inner\n"
        "class C:\n"
        "    def m(self):\n"
        "        pass\n"
    )
    assert function_sizes(source) == [("f", 3, 5), ("f.inner", 5, 2), ("C.m", 9, 2)]


def test_no_module_is_over_500_lines() -> None:
    assert long_modules() == []


def test_no_function_is_over_60_lines() -> None:
    assert long_functions() == []
