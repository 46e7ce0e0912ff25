#pragma once
// MX quantization written from the OCP Microscaling Formats spec v1.0 (section 6.3: shared
// exponent = floor(log2 amax) − emax of the element format, elements x / 2^shared quantized to
// the element format), in double, with every element's block found by brute force: the elements
// of its line along the reduction axis whose position falls in the same run and the same block.
// It shares nothing with the quantizer's blocking code; only the element codec (format::encode,
// format::decode, itself tested exhaustively) is common.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "format/philox.hpp"

namespace altgrad::precision_test {

struct MxAxis {
  bool along_rows;   // blocks run down the columns (else along each row)
  std::size_t run;   // no block crosses a multiple of run along that axis
  std::size_t block = 32;
};

// Values whose magnitudes change along both axes (octaves of 2 spread over `octaves` binades
// around `magnitude`), so blocks along rows and along columns get different scales.
inline std::vector<float> graded_values(std::size_t rows, std::size_t cols, std::uint64_t key, std::uint64_t stream,
                                        double magnitude, int octaves) {
  std::vector<float> v(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const double u = format::philox_word(key, stream, r * cols + c) / 4294967296.0;
      const int octave = static_cast<int>((r * 5 + c * 3) % static_cast<std::size_t>(octaves)) - octaves / 2;
      v[r * cols + c] = static_cast<float>(std::ldexp(magnitude * (2.0 * u - 1.0), octave));
    }
  }
  return v;
}

// floor(log2 |v|) for finite nonzero v.
inline int floor_log2(double v) {
  int e = 0;
  std::frexp(v, &e);  // v = m · 2^e, 0.5 ≤ |m| < 1
  return e - 1;
}

// x is row-major (rows, cols); returns the dequantized values.
inline std::vector<double> mx_reference(const std::vector<float>& x, std::size_t rows, std::size_t cols,
                                        const MxAxis& axis, const char* element_format) {
  const format::Format f = format::make_format(format::parse_format(element_format));
  const int emax = floor_log2(f.max_finite());
  std::vector<double> q(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      // Position along the reduction axis, and the line of elements that share the other index.
      const std::size_t at = axis.along_rows ? r : c, length = axis.along_rows ? rows : cols;
      const auto same_block = [&](std::size_t other) {
        return other / axis.run == at / axis.run && (other % axis.run) / axis.block == (at % axis.run) / axis.block;
      };
      double amax = 0;
      for (std::size_t other = 0; other < length; ++other) {
        if (!same_block(other)) continue;
        const float v = axis.along_rows ? x[other * cols + c] : x[r * cols + other];
        if (std::isfinite(v)) amax = std::max(amax, std::fabs(static_cast<double>(v)));
      }
      const int shared = amax > 0 ? std::clamp(floor_log2(amax) - emax, -127, 127) : 0;
      const float scaled = static_cast<float>(std::ldexp(static_cast<double>(x[r * cols + c]), -shared));
      const float element = format::decode(f, format::encode(f, format::Rounding::nearest_even, scaled));
      q[r * cols + c] = std::ldexp(static_cast<double>(element), shared);
    }
  }
  return q;
}

// max |got − want| relative to max |want|.
inline double relative_gap(std::span<const float> got, const std::vector<double>& want) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    gap = std::max(gap, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return gap / scale;
}

}  // namespace altgrad::precision_test
