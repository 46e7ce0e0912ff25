#pragma once
// What carries over when a run's quantization recipe changes: at a phase switch of a schedule
// (recipe/recipe.hpp), and when a warm start (warm_start.hpp) takes another run's scaling state.
// docs/quantization.md, "Schedules and warm starts", gives the rules and why.
#include <nlohmann/json.hpp>

#include "recipe/recipe_spec.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::precision {

// A point keeps its delayed-scaling history across a change when it is quantized before and after
// with the same format and the same scaling (kind, history length, amax algorithm, margin, block and
// scale rule); a change of rounding alone keeps it. Any other point starts afresh.
bool keeps_scaling_state(const quant::PointSettings& before, const quant::PointSettings& after);

// Copies the delayed-scaling state of every point of `from` that keeps it into `to` (both may be
// null: nothing quantized). Returns {"kept": [names], "fresh": [names]} over `to`'s delayed points.
nlohmann::json carry_scaling_state(const QuantHooks* from, QuantHooks* to);

}  // namespace altgrad::precision
