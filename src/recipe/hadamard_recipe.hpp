#pragma once
// The Hadamard transform as a recipe element (docs/quantization.md, "Hadamard transforms"): which
// of a Linear layer's three GEMMs have both their operands transformed along the GEMM's reduction
// axis before they are quantized, with which size and which signs (quant/hadamard.hpp has the
// transform). Both operands get the same Q = D·H_n/√n, so the product is unchanged in exact
// arithmetic; only the quantization sees the rotated values. The element's type, HadamardSpec, is
// with the recipe's other types in recipe_spec.hpp; its names and value checks are here.
//
//   [quant.hadamard]
//   gemms = ["wgrad"]     # any of forward, dgrad, wgrad (Linear GEMMs only; [] switches it off)
//   size = 16             # 16, 32, 64 or 128 (default 16)
//   signs = "te"          # te (Transformer Engine's fixed 16 signs), seeded (default), none
//   match = "h.*"         # a glob over Linear layer names (default: every block's Linear layers)
//
// Signs are fixed for the whole run, per Linear layer and GEMM, as Transformer Engine fixes its
// vector for all layers and steps: "seeded" draws each (layer, GEMM)'s vector once from the
// recipe's seed (format/philox_key.hpp's hadamard_signs purpose, stream 3·matmul index + GEMM), so
// resuming, thread counts and phase switches never change them.
#include <optional>
#include <string_view>

#include "recipe/recipe_spec.hpp"

namespace altgrad::recipe {

std::string_view hadamard_signs_name(HadamardSigns signs);
std::optional<HadamardSigns> parse_hadamard_signs(std::string_view name);

// Throws RecipeError naming `spec.origin`, the key and the value: a size that is not 16, 32, 64 or
// 128, or signs = "te" with a size other than 16 (Transformer Engine publishes 16 signs only).
void check_hadamard_values(const HadamardSpec& spec);

// Whether the element selects the Linear layer `matmul` ("h.3.mlp.c_fc", "lm_head").
bool hadamard_selects(const HadamardSpec& spec, std::string_view matmul);

}  // namespace altgrad::recipe
