"""Running compiled reversible programs: argument conversion and the native
(LLVM) backend."""
