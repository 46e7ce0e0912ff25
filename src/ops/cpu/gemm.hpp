#pragma once
// Row-major C = op(A) · op(B) + beta · C through OpenBLAS, one overload per scalar type.
#include <cblas.h>

namespace altgrad::ops::cpu {

inline void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

inline void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, trans_a, trans_b, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace altgrad::ops::cpu
