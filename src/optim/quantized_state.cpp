#include "optim/quantized_state.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "format/codec.hpp"
#include "quant/random_words.hpp"

namespace altgrad::optim {
namespace {

// torchao's floor on the group's amax: an all-zero group still gets a finite, positive scale.
constexpr float kStateAmaxFloor = 1e-12f;
// Codes are computed this many at a time into a stack buffer, then stored as 1 or 2 bytes each.
constexpr std::size_t kStateEncodeChunk = 256;

// Codes of the group's values, one rounding mode per instantiation so the loop has no dispatch.
// The codec's short paths for formats with a simple grid (tested bit for bit against
// round_to_grid and code_of_grid_value) give the same codes in a fraction of the operations.
template <format::Rounding R>
void encode_state_values(const format::Format& f, const float* values, std::size_t count, float d,
                         const std::uint32_t* random, std::uint32_t* out) {
  const float top = f.max_finite();
  const bool simple_grid = format::has_simple_grid(f), simple_code = format::has_simple_code(f);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t y = format::float_bits(std::clamp(values[k] / d, -top, top));
    std::uint32_t bits = 0;
    if constexpr (R == format::Rounding::nearest_even) {
      bits = simple_grid ? format::round_nearest_even_simple(f, y).bits : format::round_to_grid<R>(f, y, 0).bits;
    } else if constexpr (R == format::Rounding::stochastic) {
      bits = simple_grid ? format::round_stochastic_simple(f, y, random[k]).bits
                         : format::round_to_grid<R>(f, y, random[k]).bits;
    } else {
      bits = format::round_to_grid<R>(f, y, format::is_stochastic(R) ? random[k] : 0u).bits;
    }
    const bool finite = (bits & 0x7FFF'FFFFu) < 0x7F80'0000u;
    out[k] = simple_code && finite ? format::code_of_simple_grid_value(f, bits) : format::code_of_grid_value(f, bits);
  }
}

using StateEncoder = void (*)(const format::Format&, const float*, std::size_t, float, const std::uint32_t*,
                              std::uint32_t*);

// Indexed by format::Rounding, in its enum order.
constexpr StateEncoder kStateEncoders[] = {
    &encode_state_values<format::Rounding::nearest_even>,    &encode_state_values<format::Rounding::nearest_away>,
    &encode_state_values<format::Rounding::toward_zero>,     &encode_state_values<format::Rounding::toward_positive>,
    &encode_state_values<format::Rounding::toward_negative>, &encode_state_values<format::Rounding::odd>,
    &encode_state_values<format::Rounding::stochastic>,      &encode_state_values<format::Rounding::stochastic_equal>,
};
static_assert(std::size(kStateEncoders) == std::size(format::kAllRoundings));

}  // namespace

float group_scale(const format::Format& f, float amax) {
  const float d = std::max(amax, kStateAmaxFloor) / f.max_finite();
  return std::isfinite(d) ? std::max(d, std::numeric_limits<float>::min()) : d;
}

QuantizedState::QuantizedState(std::string name, const format::Format& f, std::string format_name, StateGroups groups,
                               std::size_t size)
    : name_(std::move(name)),
      format_(f),
      format_name_(std::move(format_name)),
      groups_(std::move(groups)),
      size_(size),
      codes_(size * code_bytes(), 0),
      scales_(groups_.count(), 1.0f),
      code_values_(f.code_count()) {
  for (std::uint32_t c = 0; c < f.code_count(); ++c) code_values_[c] = format::decode(f, c);
  // Code 0 is +0 in every format with a zero. fnu formats have none: their smallest value under the
  // smallest scale, 2^-127 · 2^-126 for e8m0fnu, is below FP32's range and reads as 0 too.
  if (!f.has_zero) {
    const std::uint32_t smallest = format::encode(f, format::Rounding::nearest_even, f.min_positive());
    for (std::size_t i = 0; i < size_; ++i) set_code(i, smallest);
    std::fill(scales_.begin(), scales_.end(), std::numeric_limits<float>::min());
  }
}

std::uint32_t QuantizedState::code(std::size_t i) const { return read_code(codes_, code_bytes(), i); }

void QuantizedState::set_code(std::size_t i, std::uint32_t code) { write_code(codes_, code_bytes(), i, code); }

void QuantizedState::decode_group(std::size_t g, float* out) const {
  const float d = scales_[g];
  for (std::size_t i = groups_.begin(g), k = 0; i < groups_.end(g); ++i, ++k) out[k] = code_values_[code(i)] * d;
}

void QuantizedState::encode_group(std::size_t g, const float* values, format::Rounding rounding, std::uint64_t key,
                                  std::uint64_t stream) {
  const std::size_t begin = groups_.begin(g), count = groups_.end(g) - begin;
  float amax = 0.0f;
  for (std::size_t k = 0; k < count; ++k) amax = std::max(amax, std::fabs(values[k]));
  const float d = group_scale(format_, amax);
  std::uint32_t out[kStateEncodeChunk], random[kStateEncodeChunk] = {};
  for (std::size_t done = 0; done < count; done += kStateEncodeChunk) {
    const std::size_t n = std::min(kStateEncodeChunk, count - done);
    if (format::is_stochastic(rounding)) quant::fill_random(key, stream, begin + done, std::span(random, n));
    kStateEncoders[static_cast<std::size_t>(rounding)](format_, values + done, n, d, random, out);
    for (std::size_t k = 0; k < n; ++k) set_code(begin + done + k, out[k]);
  }
  scales_[g] = d;
}

void QuantizedState::restore(std::span<const std::uint8_t> codes, std::span<const float> scales) {
  const auto bad = [&](const std::string& why) { throw std::invalid_argument(name_ + ": " + why); };
  if (codes.size() != size_ * code_bytes()) {
    bad(std::to_string(codes.size()) + " code bytes for " + std::to_string(size_) + " elements of " + format_name_);
  }
  if (scales.size() != scales_.size()) {
    bad(std::to_string(scales.size()) + " scales for " + std::to_string(scales_.size()) + " groups of " +
        std::to_string(groups_.group_size()));
  }
  for (std::size_t g = 0; g < scales.size(); ++g) {
    if (!(scales[g] > 0.0f) || !std::isfinite(scales[g])) {
      bad("scale " + std::to_string(scales[g]) + " of group " + std::to_string(g) + " is not finite and positive");
    }
  }
  QuantizedState next = *this;
  std::copy(codes.begin(), codes.end(), next.codes_.begin());
  for (std::size_t i = 0; i < size_; ++i) {
    const std::uint32_t c = next.code(i);
    if (c >= format_.code_count() || !std::isfinite(format::decode(format_, c))) {
      bad("code " + std::to_string(c) + " at element " + std::to_string(i) + " is not a finite value of " + format_name_);
    }
  }
  codes_ = std::move(next.codes_);
  std::copy(scales.begin(), scales.end(), scales_.begin());
}

}  // namespace altgrad::optim
