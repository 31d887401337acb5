"""The library's layers: dependencies point one way (docs/architecture.md).

The import graph of ``descgen/`` is read from the source (function-local imports included) and
must have no cycle; no module imports another's private names; no module of the library imports
the package itself (``import descgen``: the package's ``__init__`` sits on top of every module);
``cli/`` imports no private name of the library.
"""

from __future__ import annotations

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(REPO, "descgen")
#: Subpackages of descgen/ (their modules are named ``ptx.scan``...).
SUBPACKAGES = ("core", "model", "words", "ptx", "backends", "rules", "tiles", "batch", "sanitizer", "pictures",
               "site")
MODULES = sorted([name[:-3] for name in os.listdir(LIB) if name.endswith(".py") and name != "__init__.py"] +
                 [f"{sub}.{name[:-3]}" for sub in SUBPACKAGES for name in os.listdir(os.path.join(LIB, sub))
                  if name.endswith(".py") and name != "__init__.py"])

#: The layers, bottom to top, as docs/architecture.md lists them: a module may import only modules
#: of its own layer or of layers below.
LAYERS = (
    ("core.errors", "core.transforms", "core.version", "core.types", "core.numbers", "core.errata", "core.workers",
     "rules.language", "core.memo"),
    ("model.table_types", "model.table_cache", "model.loader"),
    ("model.word", "model.decoded", "model.engine"),
    ("model.catalog", "model.report"),
    ("model.context",),
    ("model.facts", "model.wgmma_facts", "rules.tables"),
    ("rules.checks",),
    ("words.idesc", "words.smem", "words.zcm", "words.taddr", "words.runtime", "words.wgmma_smem"),
    ("tiles.atoms", "tiles.canonical", "tiles.descriptor", "tiles.addresses", "words.instruction", "words.identify",
     "words.port", "ptx.lexer", "ptx.knownbits", "ptx.ranges", "ptx.values",
     "ptx.statements", "ptx.cfg", "ptx.transfer", "ptx.solver", "ptx.dataflow", "ptx.slicer", "ptx.skipping",
     "ptx.qualifiers"),
    ("ptx.results", "ptx.syntax_rules", "ptx.instruction_checks", "ptx.scan", "words.compare", "backends.emitters",
     "codes", "pictures.svg", "pictures.smem_layout", "pictures.idesc_shape"),
    ("batch.schema", "batch.handlers", "batch.codec", "batch.cache", "batch.stream",
     "backends.descriptor_functions", "backends.cpp_header", "backends.cpp_rules", "backends.ptx_code",
     "backends.ptx_rules", "ptx.files"),
    ("sanitizer.hoist", "sanitizer.shared_checks", "sanitizer.stage_table", "sanitizer.instrument", "sanitizer.report"),
    ("triton", "cute", "examples", "site.build"),
    ("__main__",),
)


def _known(dotted: str) -> str:
    """The module a dotted name inside descgen imports: the longest known prefix (``ptx.scan``,
    ``engine``), ``__init__`` for the package, else its first part (``cli``, ``ptx``)."""
    parts = dotted.split(".") if dotted else []
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in MODULES:
            return name
    return parts[0] if parts else "__init__"


