#include "quant/hadamard.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "format/philox.hpp"

namespace altgrad::quant {
namespace {

constexpr std::uint32_t kTransformerEngineSignMask = 0xD7E8u;

// group (n values, in place) → group·D·H_n/√n, in double.
void transform_group(double* group, std::span<const float> signs) {
  const std::size_t n = signs.size();
  for (std::size_t i = 0; i < n; ++i) group[i] *= signs[i];
  for (std::size_t half = 1; half < n; half *= 2) {
    for (std::size_t start = 0; start < n; start += 2 * half) {
      for (std::size_t j = start; j < start + half; ++j) {
        const double a = group[j], b = group[j + half];
        group[j] = a + b;
        group[j + half] = a - b;
      }
    }
  }
  const double norm = 1.0 / std::sqrt(static_cast<double>(n));
  for (std::size_t i = 0; i < n; ++i) group[i] *= norm;
}

void check_signs(std::span<const float> signs) {
  for (const float s : signs) {
    if (s != 1.0f && s != -1.0f) throw std::invalid_argument("Hadamard signs must be +1 or -1");
  }
}

void check_sizes(std::span<const float> in, std::span<float> out) {
  if (in.size() != out.size()) {
    throw std::invalid_argument("Hadamard transform: " + std::to_string(in.size()) + " inputs but " +
                                std::to_string(out.size()) + " outputs");
  }
}

}  // namespace

bool valid_hadamard_size(std::size_t n) {
  return std::find(kHadamardSizes.begin(), kHadamardSizes.end(), n) != kHadamardSizes.end();
}

std::vector<float> transformer_engine_signs() {
  std::vector<float> signs(16);
  for (std::size_t i = 0; i < signs.size(); ++i) signs[i] = (kTransformerEngineSignMask >> i) & 1u ? -1.0f : 1.0f;
  return signs;
}

std::vector<float> random_signs(std::size_t n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<float> signs(n);
  for (std::size_t i = 0; i < n; ++i) signs[i] = format::philox_word(seed, stream, i) & 1u ? -1.0f : 1.0f;
  return signs;
}

void check_hadamard_axis(std::size_t n, std::size_t axis_length) {
  if (!valid_hadamard_size(n)) {
    throw std::invalid_argument("Hadamard size " + std::to_string(n) + " is not one of 16, 32, 64, 128");
  }
  if (axis_length % n != 0) {
    throw std::invalid_argument("Hadamard size " + std::to_string(n) + " does not divide the reduction axis (" +
                                std::to_string(axis_length) + " elements)");
  }
}

void hadamard_rows(std::span<const float> in, std::span<float> out, std::size_t row_length,
                   std::span<const float> signs) {
  const std::size_t n = signs.size();
  check_hadamard_axis(n, row_length);
  check_signs(signs);
  check_sizes(in, out);
  const std::size_t groups = in.size() / n;
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups; ++g) {
    double group[kHadamardSizes.back()];
    std::copy(in.begin() + static_cast<std::ptrdiff_t>(g * n), in.begin() + static_cast<std::ptrdiff_t>((g + 1) * n),
              group);
    transform_group(group, signs);
    for (std::size_t i = 0; i < n; ++i) out[g * n + i] = static_cast<float>(group[i]);
  }
}

void hadamard_columns(std::span<const float> in, std::span<float> out, std::size_t cols,
                      std::span<const float> signs) {
  const std::size_t n = signs.size();
  check_sizes(in, out);
  const std::size_t rows = cols == 0 ? 0 : in.size() / cols;
  check_hadamard_axis(n, rows);
  check_signs(signs);
#pragma omp parallel for schedule(static)
  for (std::size_t block = 0; block < rows / n; ++block) {
    double group[kHadamardSizes.back()];
    for (std::size_t c = 0; c < cols; ++c) {
      for (std::size_t i = 0; i < n; ++i) group[i] = in[(block * n + i) * cols + c];
      transform_group(group, signs);
      for (std::size_t i = 0; i < n; ++i) out[(block * n + i) * cols + c] = static_cast<float>(group[i]);
    }
  }
}

}  // namespace altgrad::quant
