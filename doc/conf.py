"""Sphinx configuration for skdpx (pip install "skdpx[docs]"; sphinx-build doc doc/_build)."""

import os
import sys
from pathlib import Path

import skdpx

_here = Path(__file__).resolve().parent
# the docs' own extension (bench-table) and its table renderers (doc/_tables)
sys.path[:0] = [str(_here / "_ext"), str(_here)]

project = "skdpx"
author = "the skdpx developers"
copyright = "2026, the skdpx developers"
release = skdpx.__version__
version = release
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "benchtables"]
# the API reference (api.rst): one page per public name, generated at build time
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]

html_theme = "pydata_sphinx_theme"
html_title = f"skdpx {release}"
html_static_path = ["_static"]
html_css_files = ["skdpx.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "getting_started": []}
# Links to Python's and scikit-learn's docs need their inventories from the network:
# opt in with SKDPX_DOCS_INTERSPHINX=1 (offline, fetching them fails, which -W
# turns into an error; the pages build the same without the links).
if os.environ.get("SKDPX_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }
exclude_patterns = ["_build", "_templates", "_tables"]
# quotes and ellipses only: "--" stays two hyphens (command-line options in the
# benchmark tables' cells would otherwise print as en-dashes)
smartquotes_action = "qe"

# The gallery: examples/plot_*.py, run at build time (sphinx-gallery, in the docs extra).
# Each API page lists the examples that use its name (backreferences).
extensions.append("sphinx_gallery.gen_gallery")
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # every examples/plot_*.py runs at build time, on small data: 56 s in all on an idle
    # 2-core machine, 3 min on a busy one (doc/sg_execution_times.rst: each one's time)
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "within_subsection_order": "gallery_order.ExampleOrder",
    "doc_module": ("skdpx",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skdpx": None},
}


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters (set_fit_request ...) are generated per
    # estimator and documented by scikit-learn; their docstrings cite its glossary
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
