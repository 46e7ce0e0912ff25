#include "ops/cpu/float_gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <new>
#include <utility>

#include "ops/cpu/vector_math.hpp"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>

#include <cstdio>
#endif

namespace altgrad::ops::cpu {
namespace {

// A tile of C is kPanelRows rows of two vectors of kLanes floats: with AVX-512, 14 rows of two
// 16-float vectors are 28 of its 32 registers, which leaves two for the row of B and one for the
// broadcast of A; with AVX2, 6 rows of two 8-float vectors are 12 of its 16. B is packed in panels
// of a tile's width, so that a tile reads its panel from start to end.
#if defined(__AVX512F__)
constexpr std::size_t kPanelRows = 14, kLanes = 16;
#elif defined(__AVX2__) && defined(__FMA__)
constexpr std::size_t kPanelRows = 6, kLanes = 8;
#else
constexpr std::size_t kPanelRows = 6, kLanes = 16;
#endif
constexpr std::size_t kPanelCols = 2 * kLanes;
// Columns of B packed at once: a depth block of 512 columns is 512 KiB, which stays in L2 while
// every panel of A goes past it.
constexpr std::size_t kColumnChunk = 512;
// Multiply-adds below which a second thread costs more than it saves.
constexpr std::size_t kParallelWork = std::size_t{1} << 21;
// A panel of A is read in place, unless its stored rows fall into too few of L1's sets: an
// address's set repeats every 4 KiB (64 sets of 64-byte lines, 8 ways), so rows 1, 2 or 4 KiB apart
// start at 4, 2 or 1 set offsets. More than kMaxRowsPerOffset rows on one offset evict each other
// and B's panel (AVX-512's 14 rows from 1 KiB, AVX2's 6 from 4 KiB); those panels are copied
// first, to rows kCopiedRowStride floats apart. A panel of Aᵀ is always packed, kPanelRows floats
// per k: in place, its depth of rows, one line each, would take half of L1 (AVX2) and fall into a
// few sets whenever lda is a multiple of 16.
constexpr std::size_t kSetSpan = 4096;
constexpr std::size_t kMaxRowsPerOffset = 3;
constexpr std::size_t kCopiedRowStride = kGemmDepth + 16;

bool rows_share_sets(std::size_t lda) {
  const std::size_t offsets = kSetSpan / std::gcd(lda * sizeof(float), kSetSpan);
  return kPanelRows > kMaxRowsPerOffset * offsets;
}

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// How a depth block's s reaches C (float_gemm.hpp).
enum class Update { overwrite, add, scale_add };

struct Epilogue {
  Update update;
  float alpha, beta;
};

#if !defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
// The first `count` of 8 lanes, as AVX2's masked loads and stores take them.
__m256i first_lanes8(std::size_t count) { return first_lanes_avx2(count).low; }

#endif

#if defined(__AVX512F__)

__mmask16 first_lanes(std::size_t count) { return static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u); }

// r[i] becomes column i of the 16×16 matrix whose rows were r: interleaved 32-bit, then 64-bit,
// then 128-bit lanes twice.
void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  __m512 u[16];  // u[4g + c], 128-bit lane L: rows 4g..4g+3 at column 4L + c
  for (int g = 0; g < 4; ++g) {
    const __m512d lo = _mm512_castps_pd(t[4 * g]), hi = _mm512_castps_pd(t[4 * g + 1]);
    const __m512d lo2 = _mm512_castps_pd(t[4 * g + 2]), hi2 = _mm512_castps_pd(t[4 * g + 3]);
    u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, lo2));
    u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, lo2));
    u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(hi, hi2));
    u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(hi, hi2));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 even01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), odd01 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 even23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 odd23 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(even01, even23, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(even01, even23, 0xDD);
    r[4 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(odd01, odd23, 0xDD);
  }
}

