"""Sphinx configuration for skdpx (pip install "skdpx[docs]"; sphinx-build doc doc/_build)."""

import os

project = "skdpx"
extensions = ["sphinx.ext.autodoc", "numpydoc"]
numpydoc_show_class_members = False
# Links to Python's and scikit-learn's docs need their inventories from the network:
# opt in with SKDPX_DOCS_INTERSPHINX=1 (offline, fetching them fails, which -W
# turns into an error; the pages build the same without the links).
if os.environ.get("SKDPX_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }
exclude_patterns = ["_build"]

# The gallery (examples/plot_*.py, run at build time) with sphinx-gallery, part of the
# docs extra; without it the docs still build, with a page that shows the examples' source.
try:
    import sphinx_gallery  # noqa: F401
except ImportError:
    sphinx_gallery = None

if sphinx_gallery is not None:
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": "../examples",
        "gallery_dirs": "auto_examples",
        # every examples/plot_*.py runs at build time (small data, about a minute and a
        # half in all on 2 cores; doc/sg_execution_times.rst has each one's time)
        "filename_pattern": r"/plot_",
        "download_all_examples": False,
    }
else:
    import pathlib

    _here = pathlib.Path(__file__).resolve().parent
    _examples = sorted((_here.parent / "examples").glob("*.py"))
    _page = ["Examples", "========", "",
             "Install sphinx-gallery (``pip install 'skdpx[docs]'``) to run them into a "
             "gallery; here is their source.", ""]
    for _path in _examples:
        _title = _path.stem
        _page += [_title, "-" * len(_title), "",
                  f".. literalinclude:: ../../examples/{_path.name}", "   :language: python", ""]
    (_here / "auto_examples").mkdir(exist_ok=True)
    (_here / "auto_examples" / "index.rst").write_text("\n".join(_page))
