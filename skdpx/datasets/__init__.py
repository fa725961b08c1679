"""Datasets bundled with skdpx.

- :func:`load_adult`: the UCI Adult (Census Income) dataset, shipped with the
  package (no download).
- :func:`encode_adult`: a numeric encoding of the Adult features whose bounds
  are public, fixed a priori and independent of the data, as differential
  privacy requires.
"""

from ._adult import encode_adult, load_adult

__all__ = ["load_adult", "encode_adult"]
