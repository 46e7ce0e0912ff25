#pragma once
// Kurtosis E[(x−μ)⁴]/σ⁴ of the activations on a diagnostic step, and its two warnings.
//
// Outliers, by the research notes' definition ("average kurtosis > 10 in QKV or block outputs"): the
// residual stream after each block (h.{i}) and each block's q, k and v (h.{i}.attn.q, ...) warn
// above warn_kurtosis (10) in a run that quantizes. A heavy tail there is grown by training, and the
// notes see it before divergence.
//
// Growth, for the other matmul inputs (their :act points): some are heavy-tailed by construction.
// The GELU output that mlp.c_proj reads has kurtosis 6.5-13 at step 100 of a healthy fp8-hybrid
// run and up to 32 later (docs/quantization.md, "Warnings"), so an absolute 10 would warn on every
// healthy run. Such an input warns when its kurtosis exceeds warn_kurtosis_growth (6) times its
// value at the run's first diagnostic step, where a quantized :act point reads it. Those first
// values go into the checkpoint (state.json's kurtosis_baseline), so that a resumed run warns as an
// uninterrupted one.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "monitor/diagnostic_inputs.hpp"
#include "monitor/warnings.hpp"

namespace altgrad::monitor {

class KurtosisWatch {
 public:
  // Every tensor's kurtosis, keyed as metrics.jsonl's diag.kurtosis keys it; warns as above.
  nlohmann::json observe(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config,
                         Warnings& warnings);

  // Each matmul input's kurtosis at the first diagnostic step, by name.
  const std::map<std::string, double>& baseline() const { return baseline_; }
  void restore(std::map<std::string, double> baseline) { baseline_ = std::move(baseline); }

 private:
  std::map<std::string, double> baseline_;
};

}  // namespace altgrad::monitor
