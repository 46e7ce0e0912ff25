#include "monitor/step_diagnostics.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "diag/attention_entropy.hpp"
#include "diag/code_usage.hpp"
#include "diag/dead_units.hpp"
#include "diag/gradient_stats.hpp"
#include "diag/log2_histogram.hpp"
#include "diag/moments.hpp"
#include "model/matmul_points.hpp"
#include "monitor/log2_record.hpp"
#include "monitor/value_profiles.hpp"

namespace altgrad::monitor {
namespace {

using nlohmann::json;

json code_usage(const precision::QuantHooks* hooks) {
  json usage = json::object();
  if (!hooks) return usage;
  for (std::size_t i = 0; i < hooks->size(); ++i) {
    const quant::PointQuantizer* point = hooks->point(i);
    if (!point || !point->has_code_histogram() || point->step_stats().calls == 0) continue;
    const double fraction = diag::code_usage(point->code_histogram(), point->settings().format).fraction;
    usage[hooks->name(i)] = fraction;
  }
  return usage;
}

// One layer's entropy summary into `out`.
diag::LayerEntropy entropy_of(std::span<const float> probs, const DiagnosticInputs& in, const std::string& name,
                              json& out) {
  const std::vector<double> heads =
      diag::attention_entropy_per_head(probs, in.acts.B, in.model.config().n_head, in.acts.T);
  const diag::LayerEntropy layer = diag::layer_entropy(heads);
  json per_head = json::array();
  for (const double h : heads) per_head.push_back(h);
  out[name] = {{"mean", layer.mean}, {"min", layer.min}, {"per_head", per_head}};
  return layer;
}

// attention_entropy: of the probabilities probs·v multiplied (the quantized ones where the probs
// point is on), the attention the model actually used. attention_entropy_unquantized: of the
// softmax output, only for layers whose probs point is quantized, to show what quantizing did.
json attention_entropy(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config, Warnings& warnings) {
  json used = json::object(), unquantized = json::object();
  for (std::size_t l = 0; l < in.acts.layers.size(); ++l) {
    const auto& layer = in.acts.layers[l];
    const std::string name = "h." + std::to_string(l) + ".attn";
    const std::span<const float> probs_used = layer.attention_used.probs;
    const diag::LayerEntropy entropy = entropy_of(probs_used, in, name, used);
    if (probs_used.data() != layer.att_probs.data()) {
      entropy_of(layer.att_probs, in, name, unquantized);
    }
    if (entropy.min < config.warn_attention_entropy) {
      warnings.warn(step, "attention_entropy", name, entropy.min, config.warn_attention_entropy,
                    name + " has a head with mean attention entropy " + short_number(entropy.min) +
                        " nats (threshold " + short_number(config.warn_attention_entropy) +
                        "): attention collapsing onto few keys");
    }
  }
  json out = {{"attention_entropy", used}};
  if (!unquantized.empty()) out["attention_entropy_unquantized"] = unquantized;
  return out;
}

json dead_units(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config, Warnings& warnings) {
  json out = json::object();
  const model::GptConfig& c = in.model.config();
  const std::size_t N = in.acts.B * in.acts.T, H = model::hidden_size(c);
  for (std::size_t l = 0; l < in.acts.layers.size(); ++l) {
    const std::span<const float> fc = in.acts.layers[l].fc;
    const double fraction =
        (c.mlp == model::Mlp::swiglu ? diag::dead_units_swiglu(fc, N, H) : diag::dead_units_gelu(fc, N, H)).fraction;
    const std::string name = "h." + std::to_string(l) + ".mlp";
    out[name] = fraction;
    if (100 * fraction > config.warn_dead_units_pct) {
      warnings.warn(step, "dead_units", name, 100 * fraction, config.warn_dead_units_pct,
                    name + " has " + short_number(100 * fraction) + "% of its hidden units dead (threshold " +
                        short_number(config.warn_dead_units_pct) + "%)");
    }
  }
  return out;
}

// Per tensor: the gradient's SNR against the shadow FP32 backward, and the weights' log2 histogram.
json gradients_and_weights(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config,
                           Warnings& warnings, ScalarLog& scalars) {
  json snr = json::object(), weights = json::object();
  for (const auto& spec : in.model.layout().tensors()) {
    if (!spec.alias_of.empty()) continue;
    const std::span<const float> g = spec.slot.in(in.model.gradients());
    if (!in.fp32_gradients.empty()) {
      const double db = diag::snr_db(g, spec.slot.in(in.fp32_gradients));
      snr[spec.name] = db;
      if (db < config.warn_grad_snr_db) {
        warnings.warn(step, "grad_snr", spec.name, db, config.warn_grad_snr_db,
                      spec.name + "'s gradient keeps an SNR of " + short_number(db) + " dB against FP32 (threshold " +
                          short_number(config.warn_grad_snr_db) + " dB): quantization noise drowns the signal");
      }
    }
    const diag::Log2Histogram h = diag::log2_histogram(spec.slot.in(in.model.parameters()));
    weights[spec.name] = log2_json(h);
    scalars.histograms.emplace_back("weights_log2/" + spec.name, log2_for_tensorboard(h));
  }
  return {{"grad_snr_db", snr}, {"weight_log2", weights}};
}

}  // namespace

json step_diagnostics(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config, Warnings& warnings,
                      ScalarLog& scalars, KurtosisWatch& kurtosis) {
  json out = gradients_and_weights(in, step, config, warnings, scalars);
  out["code_usage"] = code_usage(in.hooks);
  out["kurtosis"] = kurtosis.observe(in, step, config, warnings);
  out.update(attention_entropy(in, step, config, warnings));
  out["dead_units"] = dead_units(in, step, config, warnings);
  if (in.hooks && config.profile_points) out["profile"] = value_profiles(*in.hooks, config.range_fit_format, scalars);
  return out;
}

namespace {

class StepDiagnostics final : public StepObserver {
 public:
  StepDiagnostics(const config::TrainConfig& config, std::size_t parameters)
      : config_(config), fp32_gradients_(parameters) {}

  void plan(std::int64_t done, StepPlan& plan) const override {
    if (!due(done)) return;
    plan.logged = true;
    plan.point_details = true;
  }

  void before_forward(RunView& run, StepRecord& step) override {
    if (due(step.done)) run.unquantized_gradient(fp32_gradients_);
  }

  void after_backward(RunView& run, StepRecord& step) override {
    if (!due(step.done)) return;
    step.diag().update(step_diagnostics({run.model, run.activations(), run.hooks, fp32_gradients_}, step.done, config_,
                                        run.warnings, step.scalars, kurtosis_));
  }

  void save(checkpoint::CheckpointState& state) const override { state.kurtosis_baseline = kurtosis_.baseline(); }
  void restore(const checkpoint::CheckpointState& state) override { kurtosis_.restore(state.kurtosis_baseline); }

 private:
  bool due(std::int64_t done) const { return done % config_.diag_interval == 0; }

  const config::TrainConfig& config_;
  std::vector<float> fp32_gradients_;  // the shadow backward's
  KurtosisWatch kurtosis_;
};

}  // namespace

std::unique_ptr<StepObserver> step_diagnostics_observer(const config::TrainConfig& config, std::size_t parameters) {
  return std::make_unique<StepDiagnostics>(config, parameters);
}

}  // namespace altgrad::monitor
