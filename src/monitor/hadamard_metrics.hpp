#pragma once
// What the recipe's Hadamard transforms did, on each step that writes a metrics line: for every
// point whose copy for a GEMM was transformed, under "quant" → "<point>" → "hadamard" → "<gemm>"
// in metrics.jsonl (TensorBoard tags "quant/<point>/hadamard/<gemm>/<stat>"):
//   amax_before, amax_after        max |x| of the operand and of its transform
//   kurtosis_before, kurtosis_after Pearson kurtosis of each (the count-weighted mean over the
//                                   step's micro-batches)
//   rel_error                      ‖y − ŷ‖ / ‖y‖ of the transformed copy y and its quantization ŷ,
//                                   where the point quantizes
// The statistics are of the logged step alone (precision/hadamard_stats.hpp), not of the interval.
#include <memory>

#include <nlohmann/json.hpp>

#include "monitor/step_observer.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::monitor {

// The hooks' Hadamard statistics as above, keyed by point name, then by GEMM.
nlohmann::json hadamard_metrics(const precision::QuantHooks& hooks);

// Writes them into each logged step's "quant" object, after the quantization metrics (so it runs
// after quant_metrics_observer in step_observers.cpp).
std::unique_ptr<StepObserver> hadamard_metrics_observer();

}  // namespace altgrad::monitor
