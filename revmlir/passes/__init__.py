"""Every revmlir pass, by its ``rev-opt`` name (a lazy table, as in xDSL)."""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def verify():
        from revmlir.passes.verify import RevVerifyPass

        return RevVerifyPass

    def invert():
        from revmlir.passes.invert import RevInvertPass

        return RevInvertPass

    def expand_routines():
        from revmlir.passes.expand_routines import RevExpandRoutinesPass

        return RevExpandRoutinesPass

    def insert_checks():
        from revmlir.passes.checks import RevInsertChecksPass

        return RevInsertChecksPass

    def strip_checks():
        from revmlir.passes.checks import RevStripChecksPass

        return RevStripChecksPass

    def lower_to_std():
        from revmlir.lowering.rev_to_std import RevLowerToStdPass

        return RevLowerToStdPass

    def ad_adjoint():
        from revmlir.passes.adjoint import AdAdjointPass

        return AdAdjointPass

    def ad_tangent():
        from revmlir.passes.tangent import AdTangentPass

        return AdTangentPass

    def ad_jacobian():
        from revmlir.passes.tangent import AdJacobianPass

        return AdJacobianPass

    def ad_hessian():
        from revmlir.passes.tangent import AdHessianPass

        return AdHessianPass

    def ad_inverse_tangent():
        from revmlir.passes.inverse_modes import AdInverseTangentPass

        return AdInverseTangentPass

    def ad_inverse_adjoint():
        from revmlir.passes.inverse_modes import AdInverseAdjointPass

        return AdInverseAdjointPass

    def lump_widths():
        from revmlir.interpreter.lump_widths import RevLumpWidthsPass

        return RevLumpWidthsPass

    def ad_checkpoint():
        from revmlir.passes.checkpoint import AdCheckpointPass

        return AdCheckpointPass

    def check_snapshots():
        from revmlir.passes.checkpoint import AncCheckSnapshotsPass

        return AncCheckSnapshotsPass

    def reversibilize():
        from revmlir.passes.reversibilize import ReversibilizePass

        return ReversibilizePass

    def flatten_split_loops():
        from revmlir.passes.flatten import FlattenSplitLoopsPass

        return FlattenSplitLoopsPass

    def make_resumable():
        from revmlir.passes.resumable import MakeResumablePass

        return MakeResumablePass

    def host_safety():
        from revmlir.lowering.host_safety import HostSafetyPass

        return HostSafetyPass

    def version_loops():
        from revmlir.lowering.loop_versioning import LoopVersioningPass

        return LoopVersioningPass

    def std_to_llvm():
        from revmlir.lowering.std_to_llvm import ConvertStdToLLVMPass

        return ConvertStdToLLVMPass

    def gpu_outline():
        from revmlir.gpu.outline import RevGpuOutlinePass

        return RevGpuOutlinePass

    def gpu_local_arrays():
        from revmlir.gpu.local_arrays import RevGpuLocalArraysPass

        return RevGpuLocalArraysPass

    def gpu_to_nvvm():
        from revmlir.gpu.to_nvvm import ConvertGpuToNvvmPass

        return ConvertGpuToNvvmPass

    return {
        "rev-verify": verify,
        "rev-invert": invert,
        "rev-expand-routines": expand_routines,
        "rev-insert-checks": insert_checks,
        "rev-strip-checks": strip_checks,
        "rev-lower-to-std": lower_to_std,
        "rev-version-loops": version_loops,
        "rev-host-safety": host_safety,
        "convert-std-to-llvm": std_to_llvm,
        "rev-gpu-local-arrays": gpu_local_arrays,
        "rev-gpu-outline": gpu_outline,
        "convert-gpu-to-nvvm": gpu_to_nvvm,
        "ad-adjoint": ad_adjoint,
        "ad-tangent": ad_tangent,
        "ad-hessian": ad_hessian,
        "ad-jacobian": ad_jacobian,
        "ad-checkpoint": ad_checkpoint,
        "ad-inverse-tangent": ad_inverse_tangent,
        "ad-inverse-adjoint": ad_inverse_adjoint,
        "rev-lump-widths": lump_widths,
        "anc-check-snapshots": check_snapshots,
        "reversibilize": reversibilize,
        "flatten-split-loops": flatten_split_loops,
        "make-resumable": make_resumable,
    }
