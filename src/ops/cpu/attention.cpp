#include "ops/cpu/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ops/cpu/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"

namespace altgrad::ops::cpu {
namespace {

std::size_t head_size(const char* kernel, std::size_t C, std::size_t NH) {
  require_positive(kernel, "C", C);
  require_positive(kernel, "NH", NH);
  if (C % NH != 0) {
    throw std::invalid_argument(std::string(kernel) + ": NH = " + std::to_string(NH) +
                                " does not divide C = " + std::to_string(C));
  }
  return C / NH;
}

// q·k and dy·v dominate the attention passes. One running sum is a chain of dependent adds that
// the compiler may not reorder (no -ffast-math); kLanes independent partial sums, combined in a
// fixed order, become SIMD lanes and still give the same bits on every run.
template <typename Scalar>
Scalar dot(const Scalar* a, const Scalar* b, std::size_t n) {
  constexpr std::size_t kLanes = 8;
  std::array<Scalar, kLanes> lanes{};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) lanes[0] += a[i] * b[i];
  Scalar sum = 0;
  for (const Scalar lane : lanes) sum += lane;
  return sum;
}

template <typename Scalar>
Scalar score_scale(std::size_t hs) {
  return Scalar{1} / std::sqrt(static_cast<Scalar>(hs));
}

// One (b, h) pair. Position t's q, k and v for this head are at qkv + t·3C + {0, C, 2C}, its output
// at out + t·C, its row of probabilities at probs + t·T.
template <typename Scalar>
void head_forward(Scalar* out, Scalar* probs, const Scalar* qkv, std::size_t T, std::size_t C, std::size_t hs) {
  const std::size_t stride = 3 * C;
  const Scalar scale = score_scale<Scalar>(hs);
  for (std::size_t t = 0; t < T; ++t) {
    const Scalar* q = qkv + t * stride;
    Scalar* p = probs + t * T;
    // Scores go into the probability row and are turned into probabilities in place; subtracting
    // the row maximum keeps exp from overflowing.
    Scalar max_score = -std::numeric_limits<Scalar>::infinity();
    for (std::size_t s = 0; s <= t; ++s) {
      p[s] = dot(q, qkv + s * stride + C, hs) * scale;
      max_score = std::max(max_score, p[s]);
    }
    Scalar sum = 0;
    for (std::size_t s = 0; s <= t; ++s) {
      p[s] = std::exp(p[s] - max_score);
      sum += p[s];
    }
    const Scalar inverse_sum = Scalar{1} / sum;
    for (std::size_t s = 0; s <= t; ++s) p[s] *= inverse_sum;
    std::fill(p + t + 1, p + T, Scalar{0});

    Scalar* y = out + t * C;
    std::fill(y, y + hs, Scalar{0});
    for (std::size_t s = 0; s <= t; ++s) {
      const Scalar* v = qkv + s * stride + 2 * C;
      for (std::size_t i = 0; i < hs; ++i) y[i] += p[s] * v[i];
    }
  }
}

// One (b, h) pair, laid out as in head_forward; dqkv like qkv, dout like out.
template <typename Scalar>
void head_backward(Scalar* dqkv, const Scalar* dout, const Scalar* qkv, const Scalar* probs, std::size_t T,
                   std::size_t C, std::size_t hs) {
  const std::size_t stride = 3 * C;
  const Scalar scale = score_scale<Scalar>(hs);
  for (std::size_t t = 0; t < T; ++t) {
    const Scalar* q = qkv + t * stride;
    Scalar* dq = dqkv + t * stride;
    const Scalar* dy = dout + t * C;
    const Scalar* p = probs + t * T;
    // Softmax backward: dscore_s = p_s · (dp_s − Σ_j p_j dp_j) with dp_s = dy · v_s. The sum is
    // needed before the first dscore, so dp is computed twice rather than kept in a scratch row:
    // no allocation, no workspace argument.
    Scalar p_dp = 0;
    for (std::size_t s = 0; s <= t; ++s) p_dp += p[s] * dot(dy, qkv + s * stride + 2 * C, hs);
    for (std::size_t s = 0; s <= t; ++s) {
      const Scalar* k = qkv + s * stride + C;
      const Scalar* v = k + C;
      Scalar* dk = dqkv + s * stride + C;
      Scalar* dv = dk + C;
      const Scalar dscore = p[s] * (dot(dy, v, hs) - p_dp) * scale;
      for (std::size_t i = 0; i < hs; ++i) {
        dq[i] += dscore * k[i];
        dk[i] += dscore * q[i];
        dv[i] += p[s] * dy[i];
      }
    }
  }
}

}  // namespace

template <typename Scalar>
void attention_forward(std::span<Scalar> out, std::span<Scalar> probs, std::span<const Scalar> qkv, std::size_t B,
                       std::size_t T, std::size_t C, std::size_t NH) {
  constexpr const char* kernel = "attention_forward";
  const std::size_t hs = head_size(kernel, C, NH);
  require_size(kernel, "out", out.size(), B * T * C);
  require_size(kernel, "probs", probs.size(), B * NH * T * T);
  require_size(kernel, "qkv", qkv.size(), B * T * 3 * C);

#pragma omp parallel for schedule(static) if (B * T * T * C / 2 >= kMinParallelWork)
  for (std::size_t bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = bh / NH;
    const std::size_t h = bh % NH;
    head_forward(out.data() + b * T * C + h * hs, probs.data() + bh * T * T, qkv.data() + b * T * 3 * C + h * hs, T, C,
                 hs);
  }
}

template <typename Scalar>
void attention_backward(std::span<Scalar> dqkv, std::span<const Scalar> dout, std::span<const Scalar> qkv,
                        std::span<const Scalar> probs, std::size_t B, std::size_t T, std::size_t C, std::size_t NH) {
  constexpr const char* kernel = "attention_backward";
  const std::size_t hs = head_size(kernel, C, NH);
  require_size(kernel, "dqkv", dqkv.size(), B * T * 3 * C);
  require_size(kernel, "dout", dout.size(), B * T * C);
  require_size(kernel, "qkv", qkv.size(), B * T * 3 * C);
  require_size(kernel, "probs", probs.size(), B * NH * T * T);

#pragma omp parallel for schedule(static) if (B * T * T * C / 2 >= kMinParallelWork)
  for (std::size_t bh = 0; bh < B * NH; ++bh) {
    const std::size_t b = bh / NH;
    const std::size_t h = bh % NH;
    head_backward(dqkv.data() + b * T * 3 * C + h * hs, dout.data() + b * T * C + h * hs,
                  qkv.data() + b * T * 3 * C + h * hs, probs.data() + bh * T * T, T, C, hs);
  }
}

template void attention_forward<float>(std::span<float>, std::span<float>, std::span<const float>, std::size_t,
                                       std::size_t, std::size_t, std::size_t);
template void attention_forward<double>(std::span<double>, std::span<double>, std::span<const double>, std::size_t,
                                        std::size_t, std::size_t, std::size_t);
template void attention_backward<float>(std::span<float>, std::span<const float>, std::span<const float>,
                                        std::span<const float>, std::size_t, std::size_t, std::size_t, std::size_t);
template void attention_backward<double>(std::span<double>, std::span<const double>, std::span<const double>,
                                         std::span<const double>, std::size_t, std::size_t, std::size_t, std::size_t);

}  // namespace altgrad::ops::cpu
