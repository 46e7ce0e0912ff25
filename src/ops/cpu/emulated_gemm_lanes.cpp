#include "ops/cpu/emulated_gemm_lanes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace altgrad::ops::cpu::lanes {

#if defined(__AVX2__)
namespace {

using Model = format::AccumulatorModel;

constexpr std::size_t kCols = 16;  // a panel: two vectors of eight floats
constexpr std::size_t kRows = 2;   // rows of A per pass: four independent chains per pass
// Operands within 2^±40: products, cut scales and units stay normal floats, and exponent sums
// (within ±80) fit int8 lanes. Zero's exponent is int8's least, -128: a saturating sum with it is at
// most -128 + 40 = -88, below every sum of two operands' exponents, so it loses every max.
constexpr int kMaxExponent = 40;
constexpr std::int8_t kZeroExponent = -128;
constexpr std::int16_t kLeastSum = -2 * kMaxExponent;
constexpr std::uint32_t kExponentMask = 0x7F80'0000u;
constexpr std::int16_t kNoExponent = -512;  // no term in a step: loses to every accumulator's exponent

// An operand as the tensor core takes it (a copy's grid value: x̂·s with the format's fraction
// bits, nearest, x̂·s lying a few FP32 units from it) and its exponent (kZeroExponent for zero), in
// integer operations on the float's fields. False where the fast path cannot take it: more than
// 12 significant bits (products inexact in float), an exponent beyond ±kMaxExponent, not finite.
inline bool operand_value(const EmulatedOperand& op, float x, float& value, std::int8_t& exponent) {
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
  exponent = kZeroExponent;
  if ((u & 0x7FFF'FFFFu) == 0) return true;
  const int e = static_cast<int>((u & kExponentMask) >> 23) - 127;
  if ((u & 0xFFFu) != 0 || e < -kMaxExponent || e > kMaxExponent) return false;
  exponent = static_cast<std::int8_t>(std::max(e, op.emin));  // subnormals of the format count as its emin
  return true;
}

// operand_value for eight contiguous operands at once, the same operations in eight lanes.
inline bool operand_values8(const EmulatedOperand& op, const float* x, float* value, std::int8_t* exponent) {
  __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x));
  if (op.grid != nullptr) {
    if (op.scale != 1.0f) u = _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(u), _mm256_set1_ps(op.scale)));
    const int drop = 23 - op.grid->spec.mantissa_bits;
    if (drop > 0) {
      u = _mm256_and_si256(_mm256_add_epi32(u, _mm256_set1_epi32(1 << (drop - 1))), _mm256_set1_epi32(~((1 << drop) - 1)));
    }
  }
  _mm256_storeu_ps(value, _mm256_castsi256_ps(u));
  const __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFF'FFFF));
  const __m256i zero = _mm256_cmpeq_epi32(magnitude, _mm256_setzero_si256());
  const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(magnitude, 23), _mm256_set1_epi32(127));
  const __m256i whole = _mm256_cmpeq_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0xFFF)), _mm256_setzero_si256());
  const __m256i outside = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-kMaxExponent), e),
                                          _mm256_cmpgt_epi32(e, _mm256_set1_epi32(kMaxExponent)));
  const __m256i taken = _mm256_or_si256(zero, _mm256_andnot_si256(outside, whole));
  if (_mm256_movemask_ps(_mm256_castsi256_ps(taken)) != 0xFF) return false;
  const __m256i e32 = _mm256_blendv_epi8(_mm256_max_epi32(e, _mm256_set1_epi32(op.emin)),
                                         _mm256_set1_epi32(kZeroExponent), zero);
  // Each int32 lane's low byte, four per 128-bit half.
  const __m256i low_bytes = _mm256_shuffle_epi8(
      e32, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
  const auto lo = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(low_bytes)));
  const auto hi = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_extracti128_si256(low_bytes, 1)));
  const std::uint64_t bytes = lo | (std::uint64_t{hi} << 32);
  std::memcpy(exponent, &bytes, sizeof bytes);
  return true;
}

// operand_value for count contiguous operands.
inline bool operand_values(const EmulatedOperand& op, const float* x, std::size_t count, float* value,
                           std::int8_t* exponent) {
  std::size_t at = 0;
  for (; at + 8 <= count; at += 8) {
    if (!operand_values8(op, x + at, value + at, exponent + at)) return false;
  }
  for (; at < count; ++at) {
    if (!operand_value(op, x[at], value[at], exponent[at])) return false;
  }
  return true;
}

