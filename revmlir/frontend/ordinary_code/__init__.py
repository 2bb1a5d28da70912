"""``@rv.ordinary`` and ``@rv.primitive``: ordinary Python compiled to ordinary IR."""
