"""Datasets bundled with skdpx.

- :func:`load_adult`: the UCI Adult (Census Income) dataset, shipped with the
  package (no download).
- :func:`encode_adult`: a numeric encoding of the Adult features whose bounds
  are public, fixed a priori and independent of the data, as differential
  privacy requires (a thin use of
  :class:`skdpx.preprocessing.PublicSchemaEncoder`).
- :func:`adult_schema`: Adult's public ``bounds`` and ``categories``, for the
  estimators' parameters on the raw DataFrame.
"""

from ._adult import adult_schema, encode_adult, load_adult

__all__ = ["adult_schema", "load_adult", "encode_adult"]
