"""Encoders with a declared, public schema (bounds and categories)."""

from ._schema import PublicSchemaEncoder

__all__ = ["PublicSchemaEncoder"]