// `rows` ≤ 16 rows of `depth` floats (row stride ld) written transposed: out[p * out_stride + i] =
// row i's element p, for i < 16 (rows beyond `rows` give 0).
void transpose_rows(const float* in, std::size_t ld, std::size_t rows, std::size_t depth, float* out,
                    std::size_t out_stride) {
  for (std::size_t p0 = 0; p0 < depth; p0 += 16) {
    const std::size_t count = std::min<std::size_t>(16, depth - p0);
    const __mmask16 load = first_lanes(count);
    __m512 r[16];
    for (std::size_t i = 0; i < 16; ++i) {
      r[i] = i < rows ? _mm512_maskz_loadu_ps(load, in + i * ld + p0) : _mm512_setzero_ps();
    }
    transpose16(r);
    for (std::size_t p = 0; p < count; ++p) _mm512_storeu_ps(out + (p0 + p) * out_stride, r[p]);
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

// r[i] becomes column i of the 8×8 matrix whose rows were r: interleaved 32-bit, then 64-bit lanes,
// then 128-bit halves.
void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);  // columns 0, 1 | 4, 5 of rows i, i + 1
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // columns 2, 3 | 6, 7
  }
  for (int g = 0; g < 8; g += 4) {  // u[g + c]: column c | c + 4 of rows g..g + 3
    u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
    r[c + 4] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
  }
}

// The AVX-512 transpose_rows by 8×8 blocks.
void transpose_rows(const float* in, std::size_t ld, std::size_t rows, std::size_t depth, float* out,
                    std::size_t out_stride) {
  for (std::size_t i0 = 0; i0 < 16; i0 += 8) {
    for (std::size_t p0 = 0; p0 < depth; p0 += 8) {
      const std::size_t count = std::min<std::size_t>(8, depth - p0);
      const __m256i load = first_lanes8(count);
      __m256 r[8];
      for (std::size_t i = 0; i < 8; ++i) {
        const float* row = in + (i0 + i) * ld + p0;
        r[i] = i0 + i >= rows ? _mm256_setzero_ps() : count == 8 ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, load);
      }
      transpose8(r);
      for (std::size_t p = 0; p < count; ++p) _mm256_storeu_ps(out + (p0 + p) * out_stride + i0, r[p]);
    }
  }
}

#else

void transpose_rows(const float* in, std::size_t ld, std::size_t rows, std::size_t depth, float* out,
                    std::size_t out_stride) {
  for (std::size_t i = 0; i < 16; ++i) {
    for (std::size_t p = 0; p < depth; ++p) out[p * out_stride + i] = i < rows ? in[i * ld + p] : 0.0f;
  }
}

#endif

// `count` floats into `width` ≥ count lanes, the lanes beyond count zero.
void copy_row(const float* in, std::size_t count, float* out, std::size_t width) {
  for (std::size_t h = 0; h < width; h += kSumLanes) {
    const std::size_t loaded = count > h ? std::min(kSumLanes, count - h) : 0;
    store_first_lanes(out + h, load_first_lanes(in + h, loaded), std::min(kSumLanes, width - h));
  }
}

// A panel of Aᵀ's block: `rows` ≤ kPanelRows floats of each of `depth` stored rows (lda apart), to
// out[p·kPanelRows + i]. Each k's vector store also writes up to kLanes − rows floats past its
// end, which the next k overwrites: out has room for kLanes more.
void pack_at_panel(const float* a, std::size_t lda, std::size_t rows, std::size_t depth, float* out) {
#if defined(__AVX512F__)
  const __mmask16 mask = first_lanes(rows);
  for (std::size_t p = 0; p < depth; ++p) _mm512_storeu_ps(out + p * kPanelRows, _mm512_maskz_loadu_ps(mask, a + p * lda));
#elif defined(__AVX2__) && defined(__FMA__)
  const __m256i mask = first_lanes8(rows);
  for (std::size_t p = 0; p < depth; ++p) _mm256_storeu_ps(out + p * kPanelRows, _mm256_maskload_ps(a + p * lda, mask));
#else
  for (std::size_t p = 0; p < depth; ++p) {
    for (std::size_t i = 0; i < kPanelRows; ++i) out[p * kPanelRows + i] = i < rows ? a[p * lda + i] : 0.0f;
  }
#endif
}

