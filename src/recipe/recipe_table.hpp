#pragma once
// The [quant] table of a config read into recipe specs: role tables, overrides, the seed and the
// phases, every value checked, before the specs meet a model's points (recipe.hpp resolves them
// for the GPT; the Python package for a PyTorch model's Linear layers). The grammar is
// recipe.hpp's; every problem is a config::ConfigError naming file:line, key and value.
#include <cstdint>
#include <optional>
#include <vector>

#include <toml++/toml.h>

#include "recipe/recipe_spec.hpp"

namespace altgrad::recipe {

// One recipe of a schedule and the step it starts at.
struct PhaseSpec {
  std::int64_t start = 0;
  RecipeSpec spec;
};

// A [quant] table's schedule as written: its seed and its phases' specs.
struct ScheduleSpec {
  std::optional<std::uint64_t> seed;  // quant.seed; absent: the run's seed
  std::vector<PhaseSpec> phases;      // phases[0] is the [quant] table itself, from step 0
};

// Throws config::ConfigError.
ScheduleSpec read_recipe_table(const toml::table& quant);

}  // namespace altgrad::recipe
