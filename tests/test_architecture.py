"""The dependency rule, read from the source with ``ast``: domain <- ports <- service <- {api, cli}; backends below.

- ``memstone.domain`` imports only the standard library and itself.
- ``memstone.ports`` imports only the standard library and ``memstone.domain``.
- ``memstone.backends`` never imports ``memstone.service``, ``memstone.cli`` or ``memstone.api``.
- Only composition roots import ``memstone.backends``: ``cli/main.py``, the ``open_service`` function of
  ``service/facade.py``, the ``preload`` function of ``agents/hook_server.py`` (it imports the default engine so
  that the hooks it forks start with it; it opens nothing) and ``api/**/app.py`` / ``api/**/server.py``.
  ``backends/`` itself and ``testing/`` are exempt.
  Any module may read a URL with ``memstone.backends.url`` (the one place URLs are parsed; it opens nothing).
- No import cycle inside ``memstone.domain``, ``memstone.ports`` and ``memstone.backends`` (counting imports inside
  functions too): the engine layers stay a tree an out-of-tree engine can build on.
- No module in ``memstone`` is over 600 lines.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import memstone

PACKAGE_DIR = Path(memstone.__file__).parent


@dataclass(frozen=True)
class Import:
    target: str  # absolute dotted name, e.g. "memstone.domain.errors" or "memstone.domain.errors.InvalidInput"
    line: int
    function: str | None  # the top-level function the import sits in, if any


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, *, is_package: bool = False) -> list[Import]:
    """Every import in ``source``, resolved to absolute names (``from x import y`` yields ``x`` and ``x.y``)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = function
            if function is None and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                inner = child.name
            if isinstance(child, ast.Import):
                found.extend(Import(alias.name, child.lineno, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base_parts = package.split(".")
                    if child.level > 1:
                        base_parts = base_parts[: -(child.level - 1)]
                    base = ".".join(base_parts + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                found.append(Import(base, child.lineno, function))
                found.extend(Import(f"{base}.{alias.name}", child.lineno, function) for alias in child.names)
            visit(child, inner)

    visit(ast.parse(source), None)
    return found


def is_under(target: str, package: str) -> bool:
    return target == package or target.startswith(package + ".")


def is_stdlib(target: str) -> bool:
    return target.split(".")[0] in sys.stdlib_module_names


def modules() -> list[tuple[str, Path, list[Import]]]:
    out = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        name = module_name(path, PACKAGE_DIR)
        out.append((name, path, imports_of(path.read_text("utf-8"), name, is_package=path.name == "__init__.py")))
    return out


MODULES = modules()


def rule_violations(module: str, path: Path, found: list[Import]) -> list[str]:
    """The dependency-rule breaks of one module, as readable lines."""
    rel = path.relative_to(PACKAGE_DIR).as_posix()
    bad: list[str] = []
    for imp in found:
        where = f"{rel}:{imp.line} imports {imp.target}"
        inner_layer = (
            "domain" if is_under(module, "memstone.domain") else "ports" if module == "memstone.ports" else None
        )
        if inner_layer and not (is_stdlib(imp.target) or is_under(imp.target, "memstone.domain")):
            bad.append(f"{where} ({inner_layer} imports only the stdlib and memstone.domain)")
        if is_under(module, "memstone.backends"):
            for upper in ("memstone.service", "memstone.cli", "memstone.api"):
                if is_under(imp.target, upper):
                    bad.append(f"{where} (backends must not depend on {upper})")
        elif (
            is_under(imp.target, "memstone.backends")
            and not any(is_under(imp.target, m) for m in OPEN_NOTHING)
            and not is_composition_root(module, rel, imp)
        ):
            bad.append(f"{where} (only composition roots may open a store)")
    return bad


URL_MODULE = "memstone.backends.url"  # parsing a URL opens nothing: every layer reads URLs there (issue 11)
OPEN_NOTHING = (URL_MODULE, "memstone.backends.peek")  # peek: a schema version read with the stdlib, read-only


def is_composition_root(module: str, rel: str, imp: Import) -> bool:
    if is_under(module, "memstone.testing") or module == "memstone.cli.main":
        return True
    if module == "memstone.service.facade":
        return imp.function == "open_service"
    if module == "memstone.agents.hook_server":  # loads the default engine so forked hooks start with it
        return imp.function == "preload"
    return rel.startswith("api/") and Path(rel).name in ("app.py", "server.py")


# ---------------------------------------------------------------------------------------------- the rule itself


def test_the_scan_sees_the_whole_package() -> None:
    names = {name for name, _, _ in MODULES}
    assert {"memstone", "memstone.ports", "memstone.service", "memstone.cli.main", "memstone.domain.model"} <= names
    assert any(is_under(n, "memstone.backends.") or n == "memstone.backends" for n in names)


@pytest.mark.parametrize(("module", "path", "found"), [pytest.param(*m, id=m[0]) for m in MODULES])
def test_the_dependency_rule_holds(module: str, path: Path, found: list[Import]) -> None:
    assert rule_violations(module, path, found) == []


ACYCLIC = ("memstone.domain", "memstone.ports", "memstone.backends")


def module_of(target: str, names: set[str]) -> str | None:
    """The module an import target names (``memstone.x.y.Name`` → ``memstone.x.y`` when that is a module)."""
    while target:
        if target in names:
            return target
        target = target.rpartition(".")[0]
    return None


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle reachable in ``graph`` (one representative path per strongly connected part)."""
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def engine_layer_graph() -> dict[str, set[str]]:
    names = {name for name, _, _ in MODULES}
    inside = {n for n in names if any(is_under(n, p) for p in ACYCLIC)}
    graph: dict[str, set[str]] = {}
    for name, _, found in MODULES:
        if name not in inside:
            continue
        for imp in found:
            target = module_of(imp.target, names)
            # A package's __init__ re-exporting its modules is not a cycle with them.
            if target in inside and target != name and not is_under(name, target):
                graph.setdefault(name, set()).add(target)
    return graph


def test_the_engine_layers_have_no_import_cycle() -> None:
    assert import_cycles(engine_layer_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------------------------------------- the checker


def check(module: str, rel: str, source: str) -> list[str]:
    path = PACKAGE_DIR / rel
    return rule_violations(module, path, imports_of(source, module, is_package=rel.endswith("__init__.py")))


CHECKER_CASES = [
    pytest.param("memstone.domain.x", "domain/x.py", "import json\nfrom .errors import InvalidInput", True,
                 id="domain-stdlib-and-relative-ok"),
    pytest.param("memstone.domain.x", "domain/x.py", "from ..ports import Capabilities", False,
                 id="domain-relative-escape"),
    pytest.param("memstone.domain.x", "domain/x.py", "import apsw", False, id="domain-third-party"),
    pytest.param("memstone.domain", "domain/__init__.py", "from .model import Revision", True,
                 id="domain-package-relative"),
    pytest.param("memstone.domain.x", "domain/x.py", "from memstone import service", False,
                 id="domain-from-package-import"),
    pytest.param("memstone.ports", "ports.py", "from .domain.model import Revision", True, id="ports-domain-ok"),
    pytest.param("memstone.ports", "ports.py", "from .service import MemoryService", False, id="ports-service"),
    pytest.param("memstone.backends.sqlite.store", "backends/sqlite/store.py", "from ...ports import WritePlan",
                 True, id="backend-ports-ok"),
    pytest.param("memstone.backends.sqlite.store", "backends/sqlite/store.py", "from ...service import utc_now",
                 False, id="backend-service"),
    pytest.param("memstone.backends.base", "backends/base.py", "import memstone.cli.errors", False,
                 id="backend-cli"),
    pytest.param("memstone.service.facade", "service/facade.py",
                 "def open_service():\n    from ..backends import open_store",
                 True, id="service-open_service-ok"),
    pytest.param("memstone.service.facade", "service/facade.py", "from ..backends import open_store", False,
                 id="service-module-level"),
    pytest.param("memstone.service.facade", "service/facade.py", "def search():\n    from ..backends import open_store",
                 False,
                 id="service-other-function"),
    pytest.param("memstone.cli.main", "cli/main.py", "from ..backends import open_store", True, id="cli-main-ok"),
    pytest.param("memstone.cli.errors", "cli/errors.py", "from ..backends import open_store", False,
                 id="cli-other-module"),
    pytest.param("memstone.api.http.app", "api/http/app.py", "from ...backends import open_store", True,
                 id="http-app-ok"),
    pytest.param("memstone.api.mcp.server", "api/mcp/server.py", "from memstone.backends import open_store", True,
                 id="mcp-server-ok"),
    pytest.param("memstone.api.http.routes", "api/http/routes.py", "from ... import backends", False,
                 id="http-routes"),
    pytest.param("memstone.embedding.x", "embedding/x.py", "from ..backends.sqlite import store", False,
                 id="embedding"),
    pytest.param("memstone", "__init__.py", "from .backends import open_store", False, id="package-root"),
    pytest.param("memstone.capture.settings", "capture/settings.py", "from ..backends.url import local_file", True,
                 id="url-reader-ok"),
    pytest.param("memstone.capture.settings", "capture/settings.py", "from ..backends import local_file", False,
                 id="url-through-the-package"),
    pytest.param("memstone.testing.conformance", "testing/conformance.py", "from ..backends import open_store",
                 True, id="testing-ok"),
]  # fmt: skip


@pytest.mark.parametrize(("module", "rel", "source", "allowed"), CHECKER_CASES)
def test_the_checker_tells_allowed_from_forbidden(module: str, rel: str, source: str, allowed: bool) -> None:
    assert (check(module, rel, source) == []) is allowed


# ---------------------------------------------------------------------------------------------- no import cycles


def import_graph() -> dict[str, set[str]]:
    """Module → the memstone modules it imports (module level, TYPE_CHECKING and inside functions alike).

    An import of an ancestor package is not an edge: Python always initializes the parents of a module first.
    """
    names = {n for n, _, _ in MODULES}
    graph: dict[str, set[str]] = {}
    for name, _, found in MODULES:
        deps: set[str] = set()
        for imp in found:
            target = imp.target
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("memstone") and not name.startswith(target + "."):
                deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others() -> None:
    assert cycles(import_graph()) == []


MAX_MODULE_LINES = 600


def module_lengths() -> dict[str, int]:
    return {
        path.relative_to(PACKAGE_DIR).as_posix(): len(path.read_text("utf-8").splitlines())
        for path in sorted(PACKAGE_DIR.rglob("*.py"))
    }


def test_no_module_in_src_is_over_600_lines() -> None:
    long = {rel: n for rel, n in module_lengths().items() if n > MAX_MODULE_LINES}
    assert long == {}, "split these along their seams (issue 11)"


# ---------------------------------------------------------------------------------------------- configuration
def memstone_env_reads(source: str) -> list[int]:
    """Lines that read a ``MEMSTONE_*`` variable: ``environ[…]``, ``environ.get(…)``, ``getenv(…)``, any
    ``<mapping>.get("MEMSTONE_…")`` / ``<mapping>["MEMSTONE_…"]``, or click's ``envvar="MEMSTONE_…"``."""

    def is_ours(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("MEMSTONE_")

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and is_ours(node.slice):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("get", "getenv", "pop", "setdefault") and node.args and is_ours(node.args[0]):
                lines.append(node.lineno)
            if any(k.arg == "envvar" and is_ours(k.value) for k in node.keywords):
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(("module", "path"), [pytest.param(m, p, id=m) for m, p, _ in MODULES])
def test_only_the_config_module_reads_memstone_variables(module: str, path: Path) -> None:
    if module == "memstone.config":
        return  # the one module that does (through its SETTINGS table)
    assert memstone_env_reads(path.read_text("utf-8")) == [], f"{module} reads a MEMSTONE_ variable itself"


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        pytest.param('os.environ.get("MEMSTONE_URL")', True, id="environ-get"),
        pytest.param('os.environ["MEMSTONE_URL"]', True, id="environ-subscript"),
        pytest.param('os.getenv("MEMSTONE_AUTHOR")', True, id="getenv"),
        pytest.param('env.get("MEMSTONE_SCOPE") or x', True, id="mapping-get"),
        pytest.param('click.option("--url", envvar="MEMSTONE_URL")', True, id="click-envvar"),
        pytest.param('"""Set MEMSTONE_URL to choose the store."""', False, id="docstring"),
        pytest.param('machine_env = {"MEMSTONE_URL": url}', False, id="writing-a-file"),
        pytest.param('os.environ.get("CLAUDE_PROJECT_DIR")', False, id="other-variable"),
    ],
)
def test_the_config_read_checker(source: str, reads: bool) -> None:
    assert bool(memstone_env_reads(source)) is reads
