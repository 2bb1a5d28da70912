"""Automatic differentiation by reverse computing (the ``ad`` dialect's passes).

``revmlir.ad.adjoint`` builds ``@f.adj`` (the ``Adjointer``),
``revmlir.ad.derivatives`` holds the derivative rules of pure ops.
"""
