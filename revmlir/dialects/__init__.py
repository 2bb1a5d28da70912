"""revmlir's dialects and the upstream dialects reversible programs use."""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Lazy table of every dialect ``rev-opt`` and the interpreter understand."""

    def get_rev():
        from revmlir.dialects.rev import Rev

        return Rev

    def get_anc():
        from revmlir.dialects.anc import Anc

        return Anc

    def get_ad():
        from revmlir.dialects.ad import Ad

        return Ad

    def get_nvvm():
        from revmlir.dialects.nvvm import NVVM

        return NVVM

    def get_memref():
        from revmlir.dialects.upstream_forms import memref_dialect

        return memref_dialect()

    def get_scf():
        from revmlir.dialects.upstream_forms import scf_dialect

        return scf_dialect()

    def get_arith():
        from revmlir.dialects.float_functions import arith_dialect

        return arith_dialect()

    def get_math():
        from revmlir.dialects.float_functions import math_dialect

        return math_dialect()

    def get_llvm():
        from revmlir.dialects.upstream_forms import llvm_dialect

        return llvm_dialect()

    from xdsl.dialects import get_all_dialects as upstream

    dialects = dict(upstream())
    dialects["rev"] = get_rev
    dialects["anc"] = get_anc
    dialects["ad"] = get_ad
    dialects["nvvm"] = get_nvvm
    dialects["memref"] = get_memref
    dialects["scf"] = get_scf
    dialects["llvm"] = get_llvm
    dialects["arith"] = get_arith
    dialects["math"] = get_math
    return dialects
