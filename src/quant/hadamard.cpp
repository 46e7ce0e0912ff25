#include "quant/hadamard.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "format/philox.hpp"

namespace altgrad::quant {
namespace {

constexpr std::uint32_t kTransformerEngineSignMask = 0xD7E8u;

// Groups transformed at a time: 32 KB of doubles at n = 128.
constexpr std::size_t kColumnChunk = 32;

// Each of `width` groups of n values, held as the columns of n rows `width` wide, in place →
// group·D·H_n/√n, in double (the fast Walsh–Hadamard butterflies). A butterfly adds and subtracts
// whole rows, so its loop runs across the groups; each group's operations and their order are the
// same whatever `width` is.
void transform_lines(double* lines, std::size_t width, std::span<const float> signs) {
  const std::size_t n = signs.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < width; ++c) lines[i * width + c] *= signs[i];
  }
  for (std::size_t half = 1; half < n; half *= 2) {
    for (std::size_t start = 0; start < n; start += 2 * half) {
      for (std::size_t j = start; j < start + half; ++j) {
        double* a = lines + j * width;
        double* b = lines + (j + half) * width;
        for (std::size_t c = 0; c < width; ++c) {
          const double x = a[c], y = b[c];
          a[c] = x + y;
          b[c] = x - y;
        }
      }
    }
  }
  const double norm = 1.0 / std::sqrt(static_cast<double>(n));
  for (std::size_t i = 0; i < n * width; ++i) lines[i] *= norm;
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
  // kColumnChunk groups at a time, each a column of `lines`, so that the butterflies run across groups.
  const std::size_t groups = in.size() / n;
  const std::size_t chunks = (groups + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for schedule(static)
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const std::size_t first = chunk * kColumnChunk, width = std::min(kColumnChunk, groups - first);
    double lines[kHadamardSizes.back() * kColumnChunk];
    for (std::size_t c = 0; c < width; ++c) {
      for (std::size_t i = 0; i < n; ++i) lines[i * width + c] = in[(first + c) * n + i];
    }
    transform_lines(lines, width, signs);
    for (std::size_t c = 0; c < width; ++c) {
      for (std::size_t i = 0; i < n; ++i) out[(first + c) * n + i] = static_cast<float>(lines[i * width + c]);
    }
  }
}

void hadamard_columns(std::span<const float> in, std::span<float> out, std::size_t cols,
                      std::span<const float> signs) {
  const std::size_t n = signs.size();
  check_sizes(in, out);
  const std::size_t rows = cols == 0 ? 0 : in.size() / cols;
  check_hadamard_axis(n, rows);
  check_signs(signs);
  const std::size_t chunks = (cols + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for schedule(static)
  for (std::size_t task = 0; task < rows / n * chunks; ++task) {
    const std::size_t first_row = task / chunks * n, first_col = task % chunks * kColumnChunk;
    const std::size_t width = std::min(kColumnChunk, cols - first_col);
    double lines[kHadamardSizes.back() * kColumnChunk];
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t c = 0; c < width; ++c) lines[i * width + c] = in[(first_row + i) * cols + first_col + c];
    }
    transform_lines(lines, width, signs);
    for (std::size_t i = 0; i < n; ++i) {
      float* row = out.data() + (first_row + i) * cols + first_col;
      for (std::size_t c = 0; c < width; ++c) row[c] = static_cast<float>(lines[i * width + c]);
    }
  }
}

}  // namespace altgrad::quant
