#include "diag/attention_entropy.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "quant/chunked_reduction.hpp"

namespace altgrad::diag {
namespace {

// −Σ p ln p over one row (T). Entries equal to 0 contribute nothing; a negative entry gives NaN
// through the logarithm, so malformed rows do not pass unnoticed.
double row_entropy(const float* row, std::size_t T) {
  double h = 0;
  for (std::size_t k = 0; k < T; ++k) {
    const double p = row[k];
    if (p != 0) h -= p * std::log(p);
  }
  return h;
}

// Σ over the T rows of one (b, h) slice (T, T).
double slice_entropy_sum(const float* slice, std::size_t T) {
  double sum = 0;
  for (std::size_t t = 0; t < T; ++t) sum += row_entropy(slice + t * T, T);
  return sum;
}

}  // namespace

std::vector<double> attention_entropy_per_head(std::span<const float> probs, std::size_t B, std::size_t NH,
                                               std::size_t T) {
  if (probs.size() != B * NH * T * T) {
    throw std::invalid_argument("attention_entropy_per_head: probs has " + std::to_string(probs.size()) +
                                " elements, expected B·NH·T·T = " + std::to_string(B) + "·" + std::to_string(NH) +
                                "·" + std::to_string(T) + "·" + std::to_string(T));
  }
  // (B, NH): one sum per slice, each written by one thread.
  std::vector<double> slice_sums(B * NH);
  const std::size_t slices = B * NH;
#pragma omp parallel for schedule(static) if (slices > 1 && probs.size() >= quant::kStatisticsChunking.min_chunk)
  for (std::size_t slice = 0; slice < slices; ++slice) {
    slice_sums[slice] = slice_entropy_sum(probs.data() + slice * T * T, T);
  }

  std::vector<double> per_head(NH, 0.0);
  const double rows = static_cast<double>(B * T);
  for (std::size_t h = 0; h < NH; ++h) {
    double sum = 0;
    for (std::size_t b = 0; b < B; ++b) sum += slice_sums[b * NH + h];
    per_head[h] = rows > 0 ? sum / rows : std::numeric_limits<double>::quiet_NaN();
  }
  return per_head;
}

LayerEntropy layer_entropy(std::span<const double> per_head) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (per_head.empty()) return {kNaN, kNaN};
  double sum = 0;
  double min = per_head[0];
  for (const double h : per_head) {
    sum += h;
    if (h < min) min = h;
  }
  // Entropies are finite and non-negative, so a NaN sum means a NaN head; the minimum must not
  // hide it (comparisons with NaN are false).
  if (std::isnan(sum)) min = kNaN;
  return {sum / static_cast<double>(per_head.size()), min};
}

}  // namespace altgrad::diag
