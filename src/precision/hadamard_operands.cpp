#include "precision/hadamard_operands.hpp"

#include <stdexcept>
#include <string>

#include "format/philox_key.hpp"
#include "quant/hadamard.hpp"
#include "recipe/hadamard_layers.hpp"

namespace altgrad::precision {

std::optional<recipe::Gemm> gemm_of(const model::MatmulOperand& operand) {
  const bool columns = operand.reduction == model::Reduction::along_rows;
  switch (operand.operand) {
    case model::Operand::act:
      return columns ? recipe::Gemm::wgrad : recipe::Gemm::forward;
    case model::Operand::weight:
      return columns ? recipe::Gemm::dgrad : recipe::Gemm::forward;
    case model::Operand::grad:
      return columns ? recipe::Gemm::wgrad : recipe::Gemm::dgrad;
    default:
      return std::nullopt;
  }
}

std::vector<float> hadamard_signs(const recipe::HadamardSpec& spec, std::uint64_t seed, std::size_t matmul_index,
                                  recipe::Gemm gemm) {
  switch (spec.signs) {
    case recipe::HadamardSigns::te:
      return quant::transformer_engine_signs();
    case recipe::HadamardSigns::none:
      return std::vector<float>(spec.size, 1.0f);
    case recipe::HadamardSigns::seeded:
      break;
  }
  const std::uint64_t key = format::philox_key(seed, format::RandomPurpose::hadamard_signs);
  return quant::random_signs(spec.size, key, matmul_index * recipe::kGemmCount + static_cast<std::size_t>(gemm));
}

HadamardOperands::HadamardOperands(const model::MatmulPoints& points, const recipe::Recipe& recipe)
    : signs_(points.all().size()) {
  const auto gemms = recipe::hadamard_gemms(recipe.hadamard, points);
  for (std::size_t m = 0; m < gemms.size(); ++m) {
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      if (gemms[m][g]) signs_[m][g] = hadamard_signs(recipe.hadamard, recipe.seed, m, static_cast<recipe::Gemm>(g));
    }
  }
}

const std::vector<float>* HadamardOperands::signs(const model::MatmulOperand& operand) const {
  const std::optional<recipe::Gemm> gemm = gemm_of(operand);
  if (!gemm) return nullptr;
  const std::vector<float>& signs = signs_[operand.index / model::kOperandsPerMatmul][static_cast<std::size_t>(*gemm)];
  return signs.empty() ? nullptr : &signs;
}

bool HadamardOperands::differs_by_gemm(const model::MatmulOperand& operand) const {
  model::MatmulOperand other = operand;
  other.reduction = operand.reduction == model::Reduction::along_rows ? model::Reduction::along_cols
                                                                      : model::Reduction::along_rows;
  return signs(operand) != nullptr || signs(other) != nullptr;
}

void HadamardOperands::transform(const model::MatmulOperand& operand, std::span<const float> in,
                                 std::span<float> out) const {
  const std::vector<float>& signs = *this->signs(operand);
  const bool columns = operand.reduction == model::Reduction::along_rows;
  const std::size_t axis = columns ? operand.rows : operand.cols;
  if (!quant::valid_hadamard_size(signs.size()) || axis % signs.size() != 0) {
    throw std::invalid_argument(std::string(operand.name) + ": Hadamard size " + std::to_string(signs.size()) +
                                " does not divide its GEMM's reduction axis (" + std::to_string(axis) +
                                (columns ? " tokens)" : " features)"));
  }
  if (columns) {
    quant::hadamard_columns(in, out, operand.cols, signs);
  } else {
    quant::hadamard_rows(in, out, operand.cols, signs);
  }
}

}  // namespace altgrad::precision
