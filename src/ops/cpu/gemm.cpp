#include "ops/cpu/gemm.hpp"

#include <omp.h>

#include <algorithm>

#include "ops/cpu/float_gemm.hpp"

namespace altgrad::ops::cpu {
namespace {

// A GEMM of at least this many multiply-adds is cut into an even number of tiles, at least two, so
// that two cores share it evenly.
constexpr std::size_t kSplitWork = std::size_t{1} << 24;
// Multiply-adds per tile beyond the first two. Each tile packs the whole shared operand again, so a
// tile of r rows costs about 1/r of its arithmetic in packing: tiles of 80 rows (2^25 here before)
// made the 10.7M-parameter step 21% slower at one thread than one call per GEMM; 2^29 keeps its big
// GEMMs at two tiles of 1,024 rows, 2.7% behind one call. scripts/compare_train_speed.sh measures
// what a change here costs.
constexpr std::size_t kTileWork = std::size_t{1} << 29;
// Caps the tiles of one GEMM, and with them the times the shared operand is packed.
constexpr std::size_t kMaxTiles = 64;
// Tile edges fall on multiples of this, so every tile but the last is whole micro-kernel panels.
constexpr std::size_t kTileAlign = 16;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The sub-GEMM that computes one slice of C: where its operands and output start, and its shape.
template <typename Scalar>
struct Slice {
  const Scalar* a;
  const Scalar* b;
  Scalar* c;
  int m, n;
};

// Rows [begin, end) of C take rows of op(A): rows of A, or columns when A is transposed. Columns
// take columns of op(B): columns of B, or rows when B is transposed.
template <typename Scalar>
Slice<Scalar> slice(const GemmTiling& tiling, std::size_t part, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b,
                    int m, int n, const Scalar* a, int lda, const Scalar* b, int ldb, Scalar* c, int ldc) {
  const std::size_t begin = part * tiling.length;
  const std::size_t dim = static_cast<std::size_t>(tiling.by_rows ? m : n);
  const int size = static_cast<int>(std::min(dim, begin + tiling.length) - begin);
  if (tiling.by_rows) {
    const std::size_t a_offset = trans_a == CblasNoTrans ? begin * static_cast<std::size_t>(lda) : begin;
    return {a + a_offset, b, c + begin * static_cast<std::size_t>(ldc), size, n};
  }
  const std::size_t b_offset = trans_b == CblasNoTrans ? begin : begin * static_cast<std::size_t>(ldb);
  return {a, b + b_offset, c + begin, m, size};
}

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a, int lda,
               const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename Scalar>
void tiled_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, Scalar alpha, const Scalar* a,
                int lda, const Scalar* b, int ldb, Scalar beta, Scalar* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  const GemmTiling tiling =
      gemm_tiling(static_cast<std::size_t>(m), static_cast<std::size_t>(n), static_cast<std::size_t>(k));
  // No `if` clause: even a single tile runs inside the region, where BLAS stays on its thread.
#pragma omp parallel for schedule(static)
  for (std::size_t part = 0; part < tiling.parts; ++part) {
    // The OpenMP build of OpenBLAS runs single-threaded inside an active parallel region; a team of
    // one (OMP_NUM_THREADS=1, or a region nested in another) is not active, and there it asks
    // omp_get_max_threads(). Setting this task's thread count answers 1 (the setting ends with the
    // region), so every tile is one single-threaded call in every case.
    omp_set_num_threads(1);
    const Slice<Scalar> s = slice(tiling, part, trans_a, trans_b, m, n, a, lda, b, ldb, c, ldc);
    blas_gemm(trans_a, trans_b, s.m, s.n, k, alpha, s.a, lda, s.b, ldb, beta, s.c, ldc);
  }
}

}  // namespace

const char* blas_kernel() { return openblas_get_corename(); }

GemmTiling gemm_tiling(std::size_t m, std::size_t n, std::size_t k) {
  const bool by_rows = m >= n;
  const std::size_t dim = by_rows ? m : n;
  const std::size_t work = m * n * k;
  const std::size_t wanted =
      work < kSplitWork ? 1 : std::clamp<std::size_t>((work / kTileWork + 1) / 2 * 2, 2, kMaxTiles);
  const std::size_t length = std::min(dim, ceil_div(ceil_div(dim, wanted), kTileAlign) * kTileAlign);
  return {by_rows, length, ceil_div(dim, length)};
}

void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  const auto size = [](int v) { return static_cast<std::size_t>(std::max(v, 0)); };
  float_gemm(trans_a == CblasTrans, trans_b == CblasTrans, size(m), size(n), size(k), alpha, a, size(lda), b, size(ldb),
             beta, c, size(ldc));
}

void gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, double alpha, const double* a,
          int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  tiled_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace altgrad::ops::cpu