// Every operand (r, c) of a rows × cols operand, converted in strips along whichever index is
// contiguous in memory, and handed to place(r, c, value, exponent). Sixteen lines are converted
// before any is placed, so that where the packs run across the source's lines (a transpose), each
// place() call of a sixteen writes one cache line. False where an operand does not fit.
template <typename Place>
bool convert_operands(const EmulatedOperand& op, std::size_t rows, std::size_t cols, Place place) {
  constexpr std::size_t kStrip = 128, kLines = 16;
  const bool along_columns = op.col_stride == 1 || op.row_stride != 1;
  const std::size_t lines = along_columns ? rows : cols, length = along_columns ? cols : rows;
  const std::size_t line_stride = along_columns ? op.row_stride : op.col_stride;
  const std::size_t step = along_columns ? op.col_stride : op.row_stride;
  const std::size_t blocks = (lines + kLines - 1) / kLines;
  bool fits = true;
#pragma omp parallel for schedule(static) reduction(&& : fits)
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t first = block * kLines, count_lines = std::min(kLines, lines - first);
    const Place put = place;  // a local copy, kept in registers: the byte stores below may alias the shared one
    alignas(32) float gathered[kStrip], value[kLines][kStrip];
    alignas(32) std::int8_t exponent[kLines][kStrip];
    for (std::size_t at = 0; at < length && fits; at += kStrip) {
      const std::size_t count = std::min(kStrip, length - at);
      for (std::size_t l = 0; l < count_lines && fits; ++l) {
        const float* x = op.data + (first + l) * line_stride + at * step;
        if (step != 1) {
          for (std::size_t i = 0; i < count; ++i) gathered[i] = x[i * step];
          x = gathered;
        }
        fits = operand_values(op, x, count, value[l], exponent[l]);
      }
      if (!fits) break;
      if (along_columns) {
        for (std::size_t l = 0; l < count_lines; ++l) {
          for (std::size_t i = 0; i < count; ++i) put(first + l, at + i, value[l][i], exponent[l][i]);
        }
      } else {
        for (std::size_t i = 0; i < count; ++i) {
          for (std::size_t l = 0; l < count_lines; ++l) put(at + i, first + l, value[l][i], exponent[l][i]);
        }
      }
    }
  }
  return fits;
}

// Sixteen exponents (int16 lanes, columns 0-15) as two vectors of eight int32 lanes.
inline void widen(__m256i e16, __m256i& lo, __m256i& hi) {
  lo = _mm256_cvtepi16_epi32(_mm256_castsi256_si128(e16));
  hi = _mm256_cvtepi16_epi32(_mm256_extracti128_si256(e16, 1));
}

// A step's cut scale and unit, 2^(bits − e_max) and 2^(e_max − bits), for eight outputs. e_max is
// the larger of the products' largest exponent (e; kNoExponent where the step has none) and the
// accumulator's, taken on biased exponents (FP32's fields), where c = 0 has field 0. Neither
// kNoExponent nor c = 0 wins against a real exponent: a product's is at least -80, a nonzero
// accumulator's at least its last unit's, -80 - bits. The floor, bits + 1 biased, lies below both
// and keeps the two powers normal floats where a step has no term and c is 0.
inline void step_scales(__m256i e, __m256 c, int bits, __m256& scale, __m256& unit) {
  const __m256i field_c = _mm256_srli_epi32(_mm256_and_si256(_mm256_castps_si256(c), _mm256_set1_epi32(kExponentMask)), 23);
  const __m256i biased = _mm256_max_epi32(_mm256_max_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), field_c),
                                          _mm256_set1_epi32(bits + 1));
  const __m256i field = _mm256_slli_epi32(biased, 23);
  scale = _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_set1_epi32((bits + 254) << 23), field));
  unit = _mm256_castsi256_ps(_mm256_sub_epi32(field, _mm256_set1_epi32(bits << 23)));
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

