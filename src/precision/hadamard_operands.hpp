#pragma once
// The recipe's Hadamard element (recipe/hadamard_recipe.hpp) as the hooks apply it: for each
// operand copy a Linear GEMM asks for, the sign vector of that GEMM's transform, or none, and the
// transform along the GEMM's reduction axis.
//
// A copy's GEMM follows from its operand and the axis it is described along
// (model/matmul_hooks.hpp): X and W along their rows' C are the forward GEMM's, dY along OC and W
// down its OC rows dgrad's, dY and X down the N tokens wgrad's. Both operands of one GEMM get the
// same signs, so (A·Q)(B·Q)ᵀ = A·Bᵀ in exact arithmetic.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "recipe/recipe.hpp"

namespace altgrad::precision {

// The Linear GEMM that reads this copy; none for the attention's operands.
std::optional<recipe::Gemm> gemm_of(const model::MatmulOperand& operand);

// Each (Linear layer, GEMM)'s signs: Transformer Engine's 16 ("te"), all +1 ("none"), or drawn once
// from Philox keyed by philox_key(seed, hadamard_signs) at stream 3·matmul index + GEMM ("seeded").
std::vector<float> hadamard_signs(const recipe::HadamardSpec& spec, std::uint64_t seed, std::size_t matmul_index,
                                  recipe::Gemm gemm);

class HadamardOperands {
 public:
  HadamardOperands(const model::MatmulPoints& points, const recipe::Recipe& recipe);

  // The signs of the transform of the GEMM that reads this copy; null where that GEMM is not transformed.
  const std::vector<float>* signs(const model::MatmulOperand& operand) const;
  // Whether some GEMM that reads the operand's tensor is transformed: then its GEMMs read different
  // copies (X: forward and wgrad, W: forward and dgrad, dY: dgrad and wgrad).
  bool differs_by_gemm(const model::MatmulOperand& operand) const;
  // `in` transformed along the operand's reduction axis into `out` (quant/hadamard.hpp). Throws
  // std::invalid_argument naming the operand and both sizes where the size does not divide that axis.
  void transform(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) const;

 private:
  std::vector<std::array<std::vector<float>, recipe::kGemmCount>> signs_;  // by matmul index, Gemm; empty: none
};

}  // namespace altgrad::precision
