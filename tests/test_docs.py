"""The documentation's promises: its tour runs, and every public name has an API entry."""

import contextlib
import re
from pathlib import Path

import pytest


DOC = Path(__file__).resolve().parents[1] / "doc"
pytestmark = pytest.mark.skipif(not DOC.is_dir(), reason="needs the doc/ folder of a checkout")


def _code_blocks(text):
    """The bodies of the ``.. code-block:: python`` directives of a page, dedented."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?:    .*)?\n)+)", text, re.M):
        blocks.append("\n".join(line[4:] for line in match.group(1).splitlines()))
    return blocks


def _api_entries():
    """The names that doc/api.rst documents, qualified by the current module."""
    entries, module, in_summary = set(), None, False
    for line in (DOC / "api.rst").read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
        elif m := re.match(r"\.\. (?:data|autodata):: (\S+)", line):
            entries.add(f"{module}.{m.group(1)}")
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and (m := re.match(r"   ([A-Za-z_][\w.]*)$", line)):
            entries.add(f"{module}.{m.group(1)}")
        elif in_summary and line and not line.startswith("   "):
            in_summary = False
    return entries


PUBLIC_MODULES = ["skdpx", "skdpx.base", "skdpx.privacy", "skdpx.model_selection", "skdpx.attacks",
                  "skdpx.datasets", "skdpx.explain", "skdpx.recourse", "skdpx.metrics",
                  "skdpx.locally_linear", "skdpx.counterfactual", "skdpx.preprocessing",
                  "skdpx.results", "skdpx.inspection"]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_name_has_an_api_entry(module):
    """Every name in a public module's ``__all__`` has an entry, under that module or as
    the same object under another (``skdpx.locally_linear.DPLocallyLinearClassifier`` is
    ``skdpx.DPLocallyLinearClassifier``)."""
    import importlib

    module = importlib.import_module(module)
    documented = set()
    for entry in _api_entries():
        with contextlib.suppress(AttributeError):  # a stale entry: the next test's failure
            documented.add(id(_resolve(entry)))
    missing = sorted(name for name in module.__all__ if not name.startswith("__")
                     and id(getattr(module, name)) not in documented)
    assert not missing, f"doc/api.rst has no entry for {missing}"


def _resolve(entry):
    """The object an API entry names (AttributeError for a stale one)."""
    import importlib

    module, _, name = entry.rpartition(".")
    while module not in ("", "skdpx") and not _importable(module):
        module, _, outer = module.rpartition(".")
        name = f"{outer}.{name}"
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def test_the_api_entries_exist():
    for entry in sorted(_api_entries()):
        _resolve(entry)


def _importable(name):
    import importlib

    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


@pytest.mark.slow
def test_the_getting_started_tour_runs(capsys):
    blocks = _code_blocks((DOC / "getting_started.rst").read_text())
    assert len(blocks) >= 5
    namespace = {}
    for block in blocks:
        exec(compile(block, "getting_started.rst", "exec"), namespace)
    out = capsys.readouterr().out
    assert "all composed: epsilon" in out
    assert namespace["ledger"].epsilon_spent <= 4.0


def _documented_parameters(cls):
    """The names of the Parameters section of a numpydoc class docstring."""
    import inspect

    doc = inspect.getdoc(cls) or ""
    section = re.search(r"^Parameters\n-+\n(.*?)(?:^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    names = set()
    for match in re.finditer(r"^(\w+(?:, \w+)*) :", section.group(1) if section else "", re.M):
        names.update(match.group(1).split(", "))
    return names


@pytest.mark.parametrize("name, cls", __import__("skdpx.utils").utils.all_estimators())
def test_every_estimator_parameter_is_documented(name, cls):
    import inspect

    parameters = [p for p in inspect.signature(cls).parameters if p not in ("self", "kwargs")]
    missing = [p for p in parameters if p not in _documented_parameters(cls)]
    assert not missing, f"{name}'s docstring does not document {missing}"
