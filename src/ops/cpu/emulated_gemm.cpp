#include "ops/cpu/emulated_gemm.hpp"

#include <omp.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "format/codec.hpp"
#include "ops/cpu/emulated_gemm_lanes.hpp"

namespace altgrad::ops::cpu {
namespace {

using Model = format::AccumulatorModel;

// Outputs per panel: the inner loops run across a panel's columns, which the compiler vectorizes.
constexpr std::size_t kPanel = 8;
constexpr std::size_t kKTile = 128;  // cuBLAS's k-tile: split-K pieces are whole k-tiles
constexpr int kBf16Emin = -126;
constexpr std::uint64_t kDoubleExponent = 0x7FF0'0000'0000'0000u;

// Every value is held in double, where operand values, products (two FP32 significands: 48 bits)
// and a step's cut terms and their sum (format/accumulator.hpp's limits) are exact.


// 2^(the exponent the tensor core gives x): floor(log2 |x|), at least emin; 0 for zero.
double exponent_power(double x, int emin) {
  if (x == 0) return 0;
  return std::ldexp(1.0, std::max(std::ilogb(x), emin));
}

// An operand as the model reads it: values and their exponents' powers, and which rows (of A) or
// columns (of B) hold a non-finite value. Non-finite values enter the packs as zero.
struct Packed {
  std::vector<double> value, power;
  std::vector<unsigned char> non_finite;  // per row of A, per column of B
};

// The value the tensor core multiplies: the grid value behind a fake-quantized copy, as BF16 where
// the model takes BF16 inputs.
float input_value(const Model& model, const EmulatedOperand& op, std::size_t r, std::size_t c) {
  float x = op.data[r * op.row_stride + c * op.col_stride];
  if (op.grid != nullptr && op.scale != 1.0f && std::isfinite(x)) {
    x = format::decode(*op.grid, format::encode(*op.grid, format::Rounding::nearest_even, x * op.scale));
  }
  return model.inputs == Model::Inputs::bf16 ? round_to_bf16(x) : x;
}

int input_emin(const Model& model, const EmulatedOperand& op) {
  return model.inputs == Model::Inputs::bf16 ? kBf16Emin : op.emin;
}

// A row by row: value[i·k + kk].
void pack_a(const Model& model, const EmulatedOperand& a, std::size_t m, std::size_t k, Packed& out) {
  out.value.assign(m * k, 0.0);
  out.power.assign(m * k, 0.0);
  out.non_finite.assign(m, 0);
  const int emin = input_emin(model, a);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t kk = 0; kk < k; ++kk) {
      const float x = input_value(model, a, i, kk);
      if (!std::isfinite(x)) {
        out.non_finite[i] = 1;
        continue;
      }
      out.value[i * k + kk] = x;
      out.power[i * k + kk] = exponent_power(x, emin);
    }
  }
}

// B in panels of kPanel columns, k-major within a panel: value[(panel · k + kk) · kPanel + j];
// columns past n are zeros.
void pack_b(const Model& model, const EmulatedOperand& b, std::size_t k, std::size_t n, Packed& out) {
  const std::size_t panels = (n + kPanel - 1) / kPanel;
  out.value.assign(panels * k * kPanel, 0.0);
  out.power.assign(panels * k * kPanel, 0.0);
  out.non_finite.assign(n, 0);
  const int emin = input_emin(model, b);
#pragma omp parallel for schedule(static)
  for (std::size_t p = 0; p < panels; ++p) {
    for (std::size_t j = p * kPanel; j < std::min(n, (p + 1) * kPanel); ++j) {
      for (std::size_t kk = 0; kk < k; ++kk) {
        const float x = input_value(model, b, kk, j);
        const std::size_t at = (p * k + kk) * kPanel + (j - p * kPanel);
        if (!std::isfinite(x)) {
          out.non_finite[j] = 1;
          continue;
        }
        out.value[at] = x;
        out.power[at] = exponent_power(x, emin);
      }
    }
  }
}

