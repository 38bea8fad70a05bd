"""No import cycle inside the package: a cycle means a job has two homes (docs/architecture.md).

Every `import` statement counts, also those inside functions (imported late to keep `--help`
fast) and under `if TYPE_CHECKING:`, so a cycle cannot hide in either.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agent_invariants"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that the file at `path` imports (a name imported from a package
    counts as its `__init__`, a submodule imported from it as that submodule)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return found & modules


def _import_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}


def _cycle_from(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A path of imports from `start` back to `start`, if there is one."""
    stack, seen = [(start, [start])], set()
    while stack:
        module, path = stack.pop()
        for imported in sorted(graph[module]):
            if imported == start:
                return path + [start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, path + [imported]))
    return None


def test_the_graph_sees_imports_at_the_top_inside_functions_and_for_type_checking_only():
    graph = _import_graph()
    assert "agent_invariants.rules.base" in graph["agent_invariants.engine"]        # at the top
    assert "agent_invariants.batch" in graph["agent_invariants.cli"]                # inside a command
    assert "agent_invariants.contract" in graph["agent_invariants.mcp_server"]      # type checking only
    assert "agent_invariants" in graph["agent_invariants.cli"]                      # __version__


def test_no_module_of_the_package_imports_itself_back():
    graph = _import_graph()
    cycles = [" -> ".join(cycle) for module in sorted(graph) if (cycle := _cycle_from(module, graph))]
    assert cycles == []
