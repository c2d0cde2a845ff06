"""The layout holds: imports point one way, no import circles, small modules and functions.

Reads the source of ``src/cartograph`` with :mod:`ast` (nothing is imported). An import inside
``if TYPE_CHECKING:`` is exempt (it never runs); every other import counts, lazy ones inside
functions included, because a lazy import is still a dependency. The layers are those of
docs/architecture.md.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "cartograph"

# Highest first. A package may import its own layer's packages (when that makes no circle) and
# any layer below it, never one above.
LAYERS: list[set[str]] = [
    {"cli", "__main__"},
    {"console"},
    {"proxy"},
    {"storage"},
    {"gateway", "index", "rift", "evaluate", "stubgen", "access"},
    {"generate"},
    {"cards"},
    {"trust"},
    {"upstream", "config"},
    {"transport"},
    {
        "workspace",
        "workspace_settings",
        "canonical",
        "clock",
        "files",
        "heap",
        "lazy",
        "errors",
        "envflags",
        "metrics",
        "tracing",
    },
]
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Known debts, each listed with its reason in docs/architecture.md ("Exceptions"); the tests
# fail on any new one, and on an entry here that no longer applies (so the list only shrinks).
LONG_FUNCTION_EXCEPTIONS: set[str] = set()
LONG_MODULE_EXCEPTIONS: set[str] = set()
BACK_EDGE_EXCEPTIONS: set[tuple[str, str]] = set()
PACKAGE_CIRCLE_EXCEPTIONS: list[list[str]] = []
MODULE_CIRCLE_EXCEPTIONS: list[list[str]] = []


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports_of(path: Path) -> list[Import]:
    module = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(module, a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            found.append(Import(module, target, node.lineno))
            # ``from cartograph.x import y`` may name a submodule y
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if _module_path(sub) is not None:
                    found.append(Import(module, sub, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [i for i in found if i.target.startswith("cartograph.") and i.target != module]


def _module_path(dotted: str) -> Path | None:
    rel = Path(*dotted.split("."))
    for candidate in (SRC / rel.with_suffix(".py"), SRC / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_of(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def all_imports() -> list[Import]:
    out: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "__init__.py":  # the lazy public facade re-exports every layer
            continue
        out.extend(_imports_of(path))
    return out


def test_every_package_has_a_layer() -> None:
    packages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()}
    packages = {p for p in packages if not p.startswith(("_", ".")) and p != "py"}
    unplaced = sorted(packages - set(RANK))
    assert not unplaced, f"add these packages to LAYERS (and docs/architecture.md): {unplaced}"


def test_imports_point_down_the_layers() -> None:
    back_edges = []
    for imp in all_imports():
        src, dst = _package_of(imp.source), _package_of(imp.target)
        if (imp.source, imp.target) in BACK_EDGE_EXCEPTIONS:
            continue
        if src in RANK and dst in RANK and RANK[dst] < RANK[src]:
            back_edges.append(f"{imp.source}:{imp.line} imports {imp.target}")
    assert not back_edges, "imports that point up the layers:\n" + "\n".join(back_edges)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    result.append(sorted(component))
    return result


def test_no_circle_between_packages() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in all_imports():
        src, dst = _package_of(imp.source), _package_of(imp.target)
        if src != dst:
            edges[src].add(dst)
    circles = [c for c in _cycles(edges) if c not in PACKAGE_CIRCLE_EXCEPTIONS]
    assert not circles, f"package import circles: {circles}"


def test_no_circle_between_modules() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in all_imports():
        target = imp.target
        while _module_path(target) is None and "." in target:
            target = target.rsplit(".", 1)[0]
        # a package's __init__ importing its own submodules is how packages re-export
        if not target.startswith(imp.source + "."):
            edges[imp.source].add(target)
    circles = [c for c in _cycles(edges) if c not in MODULE_CIRCLE_EXCEPTIONS]
    assert not circles, f"module import circles: {circles}"


def test_only_storage_imports_a_storage_backend() -> None:
    offenders = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in all_imports()
        if i.target.startswith("cartograph.storage.") and _package_of(i.source) != "storage"
    ]
    assert not offenders, "backends are chosen by storage.open_store only:\n" + "\n".join(offenders)


def _long_functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append((f"{module_name(path)}.{node.name}", length))
    return out


@pytest.mark.parametrize("limit", [MAX_FUNCTION_LINES])
def test_functions_stay_short(limit: int) -> None:
    long = [
        f"{name} ({length} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, length in _long_functions(path)
        if name not in LONG_FUNCTION_EXCEPTIONS
    ]
    assert not long, f"functions over {limit} lines:\n" + "\n".join(long)


def test_modules_stay_small() -> None:
    big = [
        f"{module_name(p)} ({n} lines)"
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
        and module_name(p) not in LONG_MODULE_EXCEPTIONS
    ]
    assert not big, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(big)


def test_the_exception_lists_only_name_what_still_applies() -> None:
    imports = {(i.source, i.target) for i in all_imports()}
    stale_edges = sorted(BACK_EDGE_EXCEPTIONS - imports)
    long_now = {name for p in PACKAGE.rglob("*.py") for name, _ in _long_functions(p)}
    stale_functions = sorted(LONG_FUNCTION_EXCEPTIONS - long_now)
    big_now = {
        module_name(p)
        for p in PACKAGE.rglob("*.py")
        if len(p.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES
    }
    stale_modules = sorted(LONG_MODULE_EXCEPTIONS - big_now)
    assert not (stale_edges or stale_functions or stale_modules), (
        "remove from the exception lists (and docs/architecture.md): "
        f"{stale_edges + stale_functions + stale_modules}"
    )
