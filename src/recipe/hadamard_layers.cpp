#include "recipe/hadamard_layers.hpp"

#include <fnmatch.h>
#include <string>

#include "config/config_error.hpp"
#include "recipe/hadamard_recipe.hpp"

namespace altgrad::recipe {
namespace {

using config::ConfigError;

// Whether `match` selects one of the attention core's points ("h.0.attn.q"), which are no Linear layer.
bool names_attention(const HadamardSpec& spec, const model::MatmulPoints& points) {
  for (std::size_t layer = 0; layer < points.layers(); ++layer) {
    for (const auto operand : {model::Operand::q, model::Operand::k, model::Operand::v, model::Operand::probs}) {
      if (fnmatch(spec.match.c_str(), points.attention(layer, operand).name.c_str(), 0) == 0) return true;
    }
  }
  return false;
}

// The length of the axis GEMM `gemm` of `matmul` reduces over, and what to call it in a message;
// 0 where it is the token axis and the sequence length is not known.
struct Axis {
  std::size_t length;
  std::string name;
};
Axis reduction_axis(const model::MatmulPoint& matmul, Gemm gemm, std::size_t sequence_length) {
  switch (gemm) {
    case Gemm::forward:
      return {matmul.in_features, "in features C"};
    case Gemm::dgrad:
      return {matmul.out_features, "out features OC"};
    case Gemm::wgrad:
      break;
  }
  return {sequence_length, "tokens of one sequence, block_size (its groups stay within a sequence)"};
}

}  // namespace

std::vector<std::array<bool, kGemmCount>> hadamard_gemms(const HadamardSpec& spec, const model::MatmulPoints& points) {
  std::vector<std::array<bool, kGemmCount>> gemms(points.all().size());
  if (!spec.any()) return gemms;
  bool selected = false;
  for (const model::MatmulPoint& matmul : points.all()) {
    if (!hadamard_selects(spec, matmul.name)) continue;
    gemms[matmul.index] = spec.gemms;
    selected = true;
  }
  if (selected) return gemms;
  if (names_attention(spec, points)) {
    throw ConfigError(spec.origin + ": quant: hadamard.match = \"" + spec.match +
                      "\" selects attention points: the attention products take no Hadamard transform (Linear "
                      "layers only, such as h.0.mlp.c_fc)");
  }
  throw ConfigError(spec.origin + ": quant: hadamard.match = \"" + spec.match +
                    "\" selects no Linear layer (they are named h.{i}.attn.c_attn, h.{i}.attn.c_proj, h.{i}.mlp.c_fc, "
                    "h.{i}.mlp.c_proj and lm_head)");
}

void check_hadamard_layers(const HadamardSpec& spec, const model::MatmulPoints& points, std::size_t sequence_length) {
  const std::vector<std::array<bool, kGemmCount>> gemms = hadamard_gemms(spec, points);
  for (const model::MatmulPoint& matmul : points.all()) {
    for (std::size_t g = 0; g < kGemmCount; ++g) {
      if (!gemms[matmul.index][g]) continue;
      const Axis axis = reduction_axis(matmul, static_cast<Gemm>(g), sequence_length);
      if (axis.length == 0 || axis.length % spec.size == 0) continue;
      throw ConfigError(spec.origin + ": quant: hadamard.size = " + std::to_string(spec.size) + " does not divide " +
                        matmul.name + "'s " + std::string(kGemmNames[g]) + " reduction axis, the " + axis.name +
                        " = " + std::to_string(axis.length));
    }
  }
}

}  // namespace altgrad::recipe
