#include "ops/cpu/emulated_gemm_lanes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace altgrad::ops::cpu::lanes {

#if defined(__AVX2__)
namespace {

using Model = format::AccumulatorModel;

constexpr std::size_t kCols = 16;  // a panel: two vectors of eight floats
constexpr std::size_t kRows = 2;   // rows of A per pass: four independent chains per pass
constexpr int kMaxExponent = 40;   // operands within 2^±40: products, cut scales and units stay normal floats
constexpr std::uint32_t kExponentMask = 0x7F80'0000u;
constexpr std::int16_t kNoExponent = -512;  // zero's: two of them still fit int16, and it loses every max

// The operand's value at (r, c) as the tensor core takes it (a copy's grid value: x̂·s with the
// format's fraction bits, nearest, x̂·s lying a few FP32 units from it) and its exponent
// (kNoExponent for zero), in integer operations on the float's fields. False where the fast path
// cannot take it: more than 12 significant bits (products inexact in float), an exponent beyond
// ±kMaxExponent, not finite.
inline bool operand_value(const EmulatedOperand& op, std::size_t r, std::size_t c, float& value,
                          std::int16_t& exponent) {
  float x = op.data[r * op.row_stride + c * op.col_stride];
  std::uint32_t u;
  if (op.grid != nullptr) {
    if (op.scale != 1.0f) x *= op.scale;
    const int drop = 23 - op.grid->spec.mantissa_bits;
    u = std::bit_cast<std::uint32_t>(x);
    if (drop > 0) u = (u + (1u << (drop - 1))) & ~((1u << drop) - 1u);
  } else {
    u = std::bit_cast<std::uint32_t>(x);
  }
  value = std::bit_cast<float>(u);
  exponent = kNoExponent;
  if ((u & 0x7FFF'FFFFu) == 0) return true;
  const int e = static_cast<int>((u & kExponentMask) >> 23) - 127;
  if ((u & 0xFFFu) != 0 || e < -kMaxExponent || e > kMaxExponent) return false;
  exponent = static_cast<std::int16_t>(std::max(e, op.emin));  // subnormals of the format count as its emin
  return true;
}

// Sixteen exponents (int16 lanes, columns 0-15) as two vectors of eight int32 lanes.
inline void widen(__m256i e16, __m256i& lo, __m256i& hi) {
  lo = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(e16));
  hi = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(e16, 1));
}

// The larger of the products' largest exponent and the accumulator's (kNoExponent where c is 0).
inline __m256i with_accumulator(__m256i e, __m256 c) {
  const __m256i field = _mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(c), _mm256_set1_epi32(kExponentMask)), 23);
  const __m256i zero = _mm256_castps_si256(_mm256_cmp_ps(c, _mm256_setzero_ps(), _CMP_EQ_OQ));
  const __m256i ec = _mm256_blendv_epi8(_mm256_sub_epi32(field, _mm256_set1_epi32(127)),
                                        _mm256_set1_epi32(kNoExponent), zero);
  return _mm256_max_epi32(e, ec);
}

// 2^(n) as a float for int32 lanes n, 0 where `none` (no term in the step) is set.
inline __m256 power_of_two(__m256i n, __m256i none) {
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
  return _mm256_castsi256_ps(_mm256_andnot_si256(none, bits));
}

template <Model::Cut kCut>
__m256i cut(__m256 x) {
  if constexpr (kCut == Model::Cut::truncate) return _mm256_cvttps_epi32(x);
  return _mm256_cvtps_epi32(x);  // the default rounding mode: nearest even
}

// A step's integer sum (exact in float: below 2^24) cut to `acc` significant bits.
template <Model::Cut kCut>
__m256 normalize(__m256i sum, int acc) {
  const int drop = 24 - acc;
  __m256i u = _mm256_castps_si256(_mm256_cvtepi32_ps(sum));
  if (drop == 0) return _mm256_castsi256_ps(u);
  if constexpr (kCut == Model::Cut::nearest) {
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, drop), _mm256_set1_epi32(1));
    u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32((1 << (drop - 1)) - 1), odd));
  }
  return _mm256_castsi256_ps(_mm256_and_si256(u, _mm256_set1_epi32(~((1 << drop) - 1))));
}

// The running state of one pass: the accumulators and promotion registers of two rows × 16 columns.
struct Tile {
  __m256 c[kRows][2];
  __m256 promoted[kRows][2];
};

