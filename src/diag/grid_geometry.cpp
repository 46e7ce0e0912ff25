#include "diag/grid_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "format/codec.hpp"
#include "format/effective_grid.hpp"
#include "format/grid.hpp"
#include "format/rounding.hpp"

namespace altgrad::diag {
namespace {

// The position of x's nearest grid value along the ordered grid: signed magnitude of its code.
std::int64_t grid_index(const format::Format& f, float x, float scale) {
  const std::uint32_t code = format::encode(f, format::Rounding::nearest_even, x * scale);
  const auto magnitude = static_cast<std::int64_t>(code & f.magnitude_mask());
  return format::is_negative_code(f, code) ? -magnitude : magnitude;
}

// Running mean and co-moments (Welford), in double, in element order.
struct Covariance {
  double n = 0, mean_x = 0, mean_y = 0, m2_x = 0, m2_y = 0, c_xy = 0;
  void add(double x, double y) {
    n += 1;
    const double dx = x - mean_x;
    mean_x += dx / n;
    const double dy = y - mean_y;
    mean_y += dy / n;
    m2_x += dx * (x - mean_x);
    m2_y += dy * (y - mean_y);
    c_xy += dx * (y - mean_y);
  }
  double correlation() const {
    return n >= 2 && m2_x > 0 && m2_y > 0 ? c_xy / std::sqrt(m2_x * m2_y) : std::nan("");
  }
};

std::size_t delta_bin(std::int64_t delta) { return static_cast<std::size_t>(std::clamp<std::int64_t>(delta, -3, 3) + 3); }

}  // namespace

GridGeometry grid_geometry(const optim::WeightGrid& grid, std::span<const float> before, std::span<const float> after,
                           std::span<const float> intended, std::span<const float> grad) {
  const std::size_t n = before.size();
  if (after.size() != n || intended.size() != n || grad.size() != n) {
    throw std::invalid_argument("grid_geometry: tensors of different sizes");
  }
  GridGeometry out;
  out.count = n;
  if (n == 0) return out;
  std::vector<optim::GridSpan> spans(optim::span_count(grid, n));
  optim::grid_spans(grid, before, spans);
  const format::Format& f = grid.format;
  // Grid values in use, by signed index: [−mask, mask] onto [0, 2·mask].
  const auto mask = static_cast<std::int64_t>(f.magnitude_mask());
  std::vector<bool> used(static_cast<std::size_t>(2 * mask + 1), false);
  std::uint64_t underflow = 0, changed = 0, used_count = 0;
  double misalignment = 0, dot = 0, applied_sq = 0, grad_sq = 0;
  Covariance delta, grad_stiffness;
  for (const auto& span : spans) {
    for (std::size_t i = span.begin; i < span.end; ++i) {
      const float s = span.scale;
      const float stiffness = format::scaled_spacing(f, before[i], s);
      underflow += std::fabs(intended[i]) < 0.5f * stiffness;
      const std::int64_t from = grid_index(f, before[i], s), to = grid_index(f, after[i], s);
      changed += from != to;
      ++out.delta_code[delta_bin(to - from)];
      delta.add(static_cast<double>(to - from), 0.0);
      if (grad[i] != 0 && std::isfinite(grad[i])) {
        grad_stiffness.add(std::log2(std::fabs(static_cast<double>(grad[i]))), std::log2(static_cast<double>(stiffness)));
      }
      const float nearest = format::decode(f, format::encode(f, format::Rounding::nearest_even, after[i] * s)) / s;
      misalignment += std::fabs(static_cast<double>(after[i]) - nearest) / format::scaled_spacing(f, after[i], s);
      const auto slot = static_cast<std::size_t>(to + mask);
      if (!used[slot]) {
        used[slot] = true;
        ++used_count;
      }
      const double applied = static_cast<double>(after[i]) - before[i];
      dot += applied * -static_cast<double>(grad[i]);
      applied_sq += applied * applied;
      grad_sq += static_cast<double>(grad[i]) * grad[i];
      int exponent = 0;
      std::frexp(stiffness, &exponent);
      ++out.log2_stiffness[exponent - 1];
    }
  }
  const auto fraction = [&](std::uint64_t k) { return static_cast<double>(k) / static_cast<double>(n); };
  out.update_underflow = fraction(underflow);
  out.update_success = fraction(changed);
  out.misalignment = misalignment / static_cast<double>(n);
  out.delta_code_mean = delta.mean_x;
  out.delta_code_variance = delta.m2_x / static_cast<double>(n);
  out.grad_stiffness_correlation = grad_stiffness.correlation();
  out.capacity = static_cast<double>(used_count) / format::grid_facts(f).finite_values;
  out.alignment = applied_sq > 0 && grad_sq > 0 ? dot / std::sqrt(applied_sq * grad_sq) : 0.0;
  for (const auto& [bucket, count] : out.log2_stiffness) {
    const double p = fraction(count);
    out.stiffness_entropy -= p * std::log2(p);
  }
  return out;
}

}  // namespace altgrad::diag
