"""Sphinx configuration for skdpx (pip install "skdpx[docs]"; sphinx-build doc doc/_build)."""

project = "skdpx"
extensions = ["sphinx.ext.autodoc", "numpydoc", "sphinx.ext.intersphinx"]
numpydoc_show_class_members = False
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
exclude_patterns = ["_build"]
