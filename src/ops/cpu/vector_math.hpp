#pragma once
// Float arithmetic that the compiler vectorizes, for the CPU kernels' elementwise loops and row sums.
//
// libm's expf is a call GCC cannot vectorize, and a sum written `s += x[i]` is a chain of dependent
// adds it may not reorder (without -ffast-math). These replace both with plain arithmetic whose
// result is fixed by the code alone: the same bits at any vector width, thread count or alignment.
// Double keeps libm and serial sums everywhere; the gradient checks use it as the reference.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace altgrad::ops::cpu {

// The number of partial sums a row sum keeps: one AVX-512 register of floats (two AVX2 ones).
inline constexpr std::size_t kSumLanes = 16;

// kSumLanes floats as one value (GCC's and Clang's vector extension): +, −, ·, / and comparisons act
// lane by lane with the same IEEE rounding as on one float, so a term computed on vector lanes has
// in each lane the bits of the same term computed on that lane's float.
using FloatLanes = float __attribute__((vector_size(kSumLanes * sizeof(float))));

// The kernels hold kSumLanes lanes as kPieces registers of PieceLanes: one AVX-512 register, two
// AVX2 ones (lane l is lane l % kPieceLanes of piece l / kPieceLanes). GCC lowers the arithmetic of
// a vector wider than the target's registers to whole registers, but keeps such a vector in memory
// between operations, moved through general registers, and compares and selects it a float at a
// time: with AVX2, FloatLanes ran row sums and the softmax several times slower than two registers.
// SSE-only builds, which only tests use, take FloatLanes whole.
#if defined(__AVX2__) && !defined(__AVX512F__)
using PieceLanes = float __attribute__((vector_size(kSumLanes / 2 * sizeof(float))));
using PieceIntLanes = std::int32_t __attribute__((vector_size(kSumLanes / 2 * sizeof(std::int32_t))));
#else
using PieceLanes = FloatLanes;
using PieceIntLanes = std::int32_t __attribute__((vector_size(kSumLanes * sizeof(std::int32_t))));
#endif
inline constexpr std::size_t kPieceLanes = sizeof(PieceLanes) / sizeof(float);
inline constexpr std::size_t kPieces = kSumLanes / kPieceLanes;

// e^x within 2 ulp for x in [-87.3, 88.3]; 0 below (where e^x is subnormal or underflows: flushed to
// zero, so that a dead GELU unit's slope is an exact zero as in float64, not a stray 1e-37); clamped
// at 88.3 above (e^88.3 ≈ 2.2e38, so that 2^n stays finite); NaN gives NaN.
// Cody and Waite's reduction: x = n·ln2 + r with |r| <= ln2/2, where n·ln2_hi is exact (ln2_hi has 16
// significant bits, |n| <= 127 seven), then e^r by its Taylor series to degree 7 (truncation below
// 5e-9 relative) and 2^n from the exponent bits.
// One definition for a float and for PieceLanes: each lane of the vector form gives the float form's
// bits (the same operations in the same order; selects in place of std::min and std::max, which
// they equal, NaN included).
template <typename F>
F exp_lanes(F x) {
  constexpr bool kScalar = std::is_same_v<F, float>;
  using Int = std::conditional_t<kScalar, std::int32_t, PieceIntLanes>;
  using UInt = std::conditional_t<kScalar, std::uint32_t, PieceIntLanes>;
  const auto underflows = x < -87.3f;
  x = x < -87.3f ? F{} - 87.3f : x;  // std::max(x, -87.3f)
  x = 88.3f < x ? F{} + 88.3f : x;   // std::min(x, 88.3f)
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding and subtracting it rounds to an integer
  const F n = (x * kLog2e + kRound) - kRound;
  const F r = (x - n * kLn2Hi) - n * kLn2Lo;
  F p = F{} + 1.0f / 5040.0f;
  p = 1.0f / 720.0f + r * p;
  p = 1.0f / 120.0f + r * p;
  p = 1.0f / 24.0f + r * p;
  p = 1.0f / 6.0f + r * p;
  p = 0.5f + r * p;
  p = 1.0f + r * p;
  p = 1.0f + r * p;
  // n + 127 lies in [1, 255) for the clamped range, a normal float's exponent field.
  Int whole;
  if constexpr (kScalar) {
    whole = static_cast<std::int32_t>(n);
  } else {
    whole = __builtin_convertvector(n, PieceIntLanes);
  }
  const auto power = static_cast<UInt>(whole + 127) << 23;
  return underflows ? F{} : p * std::bit_cast<F>(power);
}

inline float exp_float(float x) { return exp_lanes(x); }

// The `count` ≤ kSumLanes values at x in v's first lanes, zeros in the others; and back. One masked
// load or store with AVX-512, two with AVX2 (a memcpy of a variable length is a call, and a loop of
// lane inserts is slower still).
#if defined(__AVX2__) && !defined(__AVX512F__)
// AVX2's masks for lanes [0, count) of each half of FloatLanes.
struct HalfMasks {
  __m256i low, high;
};
inline HalfMasks first_lanes_avx2(std::size_t count) {
  const __m256i limit = _mm256_set1_epi32(static_cast<int>(count));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return {_mm256_cmpgt_epi32(limit, lane), _mm256_cmpgt_epi32(limit, _mm256_add_epi32(lane, _mm256_set1_epi32(8)))};
}
#endif

