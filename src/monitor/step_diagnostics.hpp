#pragma once
// The diagnostics of a diagnostic step (every diag_interval steps), read from the step's last
// forward pass, its gradients (averaged over micro-batches, before clipping) and an FP32 shadow
// backward on the same batch. Definitions (docs/quantization.md has them in full):
//   code_usage         fraction of the format's non-NaN codes a point's values landed on
//   kurtosis           E[(x−μ)⁴]/σ⁴ of each block output ("h.N"), each matmul input (its :act point)
//                      and each block's q, k and v (kurtosis_watch.hpp)
//   attention_entropy  per layer: mean and min over heads of the head's mean row entropy (nats), of
//                      the probabilities probs·v multiplied (quantized where the probs point is on)
//   attention_entropy_unquantized  the same of the softmax output, where the probs point is on
//   grad_norm          ‖g‖ per parameter tensor (the global norm is metrics.jsonl's grad_norm)
//   grad_snr_db        10·log10(‖g32‖² / ‖g_q − g32‖²) per parameter tensor; "inf" when equal
//   dead_units         per layer: fraction of MLP hidden units in their nonlinearity's flat tail
//                      for every token of the batch (diag/dead_units.hpp)
//   weight_log2        per parameter tensor, counts of log2|w| in integer buckets
// Entropy beyond its threshold is a warning; kurtosis warns as kurtosis_watch.hpp says.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"
#include "monitor/diagnostic_inputs.hpp"
#include "monitor/kurtosis_watch.hpp"
#include "monitor/scalar_log.hpp"
#include "monitor/step_observer.hpp"
#include "monitor/warnings.hpp"
#include "precision/quant_hooks.hpp"

namespace altgrad::monitor {

nlohmann::json step_diagnostics(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config,
                                Warnings& warnings, ScalarLog& scalars, KurtosisWatch& kurtosis);

// Every diag_interval steps: the shadow backward before the step's forward (its quantization points
// record code histograms and value profiles), then step_diagnostics into metrics.jsonl's "diag".
std::unique_ptr<StepObserver> step_diagnostics_observer(const config::TrainConfig& config, std::size_t parameters);

}  // namespace altgrad::monitor
