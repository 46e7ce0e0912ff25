#include "diag/gradient_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

struct SignalAndNoise {
  double signal = 0;  // Σ g32²
  double noise = 0;   // Σ (g_q − g32)²

  SignalAndNoise& operator+=(const SignalAndNoise& other) {
    signal += other.signal;
    noise += other.noise;
    return *this;
  }
};

}  // namespace

double squared_l2_norm(std::span<const float> x) {
  return quant::reduce_in_chunks<double>(x.size(), [x](std::size_t begin, std::size_t end) {
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const double v = x[i];
      sum += v * v;
    }
    return sum;
  });
}

double max_abs(std::span<const float> x) {
  double largest = 0.0;
  for (const float v : x) {
    if (std::isnan(v)) return std::nan("");
    largest = std::max(largest, static_cast<double>(std::fabs(v)));
  }
  return largest;
}

double snr_db(std::span<const float> g_quantized, std::span<const float> g_reference) {
  if (g_quantized.size() != g_reference.size()) {
    throw std::invalid_argument("snr_db: quantized gradient has " + std::to_string(g_quantized.size()) +
                                " elements but the reference has " + std::to_string(g_reference.size()));
  }
  const auto sums = quant::reduce_in_chunks<SignalAndNoise>(
      g_reference.size(), [g_quantized, g_reference](std::size_t begin, std::size_t end) {
        SignalAndNoise s;
        for (std::size_t i = begin; i < end; ++i) {
          const double reference = g_reference[i];
          const double error = static_cast<double>(g_quantized[i]) - reference;
          s.signal += reference * reference;
          s.noise += error * error;
        }
        return s;
      });
  // Squares of floats cannot overflow a double sum, so a non-finite sum means a non-finite input:
  // a NaN or Inf in g_quantized always reaches the noise sum, one in g_reference the signal sum.
  if (!std::isfinite(sums.signal) || !std::isfinite(sums.noise)) return std::numeric_limits<double>::quiet_NaN();
  if (sums.noise == 0) return std::numeric_limits<double>::infinity();
  if (sums.signal == 0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(sums.signal / sums.noise);
}

}  // namespace altgrad::diag
