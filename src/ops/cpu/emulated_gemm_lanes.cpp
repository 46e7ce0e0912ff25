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

// The operand's value at (r, c) as the tensor core takes it (a copy's grid value: x̂·s with the
// format's fraction bits, nearest, x̂·s lying a few FP32 units from it) and 2^(its exponent), in
// integer operations on the float's fields. False where the fast path cannot take it: more than 12
// significant bits (products inexact in float), an exponent beyond ±kMaxExponent, not finite.
inline bool operand_value(const EmulatedOperand& op, std::size_t r, std::size_t c, float& value, float& power) {
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
  const std::uint32_t field = (u & kExponentMask) >> 23, magnitude = u & 0x7FFF'FFFFu;
  value = std::bit_cast<float>(u);
  power = 0.0f;
  if (magnitude == 0) return true;
  const int exponent = static_cast<int>(field) - 127;
  if ((u & 0xFFFu) != 0 || exponent < -kMaxExponent || exponent > kMaxExponent) return false;
  const int e = std::max(exponent, op.emin);  // subnormals of the format count as its emin
  power = std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23);
  return true;
}

__m256 exponent_power(__m256 x) {
  return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kExponentMask))));
}

// 2^(bits − e) for e_max = 2^e, by the exponent field: ((127 + bits − e) << 23); 0 where e_max is 0.
__m256 cut_scale(__m256 e_max, int bits) {
  const __m256i field = _mm256_sub_epi32(_mm256_set1_epi32((254 + bits) << 23), _mm256_castps_si256(e_max));
  const __m256 zero = _mm256_cmp_ps(e_max, _mm256_setzero_ps(), _CMP_EQ_OQ);
  return _mm256_andnot_ps(zero, _mm256_castsi256_ps(field));
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

// One block FMA of `steps` products for the tile (format/accumulator.hpp, step 2).
template <Model::Cut kCut>
[[gnu::always_inline]] inline void block_fma(const Model& model, const float* av, const float* ap, std::size_t lda,
                                             const float* bv, const float* bp, std::size_t steps, Tile& t) {
  __m256 e_max[kRows][2];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) e_max[r][h] = exponent_power(t.c[r][h]);
  }
  // Odd k into a second set of maxima, so that eight chains hide the max's latency (max is exact
  // in any order).
  __m256 odd[kRows][2];
  for (std::size_t r = 0; r < kRows; ++r) odd[r][0] = odd[r][1] = _mm256_setzero_ps();
  const auto take = [&](std::size_t kk, __m256(&into)[kRows][2]) {
    const __m256 b0 = _mm256_loadu_ps(bp + kk * kCols), b1 = _mm256_loadu_ps(bp + kk * kCols + 8);
    for (std::size_t r = 0; r < kRows; ++r) {
      const __m256 a = _mm256_broadcast_ss(ap + r * lda + kk);
      into[r][0] = _mm256_max_ps(into[r][0], _mm256_mul_ps(a, b0));
      into[r][1] = _mm256_max_ps(into[r][1], _mm256_mul_ps(a, b1));
    }
  };
  std::size_t kk = 0;
  for (; kk + 2 <= steps; kk += 2) {
    take(kk, e_max);
    take(kk + 1, odd);
  }
  if (kk < steps) take(kk, e_max);
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) e_max[r][h] = _mm256_max_ps(e_max[r][h], odd[r][h]);
  }
  __m256 scale[kRows][2];
  __m256i sum[kRows][2];
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) {
      scale[r][h] = cut_scale(e_max[r][h], model.bits);
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
  const __m256 unit = _mm256_castsi256_ps(_mm256_set1_epi32((127 - model.bits) << 23));  // 2^-bits
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) {
      t.c[r][h] = _mm256_mul_ps(normalize<kCut>(sum[r][h], model.acc), _mm256_mul_ps(e_max[r][h], unit));
    }
  }
}

// Two rows' results against one panel over K's stretch [lo, hi) (steps 2 and 3), into out (2 × 16).
template <Model::Cut kCut>
void chain(const Model& model, const float* av, const float* ap, std::size_t lda, const float* bv, const float* bp,
           std::size_t lo, std::size_t hi, float* out) {
  Tile t;
  for (std::size_t r = 0; r < kRows; ++r) {
    for (int h = 0; h < 2; ++h) t.c[r][h] = t.promoted[r][h] = _mm256_setzero_ps();
  }
  for (std::size_t k0 = lo; k0 < hi; k0 += model.group) {
    const std::size_t k1 = std::min(k0 + model.group, hi);
    block_fma<kCut>(model, av + k0, ap + k0, lda, bv + k0 * kCols, bp + k0 * kCols, k1 - k0, t);
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
  packs.a_value.assign(rows * k, 0.0f);
  packs.a_power.assign(rows * k, 0.0f);
  packs.b_value.assign(panels * k * kCols, 0.0f);
  packs.b_power.assign(panels * k * kCols, 0.0f);
  bool fits = true;
#pragma omp parallel for schedule(static) reduction(&& : fits)
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t kk = 0; kk < k && fits; ++kk) {
      fits = operand_value(a, i, kk, packs.a_value[i * k + kk], packs.a_power[i * k + kk]);
    }
  }
#pragma omp parallel for schedule(static) reduction(&& : fits)
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t panel = j / kCols, lane = j % kCols;
    for (std::size_t kk = 0; kk < k && fits; ++kk) {
      const std::size_t at = (panel * k + kk) * kCols + lane;
      fits = operand_value(b, kk, j, packs.b_value[at], packs.b_power[at]);
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
    const float *av = packs.a_value.data() + i * k, *ap = packs.a_power.data() + i * k;
    const float *bv = packs.b_value.data() + p * k * kCols, *bp = packs.b_power.data() + p * k * kCols;
    alignas(32) float total[kRows * kCols] = {}, part[kRows * kCols];
    for (std::size_t lo = 0; lo < k; lo += piece) {
      const std::size_t hi = std::min(lo + piece, k);
      if (model.cut == Model::Cut::truncate) {
        chain<Model::Cut::truncate>(model, av, ap, k, bv, bp, lo, hi, part);
      } else {
        chain<Model::Cut::nearest>(model, av, ap, k, bv, bp, lo, hi, part);
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
