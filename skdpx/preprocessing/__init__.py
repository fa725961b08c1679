"""Encoders with a declared, public schema (bounds and categories), and the schema itself."""

from ._public_schema import PublicSchema
from ._schema import PublicSchemaEncoder

__all__ = ["PublicSchema", "PublicSchemaEncoder"]
