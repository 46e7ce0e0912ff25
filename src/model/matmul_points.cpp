#include "model/matmul_points.hpp"

#include <stdexcept>

namespace altgrad::model {
namespace {

std::size_t operand_count_for(std::size_t matmuls, std::size_t layers) {
  return matmuls * kOperandsPerMatmul + layers * kAttentionOperandsPerBlock;
}

MatmulPoint make_point(std::size_t index, std::string name, std::size_t in_features, std::size_t out_features) {
  MatmulPoint point{index, std::move(name), {}, in_features, out_features};
  for (const Operand operand : {Operand::act, Operand::weight, Operand::grad}) {
    point.operand_names[static_cast<std::size_t>(operand)] = point.name + ":" + std::string(to_string(operand));
  }
  return point;
}

}  // namespace

std::string_view to_string(Operand operand) {
  switch (operand) {
    case Operand::act:
      return "act";
    case Operand::weight:
      return "weight";
    case Operand::grad:
      return "grad";
    case Operand::q:
      return "q";
    case Operand::k:
      return "k";
    case Operand::v:
      return "v";
    case Operand::probs:
      return "probs";
  }
  return "?";
}

MatmulPoints::MatmulPoints(const GptConfig& config) {
  validate(config);
  const std::size_t C = config.n_embd;
  points_.reserve(config.n_layer * kMatmulsPerBlock + 1);
  for (std::size_t i = 0; i < config.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    points_.push_back(make_point(points_.size(), h + "attn.c_attn", C, 3 * C));
    points_.push_back(make_point(points_.size(), h + "attn.c_proj", C, C));
    points_.push_back(make_point(points_.size(), h + "mlp.c_fc", C, mlp_inner_size(config)));
    points_.push_back(make_point(points_.size(), h + "mlp.c_proj", hidden_size(config), C));
  }
  points_.push_back(make_point(points_.size(), "lm_head", C, config.vocab_size));

  operands_.reserve(operand_count_for(points_.size(), config.n_layer));
  for (const MatmulPoint& point : points_) {
    for (const Operand operand : {Operand::act, Operand::weight, Operand::grad}) {
      operands_.push_back({operands_.size(), std::string(point.operand_name(operand)), operand});
    }
  }
  for (std::size_t i = 0; i < config.n_layer; ++i) {
    for (const Operand operand : {Operand::q, Operand::k, Operand::v, Operand::probs}) {
      operands_.push_back({operands_.size(), "h." + std::to_string(i) + ".attn." + std::string(to_string(operand)), operand});
    }
  }
}

const OperandPoint& MatmulPoints::attention(std::size_t layer, Operand operand) const {
  const std::size_t slot = static_cast<std::size_t>(operand) - static_cast<std::size_t>(Operand::q);
  if (slot >= kAttentionOperandsPerBlock) throw std::invalid_argument("MatmulPoints::attention: not an attention operand");
  return operands_.at(points_.size() * kOperandsPerMatmul + layer * kAttentionOperandsPerBlock + slot);
}

}  // namespace altgrad::model