def _imports(path: str, package: str, relative: bool = True, pkg: str = "") -> list[tuple[str, tuple[str, ...], int]]:
    """(module imported, names imported from it, line) for every import of a descgen module;
    ``pkg`` is the file's subpackage (``"ptx"``, ``""`` for descgen itself); ``relative=False``
    leaves out ``from .x import`` (in cli/: its own modules)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = tuple(a.name for a in node.names)
            if node.level >= 1:
                if not relative:
                    continue
                base = pkg.split(".") if pkg else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base + ([node.module] if node.module else []))
                if node.module:
                    out.append((_known(prefix), names, node.lineno))
                else:  # from . import x
                    for n in names:
                        full = f"{prefix}.{n}" if prefix else n
                        out.append((full, (), node.lineno) if full in MODULES else (_known(prefix), (n,), node.lineno))
            elif node.module and (node.module == package or node.module.startswith(package + ".")):
                out.append((_known(node.module[len(package) + 1:]), names, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == package or a.name.startswith(package + "."):
                    out.append((_known(a.name[len(package) + 1:]), (), node.lineno))
    return out


def _path(name: str) -> str:
    return os.path.join(LIB, *name.split(".")) + ".py"


def _pkg(name: str) -> str:
    return name.rpartition(".")[0]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        graph[name] = {m for m, _, _ in _imports(_path(name), "descgen", pkg=_pkg(name))
                       if m in MODULES or m == "__init__"} - {"tables", "cli"}
    return graph


def test_every_module_has_a_layer():
    placed = {m for layer in LAYERS for m in layer}
    assert sorted(placed) == MODULES, "add the module to LAYERS here and to docs/architecture.md"


def test_no_module_imports_the_package_itself():
    for name, deps in _graph().items():
        assert "__init__" not in deps, f"descgen/{name}.py imports the package descgen: import the module it needs"


def test_imports_point_down_the_layers():
    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    for name, deps in _graph().items():
        up = sorted(d for d in deps if d in level and level[d] > level[name])
        assert not up, f"descgen/{name}.py (layer {level[name]}) imports {up} from a layer above it"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_import_graph_has_no_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def _package(module: str) -> str:
    return module.split(".")[0]


def test_package_graph_has_no_cycle():
    """The subpackages (core, model, rules, words, ptx, backends...) point one way too: the module
    graph collapsed to packages has no cycle, so a package can be read from the bottom up."""
    packages: dict[str, set[str]] = {}
    for name, deps in _graph().items():
        packages.setdefault(_package(name), set()).update(_package(d) for d in deps if _package(d) != _package(name))
    cycle = _cycle(packages)
    assert cycle is None, "package cycle: " + " -> ".join(cycle or ())
    assert {"core", "model", "rules", "words", "ptx", "backends"} <= set(packages)


CLI = os.path.join(REPO, "cli")


def _cli_graph(folder: str = CLI) -> dict[str, set[str]]:
    """cli/'s modules and which of them each imports (``from .x``, ``from . import x``,
    ``descgen.cli.x``; function-local imports included). importlib's by-name loading of the lazy
    commands (app.LAZY_COMMANDS) is not an import edge: app loads them, they never load app."""
    modules = {f[:-3] for f in os.listdir(folder) if f.endswith(".py")}
    graph: dict[str, set[str]] = {}
    for name in modules:
        with open(os.path.join(folder, name + ".py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        deps: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 1:
                rest = node.module or ""
            elif node.module and (node.module == "descgen.cli" or node.module.startswith("descgen.cli.")):
                rest = node.module[len("descgen.cli"):].lstrip(".")
            else:
                continue
            deps |= {rest.split(".")[0]} if rest else {a.name for a in node.names} & modules or {"__init__"}
        graph[name] = (deps & modules) - {name}
    return graph


def test_cli_import_graph_has_no_cycle():
    """The command line's modules point one way too: shared options below the application,
    rendering below the output policy, nothing importing the click application back."""
    graph = _cli_graph()
    assert {"app", "options", "output", "render", "decoder", "encoders", "layout"} <= set(graph)
    cycle = _cycle(graph)
    assert cycle is None, "import cycle in cli/: " + " -> ".join(cycle or ())
    assert not [m for m, deps in graph.items() if "app" in deps and m != "__init__"], \
        "only the entry points import the click application (cli/app.py); share options through cli/options.py"


def test_the_cli_cycle_checker_sees_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from descgen.cli.a import y\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    graph = _cli_graph(str(tmp_path))
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}} and _cycle(graph) == ["a", "b", "a"]


@pytest.mark.parametrize("folder,package", [("descgen", "descgen"),
                                            *((f"descgen/{sub}", "descgen") for sub in SUBPACKAGES),
                                            ("cli", "descgen")])
def test_no_private_name_crosses_a_module(folder, package):
    base = os.path.join(REPO, folder)
    pkg = folder.partition("/")[2].replace("/", ".")
    for file in sorted(os.listdir(base)):
        if not file.endswith(".py"):
            continue
        for module, names, line in _imports(os.path.join(base, file), package, pkg=pkg):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{folder}/{file}:{line} imports private {private} from descgen.{module}"


def test_the_checker_sees_a_cycle_and_a_private_import(tmp_path):
    """The graph reader itself: a planted cycle and a planted private import are seen."""
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from .b import _hidden\n")
    assert _imports(str(a), "descgen") == [("b", ("_hidden",), 2)]
    b = tmp_path / "b.py"
    b.write_text("import descgen.a\nfrom descgen import engine\n")
    assert [m for m, _, _ in _imports(str(b), "descgen")] == ["a", "__init__"]