// A compile-time choice, so that the loops below vectorize (vroundpd) instead of branching per term.
template <Model::Cut kCut>
double cut(double x) {
  if constexpr (kCut == Model::Cut::truncate) return std::trunc(x);
  return std::nearbyint(x);
}

// x (an integer below 2^53 in magnitude) cut to `acc` significant bits.
double normalize(double x, int acc, Model::Cut how) {
  const int dropped = 53 - acc;
  std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  if (how == Model::Cut::nearest) bits += (std::uint64_t{1} << (dropped - 1)) - 1 + ((bits >> dropped) & 1u);
  return std::bit_cast<double>(bits & ~((std::uint64_t{1} << dropped) - 1));
}

// 2^(floor(log2 |c|)) for a nonzero normal c; 0 for zero.
double leading_power(double c) {
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(c) & kDoubleExponent);
}

#if defined(__AVX2__)
// Four partial results per half panel over k mod 4, so that the vector units' latency overlaps:
// max is exact in any order, and the cut terms are integers whose sums stay below 2^53, so every
// order gives the same bits.
constexpr std::size_t kChains = 4;

// e_max[j] = max(e_max[j], max_k ap[k] · bp[k][j]): exponents' powers, so the products are exact.
void largest_products(const double* ap, const double* bp, std::size_t steps, double* e_max) {
  __m256d lo[kChains], hi[kChains];
  for (std::size_t r = 0; r < kChains; ++r) lo[r] = _mm256_load_pd(e_max), hi[r] = _mm256_load_pd(e_max + 4);
  std::size_t kk = 0;
  for (; kk + kChains <= steps; kk += kChains) {
    for (std::size_t r = 0; r < kChains; ++r) {
      const __m256d a = _mm256_broadcast_sd(ap + kk + r);
      lo[r] = _mm256_max_pd(lo[r], _mm256_mul_pd(a, _mm256_loadu_pd(bp + (kk + r) * kPanel)));
      hi[r] = _mm256_max_pd(hi[r], _mm256_mul_pd(a, _mm256_loadu_pd(bp + (kk + r) * kPanel + 4)));
    }
  }
  for (; kk < steps; ++kk) {
    const __m256d a = _mm256_broadcast_sd(ap + kk);
    lo[0] = _mm256_max_pd(lo[0], _mm256_mul_pd(a, _mm256_loadu_pd(bp + kk * kPanel)));
    hi[0] = _mm256_max_pd(hi[0], _mm256_mul_pd(a, _mm256_loadu_pd(bp + kk * kPanel + 4)));
  }
  _mm256_store_pd(e_max, _mm256_max_pd(_mm256_max_pd(lo[0], lo[1]), _mm256_max_pd(lo[2], lo[3])));
  _mm256_store_pd(e_max + 4, _mm256_max_pd(_mm256_max_pd(hi[0], hi[1]), _mm256_max_pd(hi[2], hi[3])));
}

// sum[j] += Σ_k cut(av[k] · bv[k][j] · scale[j]): exact products, exact power-of-two scaling.
template <Model::Cut kCut>
void add_cut_products(const double* av, const double* bv, std::size_t steps, const double* scale, double* sum) {
  constexpr int kRound = (kCut == Model::Cut::truncate ? _MM_FROUND_TO_ZERO : _MM_FROUND_TO_NEAREST_INT) |
                         _MM_FROUND_NO_EXC;
  const __m256d scale_lo = _mm256_load_pd(scale), scale_hi = _mm256_load_pd(scale + 4);
  const auto term = [&](std::size_t kk, std::size_t half, __m256d s) {
    const __m256d a = _mm256_broadcast_sd(av + kk);
    return _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(a, _mm256_loadu_pd(bv + kk * kPanel + half)), s), kRound);
  };
  __m256d lo[kChains], hi[kChains];
  for (std::size_t r = 0; r < kChains; ++r) lo[r] = _mm256_setzero_pd(), hi[r] = _mm256_setzero_pd();
  std::size_t kk = 0;
  for (; kk + kChains <= steps; kk += kChains) {
    for (std::size_t r = 0; r < kChains; ++r) {
      lo[r] = _mm256_add_pd(lo[r], term(kk + r, 0, scale_lo));
      hi[r] = _mm256_add_pd(hi[r], term(kk + r, 4, scale_hi));
    }
  }
  for (; kk < steps; ++kk) {
    lo[0] = _mm256_add_pd(lo[0], term(kk, 0, scale_lo));
    hi[0] = _mm256_add_pd(hi[0], term(kk, 4, scale_hi));
  }
  const __m256d total_lo = _mm256_add_pd(_mm256_add_pd(lo[0], lo[1]), _mm256_add_pd(lo[2], lo[3]));
  const __m256d total_hi = _mm256_add_pd(_mm256_add_pd(hi[0], hi[1]), _mm256_add_pd(hi[2], hi[3]));
  _mm256_store_pd(sum, _mm256_add_pd(_mm256_load_pd(sum), total_lo));
  _mm256_store_pd(sum + 4, _mm256_add_pd(_mm256_load_pd(sum + 4), total_hi));
}
#else
void largest_products(const double* ap, const double* bp, std::size_t steps, double* e_max) {
  for (std::size_t kk = 0; kk < steps; ++kk) {
    for (std::size_t j = 0; j < kPanel; ++j) e_max[j] = std::max(e_max[j], ap[kk] * bp[kk * kPanel + j]);
  }
}

