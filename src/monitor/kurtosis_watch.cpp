#include "monitor/kurtosis_watch.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "diag/moments.hpp"
#include "model/matmul_points.hpp"

namespace altgrad::monitor {
namespace {

bool quantizes(const precision::QuantHooks* hooks) {
  if (!hooks) return false;
  for (std::size_t i = 0; i < hooks->size(); ++i) {
    if (hooks->point(i)) return true;
  }
  return false;
}

// Whether the :act point of this matmul is quantized: only then can its input's outliers clip or flush.
bool act_quantized(const precision::QuantHooks* hooks, const model::MatmulPoint& matmul) {
  const std::size_t index = matmul.index * model::kOperandsPerMatmul + static_cast<std::size_t>(model::Operand::act);
  return hooks != nullptr && hooks->point(index) != nullptr;
}

// One third of each token's (q, k, v) row: q for part 0, k for 1, v for 2.
std::vector<float> qkv_part(std::span<const float> qkv, std::size_t C, std::size_t part) {
  const std::size_t tokens = qkv.size() / (3 * C);
  std::vector<float> out(tokens * C);
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::span<const float> row = qkv.subspan(t * 3 * C + part * C, C);
    std::copy(row.begin(), row.end(), out.begin() + static_cast<std::ptrdiff_t>(t * C));
  }
  return out;
}

}  // namespace

nlohmann::json KurtosisWatch::observe(const DiagnosticInputs& in, std::int64_t step, const config::TrainConfig& config,
                                      Warnings& warnings) {
  nlohmann::json out = nlohmann::json::object();
  const bool quantized_run = quantizes(in.hooks);
  const auto outliers = [&](const std::string& name, std::span<const float> values, const char* what) {
    const double k = diag::moments_of(values).kurtosis;
    out[name] = k;
    if (quantized_run && k > config.warn_kurtosis) {
      warnings.warn(step, "kurtosis", name, k, config.warn_kurtosis,
                    name + " has kurtosis " + short_number(k) + " (threshold " + short_number(config.warn_kurtosis) +
                        "; a normal distribution has 3): outliers in " + what + ", which precede divergence");
    }
  };
  const auto growth = [&](const std::string& name, std::span<const float> values, bool read_quantized) {
    const double k = diag::moments_of(values).kurtosis;
    out[name] = k;
    const auto [first, fresh] = baseline_.try_emplace(name, k);
    const double ratio = k / first->second;
    if (!fresh && read_quantized && first->second > 0 && ratio > config.warn_kurtosis_growth) {
      warnings.warn(step, "kurtosis_growth", name, ratio, config.warn_kurtosis_growth,
                    name + " has kurtosis " + short_number(k) + ", " + short_number(ratio) + " times its " +
                        short_number(first->second) + " at the first diagnostic step (threshold " +
                        short_number(config.warn_kurtosis_growth) + "x): outliers a narrow format will clip or flush");
    }
  };
  const model::MatmulPoints& points = in.model.matmuls();
  const std::size_t C = in.model.config().n_embd;
  for (std::size_t l = 0; l < in.acts.layers.size(); ++l) {
    const auto& layer = in.acts.layers[l];
    const auto input = [&](model::BlockMatmul m, std::span<const float> values) {
      const model::MatmulPoint& matmul = points.block(l, m);
      growth(std::string(matmul.operand_name(model::Operand::act)), values, act_quantized(in.hooks, matmul));
    };
    input(model::BlockMatmul::attn_c_attn, layer.ln_1);
    input(model::BlockMatmul::attn_c_proj, layer.att_y);
    input(model::BlockMatmul::mlp_c_fc, layer.ln_2);
    input(model::BlockMatmul::mlp_c_proj, layer.fc_act);
    for (const model::Operand operand : {model::Operand::q, model::Operand::k, model::Operand::v}) {
      const std::size_t part = static_cast<std::size_t>(operand) - static_cast<std::size_t>(model::Operand::q);
      outliers(points.attention(l, operand).name, qkv_part(layer.qkv, C, part), "the attention's inputs");
    }
    outliers("h." + std::to_string(l), layer.residual3, "the residual stream");
  }
  const model::MatmulPoint& head = points.lm_head();
  growth(std::string(head.operand_name(model::Operand::act)), in.acts.ln_f, act_quantized(in.hooks, head));
  return out;
}

}  // namespace altgrad::monitor
