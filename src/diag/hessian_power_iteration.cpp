#include "diag/hessian_power_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "format/philox.hpp"
#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

// w + e·v rounded once to FP32: the buffer's value at a perturbed point. The same function gives the
// displacement actually applied (below), so FP32 rounding of w ± εv costs no accuracy.
inline float displaced(float w, float v, double e) {
  return static_cast<float>(static_cast<double>(w) + e * static_cast<double>(v));
}

// Sums of products over the buffer, reduced in chunk order.
struct Sums {
  double dd = 0, dh = 0, hh = 0;
  Sums& operator+=(const Sums& o) {
    dd += o.dd;
    dh += o.dh;
    hh += o.hh;
    return *this;
  }
};

struct Sum {
  double value = 0;
  Sum& operator+=(const Sum& o) {
    value += o.value;
    return *this;
  }
};

}  // namespace

HessianPowerIteration::HessianPowerIteration(std::size_t parameters)
    : w_(parameters), v_(parameters), plus_(parameters), minus_(parameters) {}

void HessianPowerIteration::perturb(std::span<float> params, float sign_epsilon) const {
  const auto n = static_cast<std::ptrdiff_t>(params.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) params[i] = displaced(w_[i], v_[i], sign_epsilon);
}

HessianEstimate HessianPowerIteration::estimate(std::span<float> params, const GradientAt& gradient,
                                                const HessianOptions& options) {
  const std::size_t n = w_.size();
  if (params.size() != n) {
    throw std::invalid_argument("Hessian power iteration: built for " + std::to_string(n) + " parameters, given " +
                                std::to_string(params.size()));
  }
  if (!(options.epsilon > 0.0) || options.iterations < 1) {
    throw std::invalid_argument("Hessian power iteration: needs epsilon > 0 and at least one iteration");
  }
  std::copy(params.begin(), params.end(), w_.begin());
  // Start: independent uniform components in (−1/2, 1/2), normalized. Almost surely not orthogonal
  // to the top eigenvector.
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t word = format::philox_word(options.key, options.stream, i);
    v_[i] = static_cast<float>((static_cast<double>(word) + 0.5) * 0x1p-32 - 0.5);
  }
  const double start_norm = std::sqrt(quant::reduce_in_chunks<Sum>(n, [&](std::size_t b, std::size_t e) {
    Sum s;
    for (std::size_t i = b; i < e; ++i) s.value += static_cast<double>(v_[i]) * v_[i];
    return s;
  }).value);
  for (float& x : v_) x = static_cast<float>(x / start_norm);

  const auto eps = static_cast<float>(options.epsilon);
  const double two_eps = 2.0 * static_cast<double>(eps);
  HessianEstimate out;
  for (int it = 0; it < options.iterations; ++it) {
    perturb(params, eps);
    gradient(plus_);
    perturb(params, -eps);
    gradient(minus_);
    // Hv into plus_; d = (w+εv − (w−εv)) / 2ε as FP32 stored them, the probe actually applied.
    const auto d_at = [&](std::size_t i) {
      return (static_cast<double>(displaced(w_[i], v_[i], eps)) - displaced(w_[i], v_[i], -eps)) / two_eps;
    };
    const Sums s = quant::reduce_in_chunks<Sums>(n, [&](std::size_t b, std::size_t e) {
      Sums part;
      for (std::size_t i = b; i < e; ++i) {
        const double hv = (static_cast<double>(plus_[i]) - minus_[i]) / two_eps;
        plus_[i] = static_cast<float>(hv);
        const double d = d_at(i);
        part.dd += d * d;
        part.dh += d * plus_[i];
        part.hh += static_cast<double>(plus_[i]) * plus_[i];
      }
      return part;
    });
    out.iterations = it + 1;
    out.eigenvalue = s.dh / s.dd;
    // ‖Hv − λd‖² = ‖Hv‖² − 2λ dᵀHv + λ² ‖d‖², summed directly rather than by that cancellation.
    const double lambda = out.eigenvalue;
    const double r2 = quant::reduce_in_chunks<Sum>(n, [&](std::size_t b, std::size_t e) {
      Sum part;
      for (std::size_t i = b; i < e; ++i) {
        const double r = plus_[i] - lambda * d_at(i);
        part.value += r * r;
      }
      return part;
    }).value;
    out.residual = lambda == 0.0 ? std::numeric_limits<double>::quiet_NaN()
                                 : std::sqrt(r2) / (std::abs(lambda) * std::sqrt(s.dd));
    const double norm = std::sqrt(s.hh);
    if (!(norm > 0.0)) break;  // Hv = 0 (or not finite): nothing to iterate on
    for (std::size_t i = 0; i < n; ++i) v_[i] = static_cast<float>(plus_[i] / norm);
  }
  std::copy(w_.begin(), w_.end(), params.begin());
  return out;
}

}  // namespace altgrad::diag