inline FloatLanes load_first_lanes(const float* x, std::size_t count) {
#if defined(__AVX512F__)
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1u), x);
#elif defined(__AVX2__)
  FloatLanes v;
  if (count == kSumLanes) {
    std::memcpy(&v, x, sizeof v);
    return v;
  }
  const auto mask = first_lanes_avx2(count);
  const __m256 halves[2] = {_mm256_maskload_ps(x, mask.low), _mm256_maskload_ps(x + 8, mask.high)};
  std::memcpy(&v, halves, sizeof v);
  return v;
#else
  FloatLanes v{};
  for (std::size_t l = 0; l < count; ++l) v[l] = x[l];
  return v;
#endif
}

inline void store_first_lanes(float* x, FloatLanes v, std::size_t count) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(x, static_cast<__mmask16>((1u << count) - 1u), v);
#elif defined(__AVX2__)
  // A masked store is microcoded on AMD's cores: whole vectors take a plain one.
  if (count == kSumLanes) {
    std::memcpy(x, &v, sizeof v);
    return;
  }
  const auto mask = first_lanes_avx2(count);
  __m256 halves[2];
  std::memcpy(halves, &v, sizeof v);
  _mm256_maskstore_ps(x, mask.low, halves[0]);
  _mm256_maskstore_ps(x + 8, mask.high, halves[1]);
#else
  for (std::size_t l = 0; l < count; ++l) x[l] = v[l];
#endif
}

inline PieceLanes load_piece(const float* x) {
  PieceLanes v;
  std::memcpy(&v, x, sizeof v);
  return v;
}

// The `count` ≤ kPieceLanes values at x in a piece's first lanes, zeros in the others.
inline PieceLanes load_first_piece_lanes(const float* x, std::size_t count) {
#if defined(__AVX2__) && !defined(__AVX512F__)
  if (count == kPieceLanes) return load_piece(x);
  return _mm256_maskload_ps(x, first_lanes_avx2(count).low);
#else
  return load_first_lanes(x, count);
#endif
}

// The lanes of v whose index (first + lane) is below `end`; `fill` in the others.
inline PieceLanes piece_below(PieceLanes v, std::size_t first, std::size_t end, float fill = 0.0f) {
  PieceIntLanes index;
  for (std::size_t l = 0; l < kPieceLanes; ++l) index[l] = static_cast<std::int32_t>(l);
  return index < static_cast<std::int32_t>(end) - static_cast<std::int32_t>(first) ? v : PieceLanes{} + fill;
}

// How a term reads its arrays: at(x) is x[i] for one index, or the piece x[i .. i + kPieceLanes)
// (AtPiece), or the `count` < kPieceLanes values x[i .. i + count) followed by zeros (AtTail). A term
// written against `at` (for example `[&](auto at) { return at(x) * at(y); }`) is then one definition
// for the vector body, the vector tail and the double reference.
struct AtIndex {
  std::size_t i;
  template <typename Scalar>
  Scalar operator()(const Scalar* x) const {
    return x[i];
  }
};

struct AtPiece {
  std::size_t i;
  PieceLanes operator()(const float* x) const { return load_piece(x + i); }
};

struct AtTail {
  std::size_t i, count;
  PieceLanes operator()(const float* x) const { return load_first_piece_lanes(x + i, count); }
};

// The sum of kSumLanes partial sums held in pieces, added pairwise (0+8, 1+9, ...; then 0+4, ...).
inline float fold_partial_sums(const PieceLanes (&pieces)[kPieces]) {
  float partial[kSumLanes];
  std::memcpy(partial, pieces, sizeof partial);
  for (std::size_t half = kSumLanes / 2; half > 0; half /= 2)
    for (std::size_t l = 0; l < half; ++l) partial[l] += partial[l + half];
  return partial[0];
}

// Σ term(i) for i < n, with term(i) added to partial sum i mod 16 in order of i, then the partial sums
// added pairwise (fold_partial_sums). The order is a function of n alone, so the bits do not depend
// on the vector width. term(at) reads through `at` (AtPiece, AtTail, AtIndex). The tail's unused
// lanes add +0, which leaves every partial sum as it was (a partial sum starts at +0 and so is never
// −0).
template <typename Term>
float lane_sum(std::size_t n, Term&& term) {
  PieceLanes lanes[kPieces] = {};
  std::size_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes)
    for (std::size_t p = 0; p < kPieces; ++p) lanes[p] += term(AtPiece{i + p * kPieceLanes});
  for (std::size_t p = 0; p < kPieces && i + p * kPieceLanes < n; ++p) {
    const std::size_t first = i + p * kPieceLanes;
    lanes[p] += piece_below(term(AtTail{first, std::min(kPieceLanes, n - first)}), first, n);
  }
  return fold_partial_sums(lanes);
}

// Σ term(i) for i < n as a kernel templated on its scalar sums a row: lane_sum's fixed order in float,
// in order of i in double (the reference the gradient checks use).
template <typename Scalar, typename Term>
Scalar row_sum(std::size_t n, Term&& term) {
  if constexpr (std::is_same_v<Scalar, float>) {
    return lane_sum(n, term);
  } else {
    Scalar sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += term(AtIndex{i});
    return sum;
  }
}

}  // namespace altgrad::ops::cpu