// B's depth block is packed into panels of kPanelCols columns, [k][kPanelCols] each, panel q at
// out + q·depth·kPanelCols, the columns beyond B's zero.

// Row p of B's block (`count` floats at src): into every panel, read once from start to end. A row
// at a time rather than a panel at a time: a panel's strided walk through B stalls on memory.
void pack_b_row(const float* src, std::size_t count, std::size_t depth, std::size_t p, float* out) {
  std::size_t q = 0;
  for (; (q + 1) * kPanelCols <= count; ++q) {
    std::memcpy(out + (q * depth + p) * kPanelCols, src + q * kPanelCols, kPanelCols * sizeof(float));
  }
  if (q * kPanelCols < count) copy_row(src + q * kPanelCols, count - q * kPanelCols, out + (q * depth + p) * kPanelCols, kPanelCols);
}

// One panel of Bᵀ's block, whose rows run along k: `cols` ≤ kPanelCols rows of the stored Bᵀ (row j
// at src + j·ld) transposed 16 at a time.
void pack_bt_panel(const float* src, std::size_t ld, std::size_t cols, std::size_t depth, float* out) {
  for (std::size_t h = 0; h < kPanelCols; h += 16) {
    const std::size_t rows = cols > h ? std::min<std::size_t>(16, cols - h) : 0;
    transpose_rows(src + h * ld, ld, rows, depth, out + h, kPanelCols);
  }
}

#if defined(__SANITIZE_ADDRESS__)

// Under AddressSanitizer a tile checks the ranges its loop reads and its epilogue writes once,
// before it starts, and its loads go unchecked: checked one by one they made every training test
// of the sanitizer build three times slower (the tiles were 86% of its default-config step). The
// ranges are spans from a tile's first element to its last, so every address the tile touches is
// held to the same rule.
#define ALTGRAD_TILE_CHECKS_RANGES __attribute__((no_sanitize_address))

void expect_addressable(const float* first, std::size_t floats, const char* operand) {
  void* begin = const_cast<float*>(first);
  if (void* poisoned = __asan_region_is_poisoned(begin, floats * sizeof(float))) {
    std::fprintf(stderr, "float_gemm: a tile's %s, %zu floats from %p, reaches unaddressable memory at %p\n", operand,
                 floats, begin, poisoned);
    __asan_describe_address(poisoned);
    std::abort();
  }
}

// The spans of a tile of R rows by `cols` columns at depth `depth`: op(A)'s R rows, B's packed
// panel of V vectors a row, and C's R rows.
template <std::size_t R, std::size_t V, bool kTransA>
void expect_tile_addressable(std::size_t depth, const float* a, std::size_t lda, const float* b, float* c,
                             std::size_t ldc, std::size_t cols) {
  expect_addressable(a, kTransA ? (depth - 1) * lda + R : (R - 1) * lda + depth, "A");
  expect_addressable(b, (depth - 1) * kPanelCols + V * kLanes, "packed B");
  expect_addressable(c, (R - 1) * ldc + cols, "C");
}

#else

#define ALTGRAD_TILE_CHECKS_RANGES

template <std::size_t R, std::size_t V, bool kTransA>
void expect_tile_addressable(std::size_t, const float*, std::size_t, const float*, float*, std::size_t, std::size_t) {}

#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))

// C's tile, R rows of `cols` floats, asked into L1 before the sums: its epilogue would otherwise
// wait on the miss after all of them (a depth block's loop is longer than the reorder window).
template <std::size_t R>
void prefetch_rows(const float* c, std::size_t ldc, std::size_t cols) {
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t j = 0; j < cols; j += 16) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + cols - 1), _MM_HINT_T0);
  }
}

#endif

#if defined(__AVX512F__)

