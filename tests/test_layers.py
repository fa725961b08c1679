"""Imports run one way: a static check of skdpx's import graph.

Every module under ``skdpx/`` is parsed with :mod:`ast` (nothing is imported,
no subprocess is spawned) and its imports, at module level and inside
functions alike, are resolved to files. Importing ``skdpx.a._b`` also runs
``skdpx/a/__init__.py`` when the importer is outside ``skdpx.a``, so that
edge is counted too (it is how ``utils`` -> ``privacy`` -> ``utils`` closed a
circle through ``utils/__init__.py``). The package of a module is its first
component under ``skdpx`` (``skdpx.utils._dask`` -> ``utils``; a top-level
module is its own package).

Three rules, checked below:

* no circle among files, and none among packages;
* no import of another package's private module (a name starting with ``_``
  below that package) or of another package's private name, except from the
  modules in ``PUBLIC_TO_SKDPX``: shared internals that any skdpx package may
  use;
* the layers, lowest first: a package may import only from its own layer or
  a lower one.

This replaces a test that spawned one interpreter per subpackage to import it
first (the circles it guarded against are now found without running them).
Run ``python tests/test_layers.py [checkout]`` to print the graph's counts.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skdpx"

# lowest first; a package may import its own layer and the layers below it
LAYERS = [
    # foundations: import nothing of skdpx but each other
    {"_sklearn_compat", "results", "preprocessing", "_explanation"},
    # the toolbox: tables, bounds, Dask, black boxes, memory
    {"utils"},
    # the privacy core; ``exceptions`` re-exports its errors (they must be defined
    # there: the one guarded import of diffprivlib is privacy/_exceptions.py)
    {"privacy", "exceptions"},
    # the estimator base (abstract hooks, capabilities, shared mixins) and the
    # rules a person declares for counterfactuals and recourse (shared by both)
    {"base", "_rules"},
    # the estimators and the bundled data; ``linear`` is the deprecated shim of
    # ``locally_linear`` (it imports it: same layer)
    {"locally_linear", "linear", "explain", "counterfactual", "recourse", "datasets"},
    # what runs estimators: searches, metrics, attacks
    {"model_selection", "metrics", "attacks", "inspection"},
    # the top: ``skdpx/__init__.py`` and the demo
    {"skdpx", "__main__"},
]

# private modules that are an internal API for every skdpx package (a name
# here covers the modules below it), and why
PUBLIC_TO_SKDPX = {
    "skdpx._sklearn_compat": "scikit-learn's private and recent names, in one guarded place",
    "skdpx.utils": "the shared toolbox (as sklearn.utils._*): tables, bounds, Dask, black boxes",
    "skdpx.results._base": "the result base and its JSON/plot helpers, for every result object",
    "skdpx.preprocessing._schema": "the public schema's table helpers, for utils and privacy",
    "skdpx.privacy._selection": "private selection (run counts, score releases) for the searches",
    "skdpx.privacy._kmeans": "DP k-means (noisy Lloyd tables), shared by PrivRecourse and "
                             "dp_background / DPShapExplainer",
    "skdpx.privacy._audit": "the audit's epsilon bound from samples, for the attacks' results",
    "skdpx.privacy._estimator": "a fit's row-count plumbing (the count a caller gave, the rows' "
                                "number read only for FitCount.release), for the estimator base",
    "skdpx.privacy._targets": "the public label set of an explainer, for the estimators",
    "skdpx.explain._local_loss": "the local loss, shared by DPLime, its metric and its DP scorer",
    "skdpx.explain._outputs": "a black box's outputs as labels, shared by DPLime and its scorer",
    "skdpx._rules": "the declared rules (actionability, links, feasibility, costs), shared by "
                    "the estimator base, DPC and PrivRecourse",
}


def _modules(root=PACKAGE):
    """``{dotted name: path}`` of every module of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_package(name, modules):
    return modules[name].name == "__init__.py"


