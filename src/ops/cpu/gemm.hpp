#pragma once
// Row-major C = alpha · op(A) · op(B) + beta · C, one overload per scalar type, with the same bits
// for any OpenMP thread count.
//
// float, which training runs in: AltGrad's own kernel (ops/cpu/float_gemm.hpp), whose summation
// order is fixed by k alone, so its bits depend neither on the thread count nor on the CPU.
//
// double, which gradient checks use: OpenBLAS. Its own threading splits a GEMM by the thread count
// and blocks the reduction dimension differently per split, so each C element's sum would be added
// in an order that depends on how many threads ran (docs/determinism.md). Here C is cut into tiles
// whose bounds depend on m, n and k alone; each tile is one single-threaded BLAS call on one
// thread, so every element's sum is formed the same way whatever the thread count.
#include <cblas.h>

#include <cstddef>

namespace altgrad::ops::cpu {

// How one double GEMM's output is cut: `parts` slices of at most `length` rows (by_rows) or columns.
// A function of the shape only; m, n ≥ 1.
struct GemmTiling {
  bool by_rows;
  std::size_t length;
  std::size_t parts;
};

GemmTiling gemm_tiling(std::size_t m, std::size_t n, std::size_t k);

// The BLAS kernel family chosen for this CPU at load time ("Haswell", "SkylakeX", ...; Debian's
// OpenBLAS picks one per CPU, and OPENBLAS_CORETYPE overrides it). It decides the double GEMMs'
// bits and the speed of the bench's SGEMM ceiling, so the trainer and the bench record it.
const char* blas_kernel();

void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);

void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, double alpha, const double* a,
          int lda, const double* b, int ldb, double beta, double* c, int ldc);

}  // namespace altgrad::ops::cpu