// One block FMA of `steps` products for the tile (format/accumulator.hpp, step 2). The largest
// exponent runs over exponent sums in int16 lanes, all sixteen columns at once; odd k goes to a
// second set of maxima so that the chains overlap (max is exact in any order).
template <Model::Cut kCut>
[[gnu::always_inline]] inline void block_fma(const Model& model, const float* av, const std::int16_t* ae,
                                             std::size_t lda, const float* bv, const std::int16_t* be,
                                             std::size_t steps, Tile& t) {
  const __m256i nothing = _mm256_set1_epi16(2 * kNoExponent);
  __m256i even[kRows], odd[kRows];
  for (std::size_t r = 0; r < kRows; ++r) even[r] = odd[r] = nothing;
  const auto take = [&](std::size_t kk, __m256i(&into)[kRows]) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(be + kk * kCols));
    for (std::size_t r = 0; r < kRows; ++r) {
      into[r] = _mm256_max_epi16(into[r], _mm256_add_epi16(_mm256_set1_epi16(ae[r * lda + kk]), b));
    }
  };
  std::size_t kk = 0;
  for (; kk + 2 <= steps; kk += 2) {
    take(kk, even);
    take(kk + 1, odd);
  }
  if (kk < steps) take(kk, even);
  __m256 scale[kRows][2], unit[kRows][2];
  __m256i sum[kRows][2];
  for (std::size_t r = 0; r < kRows; ++r) {
    __m256i e[2];
    widen(_mm256_max_epi16(even[r], odd[r]), e[0], e[1]);
    for (int h = 0; h < 2; ++h) {
      e[h] = with_accumulator(e[h], t.c[r][h]);
      const __m256i none = _mm256_cmpgt_epi32(_mm256_set1_epi32(kNoExponent / 2), e[h]);
      scale[r][h] = power_of_two(_mm256_sub_epi32(_mm256_set1_epi32(model.bits), e[h]), none);  // 2^(bits − e_max)
      unit[r][h] = power_of_two(_mm256_sub_epi32(e[h], _mm256_set1_epi32(model.bits)), none);   // 2^(e_max − bits)
      sum[r][h] = cut<kCut>(_mm256_mul_ps(t.c[r][h], scale[r][h]));
    }
  }
  for (kk = 0; kk < steps; ++kk) {
    const __m256 b0 = _mm256_loadu_ps(bv + kk * kCols), b1 = _mm256_loadu_ps(bv + kk * kCols + 8);
    for (std::size_t r = 0; r < kRows; ++r) {
      const __m256 a = _mm256_broadcast_ss(av + r * lda + kk);
      sum[r][0] = _mm256_add_epi32(sum[r][0], cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a, b0), scale[r][0])));
      sum[r][1] = _mm256_add_epi32(sum[r][1], cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a, b1), scale[r][1])));
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) t.c[r][h] = _mm256_mul_ps(normalize<kCut>(sum[r][h], model.acc), unit[r][h]);
  }
}

// Two rows' results against one panel over K's stretch [lo, hi) (steps 2 and 3), into out (2 × 16).
template <Model::Cut kCut>
void chain(const Model& model, const float* av, const std::int16_t* ae, std::size_t lda, const float* bv,
           const std::int16_t* be, std::size_t lo, std::size_t hi, float* out) {
  Tile t;
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) t.c[r][h] = t.promoted[r][h] = _mm256_setzero_ps();
  }
  for (std::size_t k0 = lo; k0 < hi; k0 += model.group) {
    const std::size_t k1 = std::min(k0 + model.group, hi);
    block_fma<kCut>(model, av + k0, ae + k0, lda, bv + k0 * kCols, be + k0 * kCols, k1 - k0, t);
    if (model.promote != 0 && ((k1 - lo) % model.promote == 0 || k1 == hi)) {
      for (std::size_t r = 0; r < kRows; ++r) {
        for (int h = 0; h < 2; ++h) {
          t.promoted[r][h] = _mm256_add_ps(t.promoted[r][h], t.c[r][h]);  // one FP32 addition, nearest even
          t.c[r][h] = _mm256_setzero_ps();
        }
      }
    }
  }
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) _mm256_storeu_ps(out + r * kCols + 8 * h, model.promote != 0 ? t.promoted[r][h] : t.c[r][h]);
  }
}

}  // namespace

