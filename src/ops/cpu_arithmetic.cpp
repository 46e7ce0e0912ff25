#include "ops/cpu_arithmetic.hpp"

#include "ops/cpu/blas_kernel_setup.hpp"
#include "ops/cpu/float_gemm.hpp"

namespace altgrad::ops {

void select_cpu_kernels() { cpu::select_blas_kernel(); }

CpuArithmetic cpu_arithmetic() {
  const cpu::BlasKernelReport blas = cpu::blas_kernel_report();
  return {blas.cpu,        cpu::float_gemm_kernel(),    blas.library,       blas.kernel,
          cpu::to_string(blas.source), blas.openblas_pick, cpu::describe(blas)};
}

}  // namespace altgrad::ops
