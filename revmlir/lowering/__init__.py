"""Lowering reversible IR towards native code."""
