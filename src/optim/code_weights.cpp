#include "optim/code_weights.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "format/codec.hpp"

namespace altgrad::optim {
namespace {

int floor_log2(double x) { return static_cast<int>(std::floor(std::log2(x))); }

}  // namespace

std::uint32_t CodeTensor::code(std::size_t i) const { return read_code(codes, code_bytes(), i); }

void CodeTensor::set_code(std::size_t i, std::uint32_t code) { write_code(codes, code_bytes(), i, code); }

float CodeTensor::value(std::size_t i) const { return format::decode(format, code(i)) / scale; }

float code_scale(const format::Format& f, float amax, int headroom) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 1.0f;
  int e = floor_log2(static_cast<double>(f.max_finite()) / amax) - headroom;
  e = std::min(e, floor_log2(f.min_positive()) + 149);  // the smallest value stays a multiple of 2^-149
  e = std::max(e, floor_log2(f.max_finite()) - 127);    // the largest stays below 2^128
  e = std::clamp(e, -126, 127);                         // the scale itself is a normal float
  return std::ldexp(1.0f, e);
}

void CodeWeights::add(std::size_t range, std::size_t offset, const format::Format& f, std::string format_name,
                      std::span<const float> weights, int headroom) {
  float amax = 0.0f;
  for (const float w : weights) amax = std::max(amax, std::fabs(w));
  CodeTensor t{range, offset, weights.size(), f, std::move(format_name), code_scale(f, amax, headroom), {}};
  t.codes.resize(weights.size() * t.code_bytes());
  // Clamped: only where the scale's caps leave less headroom than asked could w·scale exceed it.
  const float top = f.max_finite(), bottom = f.has_sign ? -top : f.min_positive();
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::uint32_t code = format::encode(f, format::Rounding::nearest_even, std::clamp(weights[i] * t.scale, bottom, top));
    t.set_code(i, format::decode(f, code) == 0.0f ? 0u : code);  // -0 as +0
  }
  tensors_.push_back(std::move(t));
}

void CodeWeights::add_stored(CodeTensor tensor) { tensors_.push_back(std::move(tensor)); }

void CodeWeights::check_stored(const CodeTensor& tensor) {
  const auto bad = [](const std::string& why) { throw std::invalid_argument(why); };
  if (tensor.codes.size() != tensor.size * tensor.code_bytes()) {
    bad(std::to_string(tensor.codes.size()) + " code bytes for " + std::to_string(tensor.size) + " weights");
  }
  int exponent = 0;
  if (!(tensor.scale > 0.0f) || !std::isfinite(tensor.scale) || std::frexp(tensor.scale, &exponent) != 0.5f) {
    bad("scale " + std::to_string(tensor.scale) + " is not a power of two");
  }
  for (std::size_t i = 0; i < tensor.size; ++i) {
    const std::uint32_t code = tensor.code(i);
    if (code >= tensor.format.code_count() || !std::isfinite(tensor.value(i))) {
      bad("code " + std::to_string(code) + " at element " + std::to_string(i) + " is not a finite value of the format" +
          " under scale " + std::to_string(tensor.scale));
    }
  }
}

const CodeTensor* CodeWeights::find(std::size_t range) const {
  const auto it = std::find_if(tensors_.begin(), tensors_.end(), [&](const CodeTensor& t) { return t.range == range; });
  return it == tensors_.end() ? nullptr : &*it;
}

const CodeTensor* CodeWeights::at_offset(std::size_t offset) const {
  const auto it = std::find_if(tensors_.begin(), tensors_.end(), [&](const CodeTensor& t) { return t.offset == offset; });
  return it == tensors_.end() ? nullptr : &*it;
}

CodeTensor* CodeWeights::find(std::size_t range) {
  return const_cast<CodeTensor*>(static_cast<const CodeWeights*>(this)->find(range));
}

void CodeWeights::decode_into(std::span<float> params) const {
  for (const CodeTensor& t : tensors_) {
    float* out = params.data() + t.offset;
    for (std::size_t i = 0; i < t.size; ++i) out[i] = t.value(i);
  }
}

std::size_t CodeWeights::bytes() const {
  std::size_t sum = 0;
  for (const CodeTensor& t : tensors_) sum += t.codes.size() + sizeof(float);
  return sum;
}

std::size_t CodeWeights::elements() const {
  std::size_t sum = 0;
  for (const CodeTensor& t : tensors_) sum += t.size;
  return sum;
}

}  // namespace altgrad::optim