// R rows × `cols` ≤ 16·V columns of C: s in registers, then the epilogue. Element (i, p) of the
// block of op(A) is at a[p·lda + i] (kTransA) or a[i·lda + p]; B's block is a packed panel. A
// panel's last 16 columns or fewer take V = 1, which skips the empty half.
template <std::size_t R, std::size_t V, bool kTransA>
ALTGRAD_TILE_CHECKS_RANGES void tile(std::size_t depth, const float* a, std::size_t lda, const float* b, float* c,
                                     std::size_t ldc, std::size_t cols, const Epilogue& e) {
  expect_tile_addressable<R, V, kTransA>(depth, a, lda, b, c, ldc, cols);
  const __mmask16 mask[2] = {first_lanes(cols), first_lanes(cols > 16 ? cols - 16 : 0)};
  prefetch_rows<R>(c, ldc, cols);
  __m512 acc[R][V];
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t h = 0; h < V; ++h) acc[i][h] = _mm512_setzero_ps();
  }
  for (std::size_t p = 0; p < depth; ++p) {
    __m512 bv[V];
    for (std::size_t h = 0; h < V; ++h) bv[h] = _mm512_load_ps(b + p * kPanelCols + 16 * h);
#pragma GCC unroll 14
    for (std::size_t i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(kTransA ? a[p * lda + i] : a[i * lda + p]);
      for (std::size_t h = 0; h < V; ++h) acc[i][h] = _mm512_fmadd_ps(av, bv[h], acc[i][h]);
    }
  }
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t h = 0; h < V; ++h) {
      float* out = c + i * ldc + 16 * h;
      __m512 r = _mm512_mul_ps(alpha, acc[i][h]);
      if (e.update == Update::add) r = _mm512_add_ps(_mm512_maskz_loadu_ps(mask[h], out), r);
      if (e.update == Update::scale_add) r = _mm512_add_ps(_mm512_mul_ps(beta, _mm512_maskz_loadu_ps(mask[h], out)), r);
      _mm512_mask_storeu_ps(out, mask[h], r);
    }
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

// The AVX-512 tile in 8-float vectors.
template <std::size_t R, std::size_t V, bool kTransA>
ALTGRAD_TILE_CHECKS_RANGES void tile(std::size_t depth, const float* a, std::size_t lda, const float* b, float* c,
                                     std::size_t ldc, std::size_t cols, const Epilogue& e) {
  expect_tile_addressable<R, V, kTransA>(depth, a, lda, b, c, ldc, cols);
  const HalfMasks edge = first_lanes_avx2(cols);
  const __m256i mask[2] = {edge.low, edge.high};
  prefetch_rows<R>(c, ldc, cols);
  __m256 acc[R][V];
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t h = 0; h < V; ++h) acc[i][h] = _mm256_setzero_ps();
  }
  for (std::size_t p = 0; p < depth; ++p) {
    __m256 bv[V];
    for (std::size_t h = 0; h < V; ++h) bv[h] = _mm256_load_ps(b + p * kPanelCols + 8 * h);
#pragma GCC unroll 6
    for (std::size_t i = 0; i < R; ++i) {
      const __m256 av = _mm256_set1_ps(kTransA ? a[p * lda + i] : a[i * lda + p]);
      for (std::size_t h = 0; h < V; ++h) acc[i][h] = _mm256_fmadd_ps(av, bv[h], acc[i][h]);
    }
  }
  // Masked stores are microcoded on AMD's cores (several cycles each): only the edge takes them.
  const bool full[2] = {cols >= 8, cols >= 16};
  const __m256 alpha = _mm256_set1_ps(e.alpha), beta = _mm256_set1_ps(e.beta);
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t h = 0; h < V; ++h) {
      float* out = c + i * ldc + 8 * h;
      __m256 r = _mm256_mul_ps(alpha, acc[i][h]);
      if (e.update != Update::overwrite) {
        const __m256 old = full[h] ? _mm256_loadu_ps(out) : _mm256_maskload_ps(out, mask[h]);
        r = _mm256_add_ps(e.update == Update::add ? old : _mm256_mul_ps(beta, old), r);
      }
      if (full[h]) {
        _mm256_storeu_ps(out, r);
      } else {
        _mm256_maskstore_ps(out, mask[h], r);
      }
    }
  }
}

