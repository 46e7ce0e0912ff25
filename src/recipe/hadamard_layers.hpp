#pragma once
// The Hadamard element (hadamard_recipe.hpp) against the GPT's Linear layers: which (layer, GEMM)
// pairs it transforms, and whether its size fits every reduction axis it runs along.
#include <array>
#include <cstddef>
#include <vector>

#include "model/matmul_points.hpp"
#include "recipe/recipe_spec.hpp"

namespace altgrad::recipe {

// By matmul index (MatmulPoints::all()), by Gemm: whether that GEMM's operands are transformed.
// Throws config::ConfigError naming spec.origin where `match` selects no Linear layer (and says so
// apart where it names attention points: their products take no transform).
std::vector<std::array<bool, kGemmCount>> hadamard_gemms(const HadamardSpec& spec, const model::MatmulPoints& points);

// Throws config::ConfigError naming spec.origin, the layer, the GEMM and both sizes where the size
// does not divide a transformed GEMM's reduction axis: forward C (in features), dgrad OC (out
// features), wgrad the tokens, whose groups stay within one sequence, so the size must divide
// `sequence_length` (the config's block_size; 0: not known here, checked where it is).
void check_hadamard_layers(const HadamardSpec& spec, const model::MatmulPoints& points, std::size_t sequence_length);

}  // namespace altgrad::recipe
