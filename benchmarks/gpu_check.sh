#!/bin/sh
# The GPU check of issue 19, for a machine with an NVIDIA GPU: the tests
# marked gpu (they launch kernels), then benchmarks/bench_gpu.py.  Output
# goes under $OUT (default ./gpu-check): nvidia-smi.txt, versions.txt,
# tests.txt, ptx_path.txt (the elementwise kernels' PTX instructions per
# element, benchmarks/ptx_path.py), launch_overhead.txt (the host's time
# per launch, benchmarks/launch_overhead.py), bench.txt,
# bench/bench_gpu.{md,json}.
# About 2 minutes on an H200; its timeouts stop it within 5 minutes
# whatever happens.  Arguments go to the benchmark (--quick, --cases BA,ptx).
#
#   OUT=/somewhere sh benchmarks/gpu_check.sh [--quick] [--cases LIST]
#
# PYTHON picks the interpreter (default python3); it needs numpy, llvmlite,
# xdsl, pytest, cuda-bindings, and for the benchmark cupy and jax.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# JAX takes 75 % of the GPU's memory at its first use unless told not to;
# CuPy and the kernels' arrays need theirs.
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
echo "== versions"
"$PYTHON" - <<'EOF2' 2>&1 | tee "$OUT/versions.txt"
import importlib, sys
print("python", sys.version.split()[0])
for name in ("numpy", "llvmlite", "xdsl", "cuda.bindings", "cupy", "jax", "torch"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as error:
        print(name, "missing:", error)
from revmlir.gpu import toolkit
print("ptxas", toolkit.find_ptxas(), "libdevice", toolkit.find_libdevice())
from revmlir.gpu.runtime import unavailable_reason
print("GPU unavailable because:", unavailable_reason())
EOF2
echo "== tests marked gpu"
tests=$(ls tests/test_gpu*.py)
# the GPU libraries' own deprecation warnings are not this check's failures
timeout 80 "$PYTHON" -m pytest -q -rs -m gpu -p no:cacheprovider -p no:benchmark -n 8 \
    -W ignore::DeprecationWarning -W ignore::FutureWarning $tests > "$OUT/tests.txt" 2>&1
echo "pytest exit status $? (log in $OUT/tests.txt)"
tail -n 5 "$OUT/tests.txt"
echo "== benchmarks/ptx_path.py"
timeout 30 "$PYTHON" benchmarks/ptx_path.py 2>&1 | tee "$OUT/ptx_path.txt"
echo "== benchmarks/launch_overhead.py"
timeout 20 "$PYTHON" benchmarks/launch_overhead.py 2>&1 | tee "$OUT/launch_overhead.txt"
echo "== benchmarks/bench_gpu.py"
timeout 155 "$PYTHON" benchmarks/bench_gpu.py --out "$OUT/bench" "$@" 2>&1 | tee "$OUT/bench.txt"