bool covers(const format::AccumulatorModel& model) {
  const int sum_bits = model.bits + 2 + std::bit_width(model.group + 1);  // a step's sum stays below 2^sum_bits
  return model.emulated() && model.inputs == Model::Inputs::format && sum_bits <= 24;
}

bool pack(const EmulatedOperand& a, const EmulatedOperand& b, std::size_t m, std::size_t n, std::size_t k,
          Packs& packs) {
  const std::size_t rows = (m + kRows - 1) / kRows * kRows, panels = (n + kCols - 1) / kCols;
  // Rows and columns past the matrix are zeros: set here, the rest is written below.
  packs.a_value.resize(rows * k);
  packs.a_exponent.resize(rows * k);
  std::fill(packs.a_value.begin() + static_cast<std::ptrdiff_t>(m * k), packs.a_value.end(), 0.0f);
  std::fill(packs.a_exponent.begin() + static_cast<std::ptrdiff_t>(m * k), packs.a_exponent.end(), kNoExponent);
  packs.b_value.resize(panels * k * kCols);
  packs.b_exponent.resize(panels * k * kCols);
  if (n % kCols != 0) {
    const auto last = static_cast<std::ptrdiff_t>((panels - 1) * k * kCols);
    std::fill(packs.b_value.begin() + last, packs.b_value.end(), 0.0f);
    std::fill(packs.b_exponent.begin() + last, packs.b_exponent.end(), kNoExponent);
  }
  bool fits = true;
#pragma omp parallel for schedule(static) reduction(&& : fits)
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t kk = 0; kk < k && fits; ++kk) {
      fits = operand_value(a, i, kk, packs.a_value[i * k + kk], packs.a_exponent[i * k + kk]);
    }
  }
#pragma omp parallel for schedule(static) reduction(&& : fits)
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t panel = j / kCols, lane = j % kCols;
    for (std::size_t kk = 0; kk < k && fits; ++kk) {
      const std::size_t at = (panel * k + kk) * kCols + lane;
      fits = operand_value(b, kk, j, packs.b_value[at], packs.b_exponent[at]);
    }
  }
  return fits;
}

void run(const format::AccumulatorModel& model, const Packs& packs, std::size_t m, std::size_t n, std::size_t k,
         float* sums) {
  const std::size_t row_pairs = (m + kRows - 1) / kRows, panels = (n + kCols - 1) / kCols;
  const std::size_t tiles = (k + 127) / 128;  // split-K pieces: whole 128-long k-tiles (step 4)
  const std::size_t piece = std::max<std::size_t>(1, (tiles + model.split - 1) / model.split) * 128;
#pragma omp parallel for schedule(static)
  for (std::size_t task = 0; task < row_pairs * panels; ++task) {
    const std::size_t i = task / panels * kRows, p = task % panels;
    const float* av = packs.a_value.data() + i * k;
    const std::int16_t* ae = packs.a_exponent.data() + i * k;
    const float* bv = packs.b_value.data() + p * k * kCols;
    const std::int16_t* be = packs.b_exponent.data() + p * k * kCols;
    alignas(32) float total[kRows * kCols] = {}, part[kRows * kCols];
    for (std::size_t lo = 0; lo < k; lo += piece) {
      const std::size_t hi = std::min(lo + piece, k);
      if (model.cut == Model::Cut::truncate) {
        chain<Model::Cut::truncate>(model, av, ae, k, bv, be, lo, hi, part);
      } else {
        chain<Model::Cut::nearest>(model, av, ae, k, bv, be, lo, hi, part);
      }
      for (std::size_t x = 0; x < kRows * kCols; ++x) total[x] += part[x];
    }
    for (std::size_t r = 0; r < kRows && i + r < m; ++r) {
      for (std::size_t j = p * kCols; j < std::min(n, (p + 1) * kCols); ++j) sums[(i + r) * n + j] = total[r * kCols + j - p * kCols];
    }
  }
}

#else  // no AVX2: the general path does every model

bool covers(const format::AccumulatorModel&) { return false; }
bool pack(const EmulatedOperand&, const EmulatedOperand&, std::size_t, std::size_t, std::size_t, Packs&) {
  return false;
}
void run(const format::AccumulatorModel&, const Packs&, std::size_t, std::size_t, std::size_t, float*) {}

#endif

}  // namespace altgrad::ops::cpu::lanes
