#!/bin/sh
# The GPU check of issue 19, for a machine with an NVIDIA GPU: the tests
# marked gpu (they launch kernels), then benchmarks/bench_gpu.py.  Output
# goes under $OUT (default ./gpu-check): nvidia-smi.txt, tests.txt,
# bench.txt, bench/bench_gpu.{md,json}.  Under 5 minutes on an H100.
#
#   OUT=/somewhere sh benchmarks/gpu_check.sh [--quick]
#
# PYTHON picks the interpreter (default python3); it needs numpy, llvmlite,
# xdsl, pytest, cuda-bindings, and for the benchmark cupy and jax.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
echo "== tests marked gpu"
tests=$(ls tests/test_gpu*.py)
timeout 150 "$PYTHON" -m pytest -q -rs -m gpu -p no:cacheprovider $tests > "$OUT/tests.txt" 2>&1
echo "pytest exit status $? (log in $OUT/tests.txt)"
tail -n 5 "$OUT/tests.txt"
echo "== benchmarks/bench_gpu.py"
timeout 170 "$PYTHON" benchmarks/bench_gpu.py --out "$OUT/bench" "$@" 2>&1 | tee "$OUT/bench.txt"