// Each column's largest exponent sum over a step's products, for two rows. The sums run in int8
// lanes, two steps of k per vector: B's exponents are packed in pairs (column j's k and k + 1 in
// lanes 2j and 2j + 1) against A's pair broadcast to every 16-bit lane. A lone last k pairs with
// zero's exponent. Max is exact in any order. The result is sixteen int16 lanes, kNoExponent where
// the step has no nonzero product.
inline void largest_exponents(const std::int8_t* ae, std::size_t lda, const std::int8_t* be, std::size_t steps,
                              __m256i (&e16)[kRows]) {
  __m256i most[kRows];
  for (std::size_t r = 0; r < kRows; ++r) most[r] = _mm256_set1_epi8(kZeroExponent);
  const auto take = [&](std::size_t kk, std::uint16_t high_mask, std::uint16_t high) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(be + kk * kCols));
    for (std::size_t r = 0; r < kRows; ++r) {
      std::uint16_t pair;
      std::memcpy(&pair, ae + r * lda + kk, sizeof pair);
      const auto a = static_cast<std::int16_t>((pair & high_mask) | high);
      most[r] = _mm256_max_epi8(most[r], _mm256_adds_epi8(_mm256_set1_epi16(a), b));
    }
  };
  std::size_t kk = 0;
  for (; kk + 2 <= steps; kk += 2) take(kk, 0xFFFF, 0);
  if (kk < steps) take(kk, 0x00FF, 0x8000);  // k + 1 belongs to the next step or past K
  for (std::size_t r = 0; r < kRows; ++r) {
    const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(most[r], 8), 8), odd = _mm256_srai_epi16(most[r], 8);
    const __m256i e = _mm256_max_epi16(even, odd);
    e16[r] = _mm256_blendv_epi8(e, _mm256_set1_epi16(kNoExponent), _mm256_cmpgt_epi16(_mm256_set1_epi16(kLeastSum), e));
  }
}

// One block FMA of `steps` products for the tile (format/accumulator.hpp, step 2), whose largest
// product exponents are `largest`. Before the products, it finds the next step's into
// `next_largest` (when next_steps > 0): that work does not wait on this step's accumulator, so it
// runs beside the products instead of between two steps.
template <Model::Cut kCut>
[[gnu::always_inline]] inline void block_fma(const Model& model, const float* av, std::size_t lda, const float* bv,
                                             std::size_t steps, const __m256i (&largest)[kRows],
                                             const std::int8_t* next_ae, std::size_t lde, const std::int8_t* next_be,
                                             std::size_t next_steps, __m256i (&next_largest)[kRows], Tile& t) {
  __m256 scale[kRows][2], unit[kRows][2];
  __m256i sum[kRows][2];
  for (std::size_t r = 0; r < kRows; ++r) {
    __m256i e[2];
    widen(largest[r], e[0], e[1]);
    for (int h = 0; h < 2; ++h) {
      step_scales(e[h], t.c[r][h], model.bits, scale[r][h], unit[r][h]);
      sum[r][h] = cut<kCut>(_mm256_mul_ps(t.c[r][h], scale[r][h]));
    }
  }
  if (next_steps > 0) largest_exponents(next_ae, lde, next_be, next_steps, next_largest);
  // The products' loop, its four sums and scales named one by one: GCC keeps them in registers
  // without a copy per step (which it adds for the arrays).
  static_assert(kRows == 2);
  __m256i s00 = sum[0][0], s01 = sum[0][1], s10 = sum[1][0], s11 = sum[1][1];
  const __m256 k00 = scale[0][0], k01 = scale[0][1], k10 = scale[1][0], k11 = scale[1][1];
  const auto step = [&](std::size_t kk) {
    const __m256 b0 = _mm256_loadu_ps(bv + kk * kCols), b1 = _mm256_loadu_ps(bv + kk * kCols + 8);
    const __m256 a0 = _mm256_broadcast_ss(av + kk), a1 = _mm256_broadcast_ss(av + lda + kk);
    s00 = _mm256_add_epi32(s00, cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a0, b0), k00)));
    s01 = _mm256_add_epi32(s01, cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a0, b1), k01)));
    s10 = _mm256_add_epi32(s10, cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a1, b0), k10)));
    s11 = _mm256_add_epi32(s11, cut<kCut>(_mm256_mul_ps(_mm256_mul_ps(a1, b1), k11)));
  };
  std::size_t kk = 0;
  for (; kk + 2 <= steps; kk += 2) {
    step(kk);
    step(kk + 1);
  }
  if (kk < steps) step(kk);
  sum[0][0] = s00;
  sum[0][1] = s01;
  sum[1][0] = s10;
  sum[1][1] = s11;
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) t.c[r][h] = _mm256_mul_ps(normalize<kCut>(sum[r][h], model.acc), unit[r][h]);
  }
}

// Two rows' results against one panel over K's stretch [lo, hi) (steps 2 and 3), into out (2 × 16).
template <Model::Cut kCut>
void chain(const Model& model, const float* av, const std::int8_t* ae, std::size_t lda, std::size_t lde,
           const float* bv, const std::int8_t* be, std::size_t lo, std::size_t hi, float* out) {
  Tile t;
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) t.c[r][h] = t.promoted[r][h] = _mm256_setzero_ps();
  }
  __m256i largest[kRows], next[kRows] = {};
  largest_exponents(ae + lo, lde, be + lo * kCols, std::min(lo + model.group, hi) - lo, largest);
  for (std::size_t k0 = lo; k0 < hi; k0 += model.group) {
    const std::size_t k1 = std::min(k0 + model.group, hi), k2 = std::min(k1 + model.group, hi);
    block_fma<kCut>(model, av + k0, lda, bv + k0 * kCols, k1 - k0, largest, ae + k1, lde, be + k1 * kCols, k2 - k1,
                    next, t);
    std::copy(std::begin(next), std::end(next), std::begin(largest));
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

// The length of a packed row of exponents: k rounded up to a whole pair.
std::size_t exponent_stride(std::size_t k) { return (k + 1) / 2 * 2; }

}  // namespace

