#include "recipe/hadamard_recipe.hpp"

#include <algorithm>
#include <fnmatch.h>
#include <string>

#include "quant/hadamard.hpp"

namespace altgrad::recipe {

std::string_view hadamard_signs_name(HadamardSigns signs) { return kHadamardSignsNames[static_cast<std::size_t>(signs)]; }

std::optional<HadamardSigns> parse_hadamard_signs(std::string_view name) {
  const auto found = std::find(kHadamardSignsNames.begin(), kHadamardSignsNames.end(), name);
  if (found == kHadamardSignsNames.end()) return std::nullopt;
  return static_cast<HadamardSigns>(found - kHadamardSignsNames.begin());
}

bool HadamardSpec::any() const { return std::find(gemms.begin(), gemms.end(), true) != gemms.end(); }

void check_hadamard_values(const HadamardSpec& spec) {
  if (!quant::valid_hadamard_size(spec.size)) {
    throw RecipeError(spec.origin + ": quant: hadamard.size = " + std::to_string(spec.size) +
                      " is not valid; expected one of 16, 32, 64, 128");
  }
  if (spec.signs == HadamardSigns::te && spec.size != 16) {
    throw RecipeError(spec.origin + ": quant: hadamard.signs = \"te\" needs size = 16, got size = " +
                      std::to_string(spec.size) +
                      ": Transformer Engine publishes 16 signs only; use signs = \"seeded\" or \"none\"");
  }
}

bool hadamard_selects(const HadamardSpec& spec, std::string_view matmul) {
  return fnmatch(spec.match.c_str(), std::string(matmul).c_str(), 0) == 0;
}

}  // namespace altgrad::recipe