#else

// The same sums and epilogue with std::fma, lane by lane (V only names the table's entry).
template <std::size_t R, std::size_t V, bool kTransA>
void tile(std::size_t depth, const float* a, std::size_t lda, const float* b, float* c, std::size_t ldc,
          std::size_t cols, const Epilogue& e) {
  float acc[R][kPanelCols] = {};
  for (std::size_t p = 0; p < depth; ++p) {
    const float* brow = b + p * kPanelCols;
    for (std::size_t i = 0; i < R; ++i) {
      const float av = kTransA ? a[p * lda + i] : a[i * lda + p];
      for (std::size_t j = 0; j < cols; ++j) acc[i][j] = std::fma(av, brow[j], acc[i][j]);
    }
  }
  for (std::size_t i = 0; i < R; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      float& out = c[i * ldc + j];
      const float r = e.alpha * acc[i][j];
      out = e.update == Update::overwrite ? r : e.update == Update::add ? out + r : e.beta * out + r;
    }
  }
}

#endif

using TileFn = void (*)(std::size_t, const float*, std::size_t, const float*, float*, std::size_t, std::size_t,
                       const Epilogue&);

template <std::size_t V, bool kTransA, std::size_t... R>
constexpr std::array<TileFn, sizeof...(R) + 1> tiles_for(std::index_sequence<R...>) {
  return {nullptr, &tile<R + 1, V, kTransA>...};
}
using TileRow = std::array<TileFn, kPanelRows + 1>;
constexpr auto kRowCounts = std::make_index_sequence<kPanelRows>{};
// kTiles[trans_a][vectors − 1][rows]: the tile of `rows` rows and kLanes·vectors columns.
constexpr std::array<std::array<TileRow, 2>, 2> kTiles = {{
    {tiles_for<1, false>(kRowCounts), tiles_for<2, false>(kRowCounts)},
    {tiles_for<1, true>(kRowCounts), tiles_for<2, true>(kRowCounts)},
}};

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};

