"""``bench-table``: a table generated from a benchmark's saved results.

The benchmarks in ``benchmarks/`` save what they measured under
``benchmarks/results/`` (JSON or CSV). A page shows it with::

    .. bench-table:: llc_mnist.json
       :render: llc.accuracy
       :caption: Test accuracy on MNIST

which loads ``benchmarks/results/llc_mnist.json`` and calls
``doc/_tables/llc.py::accuracy(results)`` (with several files, the renderer
gets a dict of their results by file name). A renderer returns a
:class:`pandas.DataFrame` (its columns are the header; the index is dropped)
or a pair ``(header, rows)``. Numbers are formatted by the renderer, so a
page never holds a number copied by hand from a benchmark's output. Under each
table the directive prints the file's provenance: the commit of the code
measured and the date of the run (``_run_record.run_info``, saved as the
file's ``run``), or says which of them the file does not record.

A single measured value in the prose is the ``bench`` role::

    :bench:`bad_input.json:cases:,`
    :bench:`attacks.json:rows[dataset=adult,targets=canary,epsilon=inf].auc:.2f`
    :bench:`fixed_costs.json:@privacy.llc_ratio:.3f`

``file:path[:format]``: the path is dot-separated keys of dicts or indices of
lists; ``['key']`` is a key that holds dots; ``[key=value,...]`` picks the one
item of a list whose fields print as those values (an error if none or
several match; a value may hold commas, not ``=``); ``@module.func`` calls
``doc/_tables/module.py::func(results)`` for a value the file holds only
through arithmetic (a median, a ratio), and ``path|module.func`` applies
``func`` to the value at ``path`` (``rows[...]|privacy.change``; ``len``,
``min``, ``max`` and ``sum`` need no module). The format
is Python's format specification (``.2f``, ``,``, ``.0%``); without one the
value prints as ``str``.
"""

import csv
import importlib
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def load_results(name):
    """The saved results ``benchmarks/results/<name>`` (JSON, or CSV as a list of dicts)."""
    path = RESULTS / name
    if not path.is_file():
        raise FileNotFoundError(f"no saved benchmark results at {path}")
    if path.suffix == ".csv":
        with path.open(newline="") as handle:
            return list(csv.DictReader(handle))
    return json.loads(path.read_text())


def _pick(items, spec, where):
    """The one item of ``items`` whose fields print as ``spec`` ("key=value,...")."""
    wanted = [part.split("=", 1) for part in re.split(r",(?=[^,=]*=)", spec)]
    if any(len(pair) != 2 for pair in wanted):
        raise ValueError(f"{where}: [{spec}] is not key=value,...")
    found = [item for item in items
             if isinstance(item, dict) and all(str(item.get(k)) == v for k, v in wanted)]
    if len(found) != 1:
        raise ValueError(f"{where}: [{spec}] matches {len(found)} items, not one")
    return found[0]


def _segments(path):
    """Split ``a.b[k=v,j=w].c`` into ("a", "b", "[k=v,j=w]", "c")."""
    return [s for s in re.findall(r"\[[^\]]*\]|[^.\[]+", path) if s]


def lookup(results, path, where=""):
    """The value at ``path`` in ``results`` (see the module's docstring), or a
    ``ValueError`` that names what is missing."""
    path, *pipes = path.split("|")
    if path.startswith("@"):
        value = _function(path[1:])(results)
    else:
        value = _walk(results, path, where)
    for name in pipes:
        value = _function(name)(value)
    return value


#: what ``path|name`` may apply without a module
_BUILTINS = {"len": len, "min": min, "max": max, "sum": sum}


def _function(name):
    if name in _BUILTINS:
        return _BUILTINS[name]
    module_name, _, func_name = name.rpartition(".")
    return getattr(importlib.import_module(f"_tables.{module_name}"), func_name)


def _walk(results, path, where):
    value = results
    for segment in _segments(path):
        if segment[:2] in ("['", '["'):
            value = value[segment[2:-2]]
        elif segment.startswith("["):
            value = _pick(value, segment[1:-1], where)
        elif isinstance(value, list):
            value = value[int(segment)]
        elif isinstance(value, dict) and segment in value:
            value = value[segment]
        else:
            raise ValueError(f"{where}: no {segment!r} in {path!r}")
    return value


