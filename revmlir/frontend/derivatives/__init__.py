"""Derivatives of compiled Python functions: gradients, forward mode, Jacobians, inverse products."""