template <Model::Cut kCut>
void add_cut_products(const double* av, const double* bv, std::size_t steps, const double* scale, double* sum) {
  for (std::size_t kk = 0; kk < steps; ++kk) {
    for (std::size_t j = 0; j < kPanel; ++j) sum[j] += cut<kCut>(av[kk] * bv[kk * kPanel + j] * scale[j]);
  }
}
#endif

// One block FMA for a panel: c = normalize(cut(c) + Σ cut(a_k · b_kj)), cuts at 2^(e_max − bits).
// The two passes over the step's products (e_max, then the cut sum) run across the panel's columns.
template <Model::Cut kCut>
void block_fma(const Model& model, const double* av, const double* ap, const double* bv, const double* bp,
               std::size_t steps, double* c) {
  alignas(32) double e_max[kPanel], scale[kPanel], sum[kPanel];
  for (std::size_t j = 0; j < kPanel; ++j) e_max[j] = leading_power(c[j]);
  largest_products(ap, bp, steps, e_max);
  const double top = static_cast<double>(std::uint64_t{1} << model.bits);  // 2^bits
  for (std::size_t j = 0; j < kPanel; ++j) {
    scale[j] = e_max[j] == 0 ? 0 : top / e_max[j];  // 2^(bits − e_max): the last kept bit becomes 1
    sum[j] = cut<kCut>(c[j] * scale[j]);
  }
  add_cut_products<kCut>(av, bv, steps, scale, sum);
  for (std::size_t j = 0; j < kPanel; ++j) {
    c[j] = sum[j] == 0 ? 0 : normalize(sum[j], model.acc, kCut) * (e_max[j] / top);
  }
}

// The model's FP32 result for row i of A and one panel of B over K's stretch [lo, hi).
void chain(const Model& model, const double* av, const double* ap, const double* bv, const double* bp,
           std::size_t lo, std::size_t hi, float* result) {
  double c[kPanel] = {};
  float promoted[kPanel] = {};
  for (std::size_t k0 = lo; k0 < hi; k0 += model.group) {
    const std::size_t k1 = std::min(k0 + model.group, hi);
    if (model.cut == Model::Cut::truncate) {
      block_fma<Model::Cut::truncate>(model, av + k0, ap + k0, bv + k0 * kPanel, bp + k0 * kPanel, k1 - k0, c);
    } else {
      block_fma<Model::Cut::nearest>(model, av + k0, ap + k0, bv + k0 * kPanel, bp + k0 * kPanel, k1 - k0, c);
    }
    if (model.promote != 0 && ((k1 - lo) % model.promote == 0 || k1 == hi)) {
      for (std::size_t j = 0; j < kPanel; ++j) {
        promoted[j] += static_cast<float>(c[j]);  // one FP32 addition, nearest even
        c[j] = 0;
      }
    }
  }
  for (std::size_t j = 0; j < kPanel; ++j) result[j] = model.promote != 0 ? promoted[j] : static_cast<float>(c[j]);
}