def provenance(results):
    """What a results file says about its run: "commit <c>, <date>", or what it does not record.

    The record is the file's ``run`` (``benchmarks/_run_record.run_info``); a
    file written before that module keeps it at the top level. ``committed_at``
    (the commit that saved a file whose run did not record its own) is not the
    code measured, and is printed as what it is.
    """
    if isinstance(results, list):
        return "no commit or date recorded"
    if not isinstance(results.get("run"), dict) and "date" not in results and "commit" not in results:
        labelled = {k: v for k, v in results.items() if isinstance(v, dict) and "run" in v}
        if labelled:  # a file that keeps several labelled runs (check_defaults.json)
            return "; ".join(f"{k}: {provenance(v)}" for k, v in labelled.items())
    run = results.get("run") if isinstance(results.get("run"), dict) else results
    commit, date = run.get("commit"), run.get("date")
    parts = [f"commit {commit}" if commit else "commit of the code measured not recorded"]
    if not commit and run.get("committed_at"):
        parts.append(f"file saved by commit {run['committed_at'][:7]}")
    parts.append(str(date) if date else "date not recorded")
    return ", ".join(parts)


def bench_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    """``:bench:`file:path[:format]```: one value of a saved result, formatted."""
    file_name, _, rest = text.partition(":")
    path, _, spec = rest.partition(":")
    env = inliner.document.settings.env
    try:
        results = load_results(file_name)
        value = lookup(results, path, where=file_name)
        shown = format(value, spec) if spec else str(value)
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        message = inliner.reporter.error(f":bench:`{text}`: {exc}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    env.note_dependency(str(RESULTS / file_name))
    return [nodes.inline(rawtext, shown, classes=["bench-value"])], []


def _cells(table):
    if hasattr(table, "columns"):  # a DataFrame
        return [str(c) for c in table.columns], table.astype(object).values.tolist()
    header, rows = table
    return [str(c) for c in header], [list(r) for r in rows]


def _text(value):
    return "" if value is None else str(value)


def _table(header, rows, caption):
    """A docutils table whose cells are plain text (never parsed as reST: a cell such as
    ``recourse_distance@cand`` is a name, not an e-mail address)."""
    table = nodes.table(classes=["bench-table"])
    if caption:
        table += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in header)
    for section, lines in ((nodes.thead(), [header]), (nodes.tbody(), rows)):
        for line in lines:
            row = nodes.row()
            for cell in line:
                entry = nodes.entry()
                entry += nodes.paragraph(text=_text(cell))
                row += entry
            section += row
        group += section
    return table


class BenchTable(SphinxDirective):
    """``.. bench-table:: file [file ...]``: one file's results go to the renderer as
    loaded; several files go as a dict of their loaded results by name (a table
    comparing runs). The note under the table names each file and its provenance."""
    required_arguments = 1
    optional_arguments = 20
    has_content = False
    option_spec = {"render": directives.unchanged_required, "caption": directives.unchanged}

    def run(self):
        names = self.arguments
        module_name, _, func_name = self.options["render"].rpartition(".")
        module = importlib.import_module(f"_tables.{module_name}")
        render = getattr(module, func_name)
        loaded = {name: load_results(name) for name in names}
        for name in names:
            self.env.note_dependency(str(RESULTS / name))
        self.env.note_dependency(module.__file__)
        header, rows = _cells(render(loaded[names[0]] if len(names) == 1 else loaded))
        if any(len(row) != len(header) for row in rows):
            raise self.error(f"{self.options['render']}: a row's length differs from the header's")
        container = nodes.container(classes=["bench-table-container"])
        container += _table(header, rows, self.options.get("caption"))
        note = nodes.paragraph(classes=["bench-table-source"])
        note += nodes.Text("Generated from ")
        for i, name in enumerate(names):
            note += nodes.Text("; " if i else "")
            note += nodes.literal(text=f"benchmarks/results/{name}")
            note += nodes.Text(f" ({provenance(loaded[name])})")
        note += nodes.Text(".")
        container += note
        return [container]


def setup(app):
    app.add_directive("bench-table", BenchTable)
    app.add_role("bench", bench_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
