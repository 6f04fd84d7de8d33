"""The package layout shows the pipeline: each stage imports only the stages below it,
and no module imports, however indirectly, a module that imports it (top-level and
function-level imports alike)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "irr_audit"

# The stages, lowest first: a module may import its own stage and the stages before it.
STAGES = (
    ("_version", "_threads", "_lazy", "_readonly", "errors", "io"),
    ("rules",),
    ("metrics",),
    ("join",),
    ("warehouse",),  # long tables counted by DuckDB or Spark with join's classification of codes
    ("report",),
    # importers beside sample: both make the coding sheets join reads, from io and rules below them
    ("sample", "importers"),
    ("bundle",),
    ("api",),  # the public Python API (docs/api.md): the entry points every client calls
    ("cli",),
    ("__main__", "irr_audit"),  # the package itself: what `import irr_audit` gives a library user
)


def module_name(path: Path) -> str:
    parts = ["irr_audit", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def imports_of(path: Path) -> list[tuple[str, int]]:
    """The irr_audit modules ``path`` imports anywhere (at its top or in a function), with the line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.startswith("irr_audit")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("irr_audit"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.append((submodule if is_module(submodule) else node.module, node.lineno))
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: the line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        edges = graph.setdefault(module_name(path), {})
        for target, line in imports_of(path):
            edges.setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.get(module, {}):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1 or module in graph.get(module, {}):
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def stage(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "irr_audit"
    for rank, names in enumerate(STAGES):
        if top in names:
            return rank
    raise AssertionError(f"{module} is in no stage of the layout: add its package to STAGES")


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_a_stage_imports_only_the_stages_before_it() -> None:
    upward = [
        f"{module} (stage {stage(module)}) imports {target} (stage {stage(target)}) on line {line}"
        for module, edges in import_graph().items()
        for target, line in edges.items()
        if stage(target) > stage(module)
    ]
    assert upward == []


def test_the_checks_find_a_cycle_and_an_upward_import() -> None:
    graph = {"irr_audit.io.a": {"irr_audit.rules.b": 1}, "irr_audit.rules.b": {"irr_audit.io.a": 1}}
    assert cycles(graph) == [["irr_audit.io.a", "irr_audit.rules.b"]]
    assert stage("irr_audit.rules.b") > stage("irr_audit.io.a")