bool covers(const format::AccumulatorModel& model) {
  const int sum_bits = model.bits + 2 + std::bit_width(model.group + 1);  // a step's sum stays below 2^sum_bits
  return model.emulated() && model.inputs == Model::Inputs::format && sum_bits <= 24;
}

bool pack(const EmulatedOperand& a, const EmulatedOperand& b, std::size_t m, std::size_t n, std::size_t k,
          Packs& packs) {
  const std::size_t rows = (m + kRows - 1) / kRows * kRows, panels = (n + kCols - 1) / kCols;
  const std::size_t lde = exponent_stride(k);
  // Rows, columns and k past the matrix are zeros: set here, the rest is written below.
  packs.a_value.resize(rows * k);
  std::fill(packs.a_value.begin() + static_cast<std::ptrdiff_t>(m * k), packs.a_value.end(), 0.0f);
  packs.a_exponent.assign(rows * lde, kZeroExponent);
  packs.b_value.resize(panels * k * kCols);
  if (n % kCols != 0) {
    const auto last = static_cast<std::ptrdiff_t>((panels - 1) * k * kCols);
    std::fill(packs.b_value.begin() + last, packs.b_value.end(), 0.0f);
  }
  packs.b_exponent.assign(panels * lde * kCols, kZeroExponent);
  float *a_value = packs.a_value.data(), *b_value = packs.b_value.data();
  std::int8_t *a_exponent = packs.a_exponent.data(), *b_exponent = packs.b_exponent.data();
  bool a_fits = true;
  if (a.col_stride == 1) {  // A's rows lie as the pack holds them: each converts in place
#pragma omp parallel for schedule(static) reduction(&& : a_fits)
    for (std::size_t i = 0; i < m; ++i) {
      a_fits = a_fits && operand_values(a, a.data + i * a.row_stride, k, a_value + i * k, a_exponent + i * lde);
    }
  } else {
    a_fits = convert_operands(a, m, k, [=](std::size_t i, std::size_t kk, float value, std::int8_t exponent) {
      a_value[i * k + kk] = value;
      a_exponent[i * lde + kk] = exponent;
    });
  }
  // B's exponents go in pairs of k: column j's k and k + 1 side by side (largest_exponents).
  return a_fits && convert_operands(b, k, n, [=](std::size_t kk, std::size_t j, float value, std::int8_t exponent) {
    const std::size_t panel = j / kCols, lane = j % kCols;
    b_value[(panel * k + kk) * kCols + lane] = value;
    b_exponent[(panel * lde + (kk & ~std::size_t{1})) * kCols + 2 * lane + (kk & 1)] = exponent;
  });
}

void run(const format::AccumulatorModel& model, const Packs& packs, std::size_t m, std::size_t n, std::size_t k,
         float* sums) {
  const std::size_t row_pairs = (m + kRows - 1) / kRows, panels = (n + kCols - 1) / kCols;
  const std::size_t lde = exponent_stride(k);
  const std::size_t tiles = (k + 127) / 128;  // split-K pieces: whole 128-long k-tiles (step 4)
  const std::size_t piece = std::max<std::size_t>(1, (tiles + model.split - 1) / model.split) * 128;
#pragma omp parallel for schedule(static)
  for (std::size_t task = 0; task < row_pairs * panels; ++task) {
    const std::size_t i = task / panels * kRows, p = task % panels;
    const float* av = packs.a_value.data() + i * k;
    const std::int8_t* ae = packs.a_exponent.data() + i * lde;
    const float* bv = packs.b_value.data() + p * k * kCols;
    const std::int8_t* be = packs.b_exponent.data() + p * lde * kCols;
    alignas(32) float total[kRows * kCols] = {}, part[kRows * kCols];
    for (std::size_t lo = 0; lo < k; lo += piece) {
      const std::size_t hi = std::min(lo + piece, k);
      if (model.cut == Model::Cut::truncate) {
        chain<Model::Cut::truncate>(model, av, ae, k, lde, bv, be, lo, hi, part);
      } else {
        chain<Model::Cut::nearest>(model, av, ae, k, lde, bv, be, lo, hi, part);
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
