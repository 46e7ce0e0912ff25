#include "model/init.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "format/philox.hpp"
#include "format/philox_key.hpp"

namespace altgrad::model {
namespace {

// 53 random bits from two 32-bit words: every double in the result is a multiple of 2^−53.
double uniform53(std::uint32_t high, std::uint32_t low) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(high) << 21) ^ (low >> 11);
  return static_cast<double>(bits) * 0x1p-53;
}

template <typename Scalar>
void fill_normal(std::span<Scalar> tensor, double std, std::uint64_t key, std::uint64_t stream) {
  const std::size_t n = tensor.size();
#pragma omp parallel for schedule(static) if (n >= (std::size_t{1} << 16))
  for (std::size_t i = 0; i < n; ++i) tensor[i] = static_cast<Scalar>(std * philox_normal(key, stream, i));
}

}  // namespace

double init_std(ParameterRole role, std::size_t n_layer) {
  switch (role) {
    case ParameterRole::embedding:
    case ParameterRole::linear_weight:
      return kInitStd;
    case ParameterRole::residual_projection:
      return kInitStd / std::sqrt(2.0 * static_cast<double>(n_layer));
    case ParameterRole::bias:
    case ParameterRole::norm_weight:
      return 0.0;
  }
  return 0.0;
}

double philox_normal(std::uint64_t key, std::uint64_t stream, std::uint64_t index) {
  const format::PhiloxCounter words = format::philox_block(key, stream, index);
  // 1 − u maps [0, 1) onto (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - uniform53(words[0], words[1]);
  const double u2 = uniform53(words[2], words[3]);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

template <typename Scalar>
void initialize_parameters(const ParameterLayout& layout, std::span<Scalar> parameters, std::uint64_t seed) {
  if (parameters.size() != layout.size()) {
    throw std::invalid_argument("initialize_parameters: buffer has " + std::to_string(parameters.size()) +
                                " elements, the layout " + std::to_string(layout.size()));
  }
  const std::span<const TensorSpec> tensors = layout.tensors();
  const std::uint64_t key = format::philox_key(seed, format::RandomPurpose::initialization);
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const std::span<Scalar> tensor = tensors[k].slot.in(parameters);
    switch (tensors[k].role) {
      case ParameterRole::bias:
        std::fill(tensor.begin(), tensor.end(), Scalar{0});
        break;
      case ParameterRole::norm_weight:
        std::fill(tensor.begin(), tensor.end(), Scalar{1});
        break;
      default:
        fill_normal(tensor, init_std(tensors[k].role, layout.config().n_layer), key, k);
    }
  }
}

template void initialize_parameters<float>(const ParameterLayout&, std::span<float>, std::uint64_t);
template void initialize_parameters<double>(const ParameterLayout&, std::span<double>, std::uint64_t);

}  // namespace altgrad::model
