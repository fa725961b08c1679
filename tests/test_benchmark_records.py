"""The benchmarks' saved results: each says how it was made, and the docs render each.

Every script in ``benchmarks/`` saves through ``benchmarks/_run_record.py``
(the commit, date, versions, machine and command of its run); every file
under ``benchmarks/results/`` holds such a record (a file written before the
module records what is known and ``committed_at``, the commit that saved it,
where the commit measured is unknown); every file is rendered by a doc page;
and every ``bench-table`` and ``:bench:`` value of the docs resolves against
the saved results. Fast: no benchmark runs and no Sphinx build.
"""

import ast
import importlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
DOC = ROOT / "doc"
RUN_KEYS = {"date", "commit", "versions", "machine", "command"}


@pytest.fixture(scope="module")
def benchtables():
    """The docs' extension and its renderers, importable as the docs' conf.py makes them."""
    pytest.importorskip("sphinx")
    pytest.importorskip("pandas")
    sys.path[:0] = [str(DOC / "_ext"), str(DOC)]
    try:
        yield importlib.import_module("benchtables")
    finally:
        for path in (str(DOC / "_ext"), str(DOC)):
            sys.path.remove(path)


def _scripts():
    return sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def _results():
    return sorted(p for p in RESULTS.iterdir() if p.is_file())


def _docs():
    return {p: p.read_text() for p in DOC.rglob("*.rst") if "_build" not in p.parts
            and "generated" not in p.parts and "auto_examples" not in p.parts}


def records(results):
    """The run records of a saved result: its ``run``; a file of labelled or partial runs
    (check_defaults.json, model_selection.json, valid_records.json) has one per part; a
    file of the first _run_record version keeps it at the top level (fixed_costs*.json)."""
    if isinstance(results.get("run"), dict):
        return [results["run"]]
    if "commit" in results and "date" in results:
        return [results]
    found = []

    def walk(node):
        for value in node.values():
            if isinstance(value, dict):
                if isinstance(value.get("run"), dict):
                    found.append(value["run"])
                else:
                    walk(value)
    walk(results)
    return found


@pytest.mark.parametrize("script", _scripts(), ids=lambda p: p.name)
def test_every_benchmark_saves_through_run_record(script):
    tree = ast.parse(script.read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert imported & {"_run_record", "_dpc_bench"}, f"{script.name} does not use _run_record"
    # results are written by _run_record.save, never by json.dump of the script's own
    # (row_count_cost.py's child snippet writes a temporary file, not a result)
    dumps = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "dump"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"]
    assert not dumps, f"{script.name}: json.dump at lines {dumps}: use _run_record.save"


def test_dpc_bench_saves_through_run_record():
    text = (BENCH / "_dpc_bench.py").read_text()
    assert "_run_record.run_info(" in text and "_run_record.save(" in text


@pytest.mark.parametrize("path", [p for p in _results() if p.suffix == ".json"],
                         ids=lambda p: p.name)
def test_every_result_records_its_run(path):
    found = records(json.loads(path.read_text()))
    assert found, f"{path.name} has no run record"
    for run in found:
        assert RUN_KEYS <= run.keys(), f"{path.name}: run lacks {RUN_KEYS - run.keys()}"
        # the commit measured, or (a run before provenance was recorded) the commit
        # that saved the file, which says so by its name
        assert run["commit"] or re.fullmatch(r"[0-9a-f]{40}", run.get("committed_at") or ""), (
            f"{path.name}: neither the commit measured nor the commit that saved it")
        if not run["commit"]:
            assert run.get("note"), f"{path.name}: an unknown commit needs a note saying why"


def test_every_result_is_rendered_by_a_doc_page():
    docs = "\n".join(_docs().values())
    rendered = set()
    for line in re.findall(r"^\.\. bench-table:: (.+)$", docs, flags=re.M):
        rendered.update(line.split())
    rendered.update(Path(p).name for p in re.findall(
        r"^\.\. (?:figure|image):: (\S*benchmarks/results/\S+)$", docs, flags=re.M))
    missing = [p.name for p in _results() if p.name not in rendered]
    assert not missing, f"rendered by no doc page: {missing}"


def test_every_table_and_value_of_the_docs_resolves(benchtables):
    seen_tables = seen_values = 0
    for page, text in _docs().items():
        for names, render in re.findall(r"^\.\. bench-table:: (.+)\n\s+:render: (\S+)", text,
                                        flags=re.M):
            names = names.split()
            module, _, func = render.rpartition(".")
            loaded = {n: benchtables.load_results(n) for n in names}
            table = getattr(importlib.import_module(f"_tables.{module}"), func)(
                loaded[names[0]] if len(names) == 1 else loaded)
            header, rows = benchtables._cells(table)
            assert rows and all(len(r) == len(header) for r in rows), (page.name, render)
            seen_tables += 1
        for text_ in re.findall(r":bench:`([^`]+)`", text):
            name, _, rest = text_.partition(":")
            path, _, spec = rest.partition(":")
            value = benchtables.lookup(benchtables.load_results(name), path, name)
            format(value, spec)
            seen_values += 1
    assert seen_tables > 50 and seen_values > 50


def test_lookup_and_provenance(benchtables):
    results = {"rows": [{"a": 1, "b": "x, y", "v": 0.5}, {"a": 2, "b": "z", "v": 1.5}],
               "d": {"k.1": {"n": 3}},
               "run": {"commit": None, "committed_at": "f" * 40, "date": None}}
    assert benchtables.lookup(results, "rows[a=2].v") == 1.5
    assert benchtables.lookup(results, "rows[b=x, y,a=1].v") == 0.5
    assert benchtables.lookup(results, "d['k.1'].n") == 3
    assert benchtables.lookup(results, "rows|len") == 2
    with pytest.raises(ValueError, match="matches 2 items"):
        benchtables.lookup({"rows": [{"a": 1}, {"a": 1}]}, "rows[a=1]")
    with pytest.raises(ValueError, match="matches 0 items"):
        benchtables.lookup(results, "rows[a=3]")
    with pytest.raises(ValueError, match="no 'w'"):
        benchtables.lookup(results, "rows.0.w")
    assert benchtables.provenance(results) == (
        "commit of the code measured not recorded, file saved by commit fffffff, "
        "date not recorded")
    assert benchtables.provenance({"run": {"commit": "abc1234", "date": "2026-11-29 12:00 UTC"}}) \
        == "commit abc1234, 2026-11-29 12:00 UTC"
    labelled = {"before": {"run": {"commit": "a", "date": "d1"}},
                "after": {"run": {"commit": "b", "date": "d2"}}}
    assert benchtables.provenance(labelled) == "before: commit a, d1; after: commit b, d2"