def _nodes(tree, at_import):
    """Every node of ``tree``; with ``at_import``, only those run when the
    module is imported (not inside a function)."""
    if not at_import:
        yield from ast.walk(tree)
        return
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def _imports(name, path, modules, at_import=False):
    """``[(target module, imported name or None, line)]`` of one module."""
    base = name if _is_package(name, modules) else name.rpartition(".")[0]
    found = []
    for node in _nodes(ast.parse(path.read_text(), str(path)), at_import):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "skdpx" or alias.name.startswith("skdpx."):
                    target = alias.name
                    while target not in modules:
                        target = target.rpartition(".")[0]
                    found.append((target, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                source = ".".join(anchor + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not (source == "skdpx" or source.startswith("skdpx.")):
                continue
            assert source in modules, f"{path}:{node.lineno}: no module {source}"
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in modules:
                    found.append((sub, None, node.lineno))
                else:
                    found.append((source, alias.name, node.lineno))
    return found


def package_of(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "skdpx"


def _ancestors(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def import_graph(root=PACKAGE, at_import=False):
    """The file graph ``{module: {module: [(name, line), ...]}}``.

    With ``at_import``, only the imports run when a module is imported (not
    those inside functions).

    An import of ``skdpx.a.b._c`` from outside ``skdpx.a`` also runs
    ``skdpx/a/__init__.py`` and ``skdpx/a/b/__init__.py``: edges to them are
    added (with name ``"<package init>"``). The root ``skdpx/__init__.py`` is
    always already importing and is not added.
    """
    modules = _modules(root)
    graph = {name: {} for name in modules}
    for name, path in modules.items():
        mine = set(_ancestors(name)) | ({name} if _is_package(name, modules) else set())
        for target, imported, line in _imports(name, path, modules, at_import):
            if target == name:
                continue
            graph[name].setdefault(target, []).append((imported, line))
            for up in _ancestors(target):
                if up not in mine and up != name:
                    graph[name].setdefault(up, []).append(("<package init>", line))
    return graph


def package_graph(graph):
    out = {}
    for source, targets in graph.items():
        out.setdefault(package_of(source), set())
        for target in targets:
            if package_of(target) != package_of(source):
                out[package_of(source)].add(package_of(target))
    return out


def cycles(graph):
    """The strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _is_private_module(name):
    return any(part.startswith("_") and part != "__init__" for part in name.split(".")[2:])


def _is_public_to_skdpx(name, public):
    return any(name == p or name.startswith(p + ".") for p in public)


def private_imports(graph, public=PUBLIC_TO_SKDPX):
    """``[(importer, target, name)]`` crossing into another package's privates."""
    out = []
    for source, targets in graph.items():
        for target, uses in targets.items():
            if package_of(target) == package_of(source) or _is_public_to_skdpx(target, public):
                continue
            for imported, _ in uses:
                if imported == "<package init>":
                    continue
                if _is_private_module(target):
                    out.append((source, target, imported))
                elif imported is not None and imported.startswith("_"):
                    out.append((source, target, imported))
    return sorted(set(out), key=str)


def layer_of(package):
    for i, layer in enumerate(LAYERS):
        if package in layer:
            return i
    raise KeyError(f"package {package!r} is in no layer: add it to LAYERS")


def layer_violations(graph):
    out = []
    for source, targets in graph.items():
        for target in targets:
            if layer_of(package_of(target)) > layer_of(package_of(source)):
                out.append((source, target))
    return sorted(out)


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_import_resolves_and_every_package_has_a_layer(graph):
    assert len(graph) > 50 and "skdpx.privacy._ledger" in graph
    assert any(graph.values())
    for name in graph:
        layer_of(package_of(name))


def test_no_circle_among_files(graph):
    assert cycles(graph) == []


def test_no_circle_among_packages(graph):
    assert cycles(package_graph(graph)) == []


def test_no_import_of_another_packages_private_module(graph):
    assert private_imports(graph) == []


def test_layers_run_one_way(graph):
    assert layer_violations(graph) == []


def test_importing_skdpx_registers_the_outer_search_checks():
    # the estimator base looks up the checks of an outer scikit-learn search that
    # skdpx.model_selection._outer registers (skdpx.utils._outer_search): they must
    # be registered by ``import skdpx`` itself, before any estimator exists
    graph = import_graph(at_import=True)
    seen, todo = set(), ["skdpx"]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    assert "skdpx.model_selection._outer" in seen
    outer = ast.parse((PACKAGE / "model_selection" / "_outer.py").read_text())
    calls = [node.value.func.id for node in outer.body  # module level: run at import
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
             and isinstance(node.value.func, ast.Name)]
    assert calls == ["register_outer_search_checks"]


def test_the_checks_see_a_circle_a_private_import_and_a_layer_inversion(tmp_path):
    # the checks above are only as good as the graph: build a toy package
    # with one of each defect and watch every check find it
    pkg = tmp_path / "skdpx"
    for sub in ("utils", "privacy"):
        (pkg / sub).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils" / "__init__.py").write_text("from ..privacy import _secret, f\n")
    (pkg / "utils" / "_a.py").write_text("from ._b import g\n")
    (pkg / "utils" / "_b.py").write_text("def g():\n    from . import _a\n")
    (pkg / "privacy" / "__init__.py").write_text("from ._c import f\n")
    (pkg / "privacy" / "_c.py").write_text("from skdpx.utils._a import g\ndef f(): pass\n")
    toy = import_graph(pkg)
    assert ["skdpx.utils._a", "skdpx.utils._b"] in cycles(toy)
    assert cycles(package_graph(toy)) == [["privacy", "utils"]]
    assert ("skdpx.privacy._c", "skdpx.utils._a", "g") in private_imports(toy, public=())
    assert ("skdpx.privacy._c", "skdpx.utils._a", "g") not in private_imports(toy)  # utils: shared
    assert ("skdpx.utils", "skdpx.privacy", "_secret") in private_imports(toy)
    assert ("skdpx.utils", "skdpx.privacy") in layer_violations(toy)


def _report(graph):
    files = cycles(graph)
    packages = cycles(package_graph(graph))
    private = private_imports(graph)
    strict = private_imports(graph, public={"skdpx._sklearn_compat"})
    layers = layer_violations(graph)
    print(f"modules: {len(graph)}, import edges: {sum(map(len, graph.values()))}")
    print(f"file cycles: {len(files)} ({sum(map(len, files))} files)")
    for c in files:
        print("   ", " ".join(c))
    print(f"package cycles: {len(packages)} ({sum(map(len, packages))} packages)")
    for c in packages:
        print("   ", " ".join(c))
    print(f"private cross-package imports: {len(private)} "
          f"(from {len({(s, t) for s, t, _ in private})} module pairs); "
          f"{len(strict)} counting the PUBLIC_TO_SKDPX modules too "
          f"({len({(s, t) for s, t, _ in strict})} module pairs)")
    for s, t, n in private:
        print(f"    {s} -> {t}{'' if n is None else ' : ' + n}")
    print(f"layer violations: {len(layers)}")
    for s, t in layers:
        print(f"    {s} -> {t}")


if __name__ == "__main__":
    import sys

    _report(import_graph(Path(sys.argv[1]) / "skdpx" if len(sys.argv) > 1 else PACKAGE))


# the engine layer (issue 42): the only modules that import an engine or its backend
ENGINE_MODULES = {"skdpx.utils._engine", "skdpx.utils._dask", "skdpx.utils._spark",
                  "skdpx.utils._tables"}
ENGINES = ("dask", "distributed", "pyspark", "skdpx.utils._dask", "skdpx.utils._spark")


def engine_imports(root=PACKAGE):
    """``(module, imported, line)`` of each import of an engine outside the engine layer."""
    out = []
    for name, path in _modules(root).items():
        if name in ENGINE_MODULES:
            continue
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolved against the importing package
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                if any(t == e or t.startswith(e + ".") for e in ENGINES):
                    out.append((name, t, node.lineno))
    return out


def test_no_estimator_imports_an_engine():
    # estimators, the privacy core and the toolbox reach Dask and Spark only through
    # skdpx.utils._engine (and the validation of the engines' tables)
    assert engine_imports() == []


def test_the_engine_check_sees_an_engine_import(tmp_path):
    pkg = tmp_path / "skdpx"
    (pkg / "explain").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "explain" / "__init__.py").write_text("")
    (pkg / "explain" / "_x.py").write_text(
        "def f():\n    from ..utils._spark import SparkTable\n    import dask.array\n")
    found = {t for _, t, _ in engine_imports(pkg)}
    assert {"skdpx.utils._spark", "dask.array"} <= found
