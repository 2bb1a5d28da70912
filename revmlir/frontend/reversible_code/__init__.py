"""``@rv.reversible``: reversible Python compiled to rev IR."""
