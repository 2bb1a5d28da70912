"""The GPU path: kernels of parallel loops (``outline``), NVIDIA's
intrinsics (``to_nvvm``), LLVM and PTX for NVPTX (``nvptx``), the CUDA
toolkit's ptxas and libdevice (``toolkit``) and ``compile_kernels``
(``program``).  See docs/gpu.md."""
