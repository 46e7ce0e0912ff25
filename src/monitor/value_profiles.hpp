#pragma once
// The value profiles of a diagnostic step as metrics (diag.profile), and their log2 histograms for
// TensorBoard (docs/quantization.md, "Value profiles").
#include <nlohmann/json.hpp>
#include <string>

#include "monitor/scalar_log.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::monitor {

// {point: {count, non_finite, mean, std, min, max, p50, p99, p99_9, dynamic_range, log2: {lo,
// counts, zero_or_below}, fit: {format, scale, overflow_pct, subnormal_pct, flush_pct}}} over the
// points profiled this step; `candidate` names the range-fit format.
nlohmann::json value_profiles(const precision::QuantHooks& hooks, const std::string& candidate, ScalarLog& scalars);

}  // namespace altgrad::monitor
