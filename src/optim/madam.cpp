#include "optim/madam.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "format/bits.hpp"
#include "quant/random_words.hpp"

namespace altgrad::optim {
namespace {

// std::clamp by value: selects the compiler can vectorize (std::clamp's references get in the way).
inline float clamp_value(float x, float lo, float hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

// 2^k for k in [−126, 127], as a normal FP32 number, without a branch.
inline float exp2_normal(int k) { return format::bits_float(static_cast<std::uint32_t>(k + 127) << 23); }

// e^x for |x| ≤ 80 to within 2 ulp, in arithmetic the compiler vectorizes (std::exp is a library
// call it will not): x = n·ln 2 + r with |r| ≤ ln 2 / 2 (ln 2 split in two so n·ln2_hi is exact),
// e^r by its degree-7 Taylor polynomial (truncation below 2^−29 relative), times 2^n. Madam's
// exponents are at most lr·g_bound in size.
inline float exp_vectorizable(float x) {
  constexpr float kLog2e = 1.44269504f, kLn2Hi = 0.693145752f, kLn2Lo = 1.42860677e-6f;
  x = clamp_value(x, -80.0f, 80.0f);
  // Round to nearest by adding and subtracting 1.5·2^23 (|x·log2 e| < 2^22): no library call.
  constexpr float kRounder = 12582912.0f;
  const float n = (x * kLog2e + kRounder) - kRounder;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float poly = 1.0f / 5040.0f;
  poly = poly * r + 1.0f / 720.0f;
  poly = poly * r + 1.0f / 120.0f;
  poly = poly * r + 1.0f / 24.0f;
  poly = poly * r + 1.0f / 6.0f;
  poly = poly * r + 0.5f;
  poly = poly * r + 1.0f;
  poly = poly * r + 1.0f;
  return poly * exp2_normal(static_cast<int>(n));
}

}  // namespace

Madam::Madam(std::size_t parameter_count, const AdamWConfig& adamw, const BitSpaceConfig& config,
             std::vector<ParameterRange> ranges, bool integer_exponents)
    : BitSpaceOptimizer(integer_exponents ? "madam_int" : "madam", parameter_count, adamw, config, std::move(ranges)),
      integer_(integer_exponents),
      bound_(add_state("weight_bound")) {
  if (!(config.madam_p_scale > 0.0f) || !(config.madam_g_bound > 0.0f) || !(config.madam_beta >= 0.0f) ||
      !(config.madam_beta < 1.0f)) {
    throw std::invalid_argument(std::string(name()) + ": madam_p_scale and madam_g_bound must be > 0 and madam_beta in [0, 1)");
  }
}

std::vector<Hyperparameter> Madam::own_hyperparameters() const {
  return {{"madam_p_scale", config().madam_p_scale},
          {"madam_g_bound", config().madam_g_bound},
          {"madam_beta", config().madam_beta}};
}

void Madam::update_range(std::size_t, const ParameterRange& range, std::span<const GridSpan>, float* p,
                         const float* g, const AdamScalars& s, std::int64_t step) {
  float* v = exp_avg_sq() + range.offset;
  float* bound = state_values(bound_).data() + range.offset;
  if (step == 1 && range.size > 0) {
    // B = p_scale · RMS of the tensor before its first update, summed in order: thread invariant.
    double sum = 0.0;
    for (std::size_t i = 0; i < range.size; ++i) sum += static_cast<double>(p[i]) * p[i];
    const auto b = static_cast<float>(config().madam_p_scale * std::sqrt(sum / static_cast<double>(range.size)));
    std::fill(bound, bound + range.size, b);
  }
  const float beta = config().madam_beta;
  const auto bias_correction = static_cast<float>(1.0 - std::pow(static_cast<double>(beta), static_cast<double>(step)));
  const float g_bound = config().madam_g_bound;
  const float lr = s.lr;
  const bool integer = integer_;
  const float octaves_per_nat = static_cast<float>(1.0 / std::numbers::ln2);
  const std::uint64_t key = rounding_key();
  const auto stream = static_cast<std::uint64_t>(step);
  const std::size_t offset = range.offset;
  const std::size_t chunks = (range.size + kMaxGridSpan - 1) / kMaxGridSpan;
#pragma omp parallel for schedule(static)
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * kMaxGridSpan, end = std::min(range.size, begin + kMaxGridSpan);
    std::uint32_t words[kMaxGridSpan];
    if (integer) quant::fill_random(key, stream, offset + begin, {words, end - begin});
    float exponent[kMaxGridSpan];
#pragma omp simd
    for (std::size_t i = begin; i < end; ++i) {
      v[i] = beta * v[i] + (1.0f - beta) * g[i] * g[i];
      const float rms = std::sqrt(v[i] / bias_correction);
      // 0/0 (no gradient yet) reads as 0, as the reference's NaN → 0; computed unconditionally so
      // the loop has no branch.
      const float quotient = clamp_value(g[i] / rms, -g_bound, g_bound);
      const float normalized = rms > 0.0f ? quotient : 0.0f;
      const float sign = static_cast<float>(p[i] > 0.0f) - static_cast<float>(p[i] < 0.0f);
      exponent[i - begin] = -lr * normalized * sign;
    }
    if (const auto sink = intended_sink(); integer && !sink.empty()) {
      // madam_int intended Madam's multiplicative step before rounding it to whole octaves.
      for (std::size_t i = begin; i < end; ++i) sink[offset + i] = p[i] * (std::exp(exponent[i - begin]) - 1.0f);
    }
    if (integer) {
      // At most 126 octaves a step; multiplying by 2^k is exact (rounded once where the result is
      // subnormal, as ldexp).
#pragma omp simd
      for (std::size_t i = begin; i < end; ++i) {
        const float octaves =
            clamp_value(stochastic_round(exponent[i - begin] * octaves_per_nat, words[i - begin]), -126.0f, 126.0f);
        p[i] = clamp_value(p[i] * exp2_normal(static_cast<int>(octaves)), -bound[i], bound[i]);
      }
    } else {
#pragma omp simd
      for (std::size_t i = begin; i < end; ++i) {
        p[i] = clamp_value(p[i] * exp_vectorizable(exponent[i - begin]), -bound[i], bound[i]);
      }
    }
  }
}

}  // namespace altgrad::optim
