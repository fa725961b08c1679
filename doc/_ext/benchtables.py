"""``bench-table``: a table generated from a benchmark's saved results.

The benchmarks in ``benchmarks/`` save what they measured under
``benchmarks/results/`` (JSON or CSV). A page shows it with::

    .. bench-table:: llm_mnist.json
       :render: llm.accuracy
       :caption: Test accuracy on MNIST

which loads ``benchmarks/results/llm_mnist.json`` and calls
``doc/_tables/llm.py::accuracy(results)``. A renderer returns a
:class:`pandas.DataFrame` (its columns are the header; the index is dropped)
or a pair ``(header, rows)``. Numbers are formatted by the renderer, so a
page never holds a number copied by hand from a benchmark's output.
"""

import csv
import importlib
import json
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
    required_arguments = 1
    has_content = False
    option_spec = {"render": directives.unchanged_required, "caption": directives.unchanged}

    def run(self):
        name = self.arguments[0]
        module_name, _, func_name = self.options["render"].rpartition(".")
        module = importlib.import_module(f"_tables.{module_name}")
        render = getattr(module, func_name)
        path = RESULTS / name
        self.env.note_dependency(str(path))
        self.env.note_dependency(module.__file__)
        header, rows = _cells(render(load_results(name)))
        if any(len(row) != len(header) for row in rows):
            raise self.error(f"{self.options['render']}: a row's length differs from the header's")
        container = nodes.container(classes=["bench-table-container"])
        container += _table(header, rows, self.options.get("caption"))
        note = nodes.paragraph(classes=["bench-table-source"])
        note += nodes.Text("Generated from ")
        note += nodes.literal(text=f"benchmarks/results/{name}")
        note += nodes.Text(".")
        container += note
        return [container]


def setup(app):
    app.add_directive("bench-table", BenchTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