// A packing buffer that grows to the largest size asked of it.
class PackBuffer {
 public:
  float* at_least(std::size_t floats) {
    if (floats > capacity_) {
      data_.reset(static_cast<float*>(std::aligned_alloc(64, ceil_div(floats * sizeof(float), 64) * 64)));
      if (!data_) throw std::bad_alloc();
      capacity_ = floats;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<float[], AlignedFree> data_;
  std::size_t capacity_ = 0;
};

struct Problem {
  bool trans_a, trans_b;
  std::size_t m, n, k;
  float alpha, beta;
  const float* a;
  std::size_t lda;
  const float* b;
  std::size_t ldb;
  float* c;
  std::size_t ldc;
};

// One panel of A's depth block, as the tiles read it: element (i, p) of op(A) at a[p·lda + i]
// (transposed) or a[i·lda + p].
struct APanel {
  const float* a;
  std::size_t lda, rows;
};

// Panel p of op(A)'s block at depth k0: in place, or packed into `space` (room for kPanelSpace).
constexpr std::size_t kPanelSpace = std::max(kPanelRows * kCopiedRowStride, kGemmDepth * kPanelRows + kLanes);
APanel a_panel(const Problem& g, std::size_t p, std::size_t k0, std::size_t depth, float* space) {
  const std::size_t i0 = p * kPanelRows, rows = std::min(kPanelRows, g.m - i0);
  const float* a = g.a + (g.trans_a ? k0 * g.lda + i0 : i0 * g.lda + k0);
  if (g.trans_a) {
    pack_at_panel(a, g.lda, rows, depth, space);
    return {space, kPanelRows, rows};
  }
  if (!rows_share_sets(g.lda)) return {a, g.lda, rows};
  for (std::size_t r = 0; r < rows; ++r) copy_row(a + r * g.lda, depth, space + r * kCopiedRowStride, depth);
  return {space, kCopiedRowStride, rows};
}

// Every depth block of one chunk of columns [j0, j0 + cols), in depth order: B's block packed into
// packed_b (read in place, rows of B a power of two apart would share a few cache sets), then each
// panel of A (a_panel) times each panel of B. kTeam: called by every thread of a parallel region,
// which share out the packing and then the panels of A; otherwise by one thread alone (which may
// be inside someone else's region: attention's heads).
template <bool kTeam>
void column_chunk(const Problem& g, std::size_t j0, std::size_t cols, float* packed_b) {
  const std::size_t b_panels = ceil_div(cols, kPanelCols), a_panels = ceil_div(g.m, kPanelRows);
  const Update first = g.beta == 0.0f ? Update::overwrite : g.beta == 1.0f ? Update::add : Update::scale_add;
  for (std::size_t k0 = 0; k0 < g.k; k0 += kGemmDepth) {
    const std::size_t depth = std::min(kGemmDepth, g.k - k0);
    const Epilogue epilogue{k0 == 0 ? first : Update::add, g.alpha, g.beta};
    // Bᵀ is packed a panel at a time (its rows run along k), B a row at a time.
    const std::size_t parts = g.trans_b ? b_panels : depth;
    const auto pack_part = [&](std::size_t part) {
      if (!g.trans_b) return pack_b_row(g.b + (k0 + part) * g.ldb + j0, cols, depth, part, packed_b);
      pack_bt_panel(g.b + (j0 + part * kPanelCols) * g.ldb + k0, g.ldb, std::min(kPanelCols, cols - part * kPanelCols),
                    depth, packed_b + part * depth * kPanelCols);
    };
    const auto panel_of_a = [&](std::size_t p) {
      alignas(64) float space[kPanelSpace];
      const APanel a = a_panel(g, p, k0, depth, space);
      for (std::size_t q = 0; q < b_panels; ++q) {
        const std::size_t j = q * kPanelCols, width = std::min(kPanelCols, cols - j);
        kTiles[g.trans_a][width > kLanes][a.rows](depth, a.a, a.lda, packed_b + q * depth * kPanelCols,
                                                  g.c + p * kPanelRows * g.ldc + j0 + j, g.ldc, width, epilogue);
      }
    };
    if constexpr (kTeam) {
#pragma omp for schedule(static)
      for (std::size_t part = 0; part < parts; ++part) pack_part(part);
#pragma omp for schedule(static)
      for (std::size_t p = 0; p < a_panels; ++p) panel_of_a(p);
    } else {
      for (std::size_t part = 0; part < parts; ++part) pack_part(part);
      for (std::size_t p = 0; p < a_panels; ++p) panel_of_a(p);
    }
  }
}

void scale_c(std::size_t m, std::size_t n, float beta, float* c, std::size_t ldc) {
  for (std::size_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (std::size_t j = 0; j < n; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
  }
}

}  // namespace

const char* float_gemm_kernel() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#else
  return "portable";
#endif
}

void float_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_c(m, n, beta, c, ldc);
  const Problem g{trans_a, trans_b, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
  // One buffer per calling thread: attention's heads call in parallel.
  thread_local PackBuffer buffer;
  float* packed_b = buffer.at_least(std::min(k, kGemmDepth) * ceil_div(std::min(n, kColumnChunk), kPanelCols) * kPanelCols);
  // Which thread computes a tile changes nothing in its sums, so the team is free to vary.
  if (omp_in_parallel() || omp_get_max_threads() == 1 || m * n * k < kParallelWork) {
    for (std::size_t j0 = 0; j0 < n; j0 += kColumnChunk) {
      column_chunk<false>(g, j0, std::min(kColumnChunk, n - j0), packed_b);
    }
    return;
  }
#pragma omp parallel
  for (std::size_t j0 = 0; j0 < n; j0 += kColumnChunk) {
    column_chunk<true>(g, j0, std::min(kColumnChunk, n - j0), packed_b);
  }
}

}  // namespace altgrad::ops::cpu
