#pragma once
// Row-major C = alpha · op(A) · op(B) + beta · C in float by AltGrad's own blocked kernel, whose
// summation order is fixed by k alone: the same bits on any thread count, on any CPU, and from its
// AVX-512, AVX2 and portable kernels alike (the same operations in the same order).
//
// Each element's sum over k is cut into depth blocks of kGemmDepth: [0, 256), [256, 512), ... Within
// a block the products are added in k order by fused multiply-adds, starting from +0, into s. The
// blocks then reach C in order:
//   the first block:  C = alpha·s            where beta = 0 (C is not read: NaN there does not leak)
//                     C = C + alpha·s        where beta = 1
//                     C = beta·C + alpha·s   otherwise (the product rounded, then the sum)
//   each later block: C = C + alpha·s
// With k = 0, C = beta·C (0 where beta = 0).
#include <cstddef>

namespace altgrad::ops::cpu {

inline constexpr std::size_t kGemmDepth = 256;

// The kernel this build compiled in: "avx512", "avx2" or "portable" (its speed, never its bits).
const char* float_gemm_kernel();

void float_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);

}  // namespace altgrad::ops::cpu