// The split-K pieces' FP32 sum for row i and one panel.
void panel_sums(const Model& model, const double* av, const double* ap, const double* bv, const double* bp,
                std::size_t k, float* out) {
  const std::size_t tiles = (k + kKTile - 1) / kKTile;
  const std::size_t piece = std::max<std::size_t>(1, (tiles + model.split - 1) / model.split) * kKTile;
  std::fill(out, out + kPanel, 0.0f);
  for (std::size_t lo = 0; lo < k; lo += piece) {
    float part[kPanel];
    chain(model, av, ap, bv, bp, lo, std::min(lo + piece, k), part);
    for (std::size_t j = 0; j < kPanel; ++j) out[j] += part[j];
  }
}

// Outputs whose row or column holds a non-finite value: the IEEE sum of the products.
float non_finite_output(const Model& model, const EmulatedOperand& a, const EmulatedOperand& b, std::size_t i,
                        std::size_t j, std::size_t k) {
  double sum = 0;
  for (std::size_t kk = 0; kk < k; ++kk) {
    sum += static_cast<double>(input_value(model, a, i, kk)) * static_cast<double>(input_value(model, b, kk, j));
  }
  return static_cast<float>(sum);
}

}  // namespace

float round_to_bf16(float x) {
  if (std::isnan(x)) return x;
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF'0000u;  // nearest even; overflow carries to Inf
  return std::bit_cast<float>(u);
}

void emulated_gemm_general(const format::AccumulatorModel& model, std::size_t m, std::size_t n, std::size_t k,
                           const EmulatedOperand& a, const EmulatedOperand& b, float alpha, bool add, float* c,
                           std::size_t ldc) {
  if (!model.emulated()) throw std::invalid_argument("emulated_gemm: the fp32 model is the float GEMM's");
  if (m == 0 || n == 0) return;
  // Grown once and reused: no allocation per training step. Named through references, which the
  // pool's threads share (a thread_local named inside the parallel region would be each thread's own).
  thread_local Packed packs[2];
  Packed &packed_a = packs[0], &packed_b = packs[1];
  pack_a(model, a, m, k, packed_a);
  pack_b(model, b, k, n, packed_b);
  const std::size_t panels = (n + kPanel - 1) / kPanel;
#pragma omp parallel for schedule(static)
  for (std::size_t task = 0; task < m * panels; ++task) {
    const std::size_t i = task / panels, p = task % panels;
    float sums[kPanel];
    panel_sums(model, packed_a.value.data() + i * k, packed_a.power.data() + i * k,
               packed_b.value.data() + p * k * kPanel, packed_b.power.data() + p * k * kPanel, k, sums);
    for (std::size_t j = p * kPanel; j < std::min(n, (p + 1) * kPanel); ++j) {
      float sum = sums[j - p * kPanel];
      if (packed_a.non_finite[i] || packed_b.non_finite[j]) sum = non_finite_output(model, a, b, i, j, k);
      const float out = alpha * sum;
      c[i * ldc + j] = add ? c[i * ldc + j] + out : out;
    }
  }
}

void emulated_gemm(const format::AccumulatorModel& model, std::size_t m, std::size_t n, std::size_t k,
                   const EmulatedOperand& a, const EmulatedOperand& b, float alpha, bool add, float* c,
                   std::size_t ldc) {
  thread_local lanes::Packs lane_packs;
  thread_local std::vector<float> lane_sums;
  if (m == 0 || n == 0 || !lanes::covers(model) || !lanes::pack(a, b, m, n, k, lane_packs)) {
    return emulated_gemm_general(model, m, n, k, a, b, alpha, add, c, ldc);
  }
  std::vector<float>& sums = lane_sums;
  sums.resize(m * n);
  lanes::run(model, lane_packs, m, n, k, sums.data());
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const float out = alpha * sums[i * n + j];
      c[i * ldc + j] = add ? c[i * ldc + j] + out : out;
    }
  }
}

}  // namespace altgrad::ops::cpu
