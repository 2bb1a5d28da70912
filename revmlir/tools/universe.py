"""revmlir as an xDSL plug-in: the ``xdsl.universe`` entry point
(``pyproject.toml``) makes stock ``xdsl-opt`` know the rev, anc and ad
dialects and every revmlir pass.

Only what revmlir adds is listed: xDSL refuses a dialect or pass that two
universes define, and the upstream ones come from xDSL's own universe.
"""

from __future__ import annotations

from xdsl.dialects import get_all_dialects as upstream_dialects
from xdsl.universe import Universe

from revmlir.dialects import get_all_dialects
from revmlir.passes import get_all_passes

_UPSTREAM = upstream_dialects()

REVMLIR_UNIVERSE = Universe(
    all_dialects={name: factory for name, factory in get_all_dialects().items() if name not in _UPSTREAM},
    all_passes=get_all_passes(),
)
