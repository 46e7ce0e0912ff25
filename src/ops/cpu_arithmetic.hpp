#pragma once
// What decides the bits of this process's CPU arithmetic (docs/determinism.md): the CPU, the own
// float GEMM's kernel and the BLAS kernel, with why that one. A run's start event, `--version` and
// every bench print it. It lives at the seam so that the layers above ops/ never include a backend's
// headers (docs/architecture.md, "Who includes whom").
#include <string>

namespace altgrad::ops {

struct CpuArithmetic {
  std::string cpu;                 // the CPU's model and vector features
  std::string gemm_kernel;         // the own float GEMM's kernel: "avx512", "avx2" or "portable"
  std::string blas_library;        // "OpenBLAS 0.3.21"
  std::string blas_kernel;         // the BLAS kernel this process runs
  std::string blas_kernel_source;  // who chose it: altgrad, the user, or OpenBLAS itself
  std::string blas_openblas_pick;  // what OpenBLAS would load alone; "" where a user's setting hides it
  std::string blas_summary;        // all of the BLAS's facts in one line, for people
};

// Call first in main, before any output or thread: it may re-execute the program once so that the
// BLAS library loads the chosen kernel (ops/cpu/blas_kernel_setup.hpp). Throws std::invalid_argument
// for a bad ALTGRAD_BLAS_KERNEL, std::runtime_error where a pinned kernel cannot be had.
void select_cpu_kernels();

CpuArithmetic cpu_arithmetic();

}  // namespace altgrad::ops
