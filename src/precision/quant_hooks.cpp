#include "precision/quant_hooks.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "quant/scaling.hpp"

namespace altgrad::precision {

QuantHooks::QuantHooks(const model::MatmulPoints& points, const recipe::Recipe& recipe)
    : hadamard_(points, recipe), recipe_hadamard_(recipe.hadamard.any()) {
  if (recipe.points.size() != points.operand_count()) {
    throw std::invalid_argument("QuantHooks: the recipe has " + std::to_string(recipe.points.size()) +
                                " points, the model " + std::to_string(points.operand_count()));
  }
  points_.resize(recipe.points.size());
  gemm_copies_.resize(recipe.points.size());
  profiles_.resize(recipe.points.size());
  for (std::size_t i = 0; i < recipe.points.size(); ++i) {
    const recipe::ResolvedPoint& p = recipe.points[i];
    names_.push_back(p.name);
    if (p.settings.enabled) points_[i].emplace(p.settings, recipe.seed, i);
    // A GEMM's own copy draws its random words from a stream of its own, (1 + GEMM) · points +
    // point, so that its rounding is independent of the other copies' (docs/quantization.md,
    // "Random streams").
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      if (!p.by_gemm[g]) continue;
      gemm_copies_[i][g].own = true;
      if (p.by_gemm[g]->enabled) {
        gemm_copies_[i][g].quantizer.emplace(*p.by_gemm[g], recipe.seed, (1 + g) * recipe.points.size() + i);
      }
    }
  }
  last_scale_.assign(recipe.points.size(), {1.0f, 1.0f});
  hadamard_stats_.resize(recipe.points.size());
  for (const model::MatmulPoint& matmul : points.all()) {
    auto& models = accumulation_.emplace_back();
    for (std::size_t g = 0; g < recipe::kGemmCount; ++g) {
      models[g] = recipe.accumulation(matmul.index, static_cast<recipe::Gemm>(g));
    }
  }
  for (std::size_t layer = 0; layer < points.layers(); ++layer) {
    auto& models = attention_accumulation_.emplace_back();
    for (std::size_t g = 0; g < model::kAttentionGemmCount; ++g) {
      models[g] = recipe.attention_accumulation(points, layer, static_cast<model::AttentionGemm>(g));
    }
  }
}

const format::AccumulatorModel* QuantHooks::accumulation(const model::MatmulPoint& matmul, model::Gemm gemm) {
  static_assert(static_cast<std::size_t>(model::Gemm::wgrad) == static_cast<std::size_t>(recipe::Gemm::wgrad));
  const format::AccumulatorModel& model = accumulation_.at(matmul.index)[static_cast<std::size_t>(gemm)];
  return model.emulated() ? &model : nullptr;
}

const format::AccumulatorModel* QuantHooks::attention_accumulation(std::size_t layer, model::AttentionGemm gemm) {
  const format::AccumulatorModel& model = attention_accumulation_.at(layer)[static_cast<std::size_t>(gemm)];
  return model.emulated() ? &model : nullptr;
}

quant::PointQuantizer* QuantHooks::quantizer(const model::MatmulOperand& operand) {
  return const_cast<quant::PointQuantizer*>(std::as_const(*this).quantizer(operand));
}

const quant::PointQuantizer* QuantHooks::quantizer(const model::MatmulOperand& operand) const {
  if (const std::optional<recipe::Gemm> gemm = gemm_of(operand)) {
    const GemmCopy& copy = gemm_copies_[operand.index][static_cast<std::size_t>(*gemm)];
    if (copy.own) return copy.quantizer ? &*copy.quantizer : nullptr;
  }
  return point(operand.index);
}

bool QuantHooks::copies_differ(const model::MatmulOperand& operand) const {
  const auto& copies = gemm_copies_[operand.index];
  return hadamard_.differs_by_gemm(operand) ||
         std::any_of(copies.begin(), copies.end(), [](const GemmCopy& c) { return c.own; });
}

ops::GridOperand QuantHooks::grid(const model::MatmulOperand& operand) {
  const quant::PointQuantizer* point = quantizer(operand);
  if (point == nullptr || point->settings().scaling == quant::Scaling::block) return {};
  return {&point->settings().format, last_scale_[operand.index][static_cast<std::size_t>(operand.reduction)]};
}

void QuantHooks::begin_step(std::int64_t step, bool collect_codes, bool profile, quant::ErrorSums error_sums) {
  step_ = step;
  first_non_finite_.reset();
  profiling_ = profile && candidate_.has_value();
  if (profiling_) {
    for (auto& p : profiles_) p.reset();
  }
  for (auto& point : points_) {
    if (!point) continue;
    point->begin_step(step, error_sums);
    point->collect_codes(collect_codes);
  }
  // The code histograms stay the point's, of the copies its own settings quantize
  // (docs/quantization.md, "Per-GEMM settings").
  for (auto& copies : gemm_copies_) {
    for (GemmCopy& copy : copies) {
      if (copy.quantizer) copy.quantizer->begin_step(step, error_sums);
    }
  }
}

void QuantHooks::end_step() {
  for (auto& point : points_) {
    if (point) point->end_step();
  }
  for (auto& copies : gemm_copies_) {
    for (GemmCopy& copy : copies) {
      if (copy.quantizer) copy.quantizer->end_step();
    }
  }
}

void QuantHooks::inject_nan(std::size_t index, std::int64_t step) {
  if (index >= points_.size()) throw std::invalid_argument("inject_nan: no point " + std::to_string(index));
  injection_.emplace(index, step);
}

bool QuantHooks::injecting(std::size_t index) const {
  return !frozen_ && injection_ && injection_->first == index && injection_->second == step_;
}

bool QuantHooks::active(const model::MatmulOperand& operand) {
  // An operand some of whose GEMMs are transformed is copied for each of them, also where its point
  // is off: a GEMM that is not transformed would otherwise fall back to another GEMM's copy.
  return points_[operand.index].has_value() || injecting(operand.index) || profiling() || copies_differ(operand);
}

void QuantHooks::gather_hadamard_statistics(bool on) {
  gathering_hadamard_ = on && recipe_hadamard_;
  for (auto& gemms : hadamard_stats_) gemms.fill(std::nullopt);
}

const HadamardStats* QuantHooks::hadamard_stats(std::size_t index, recipe::Gemm gemm) const {
  const auto& stats = hadamard_stats_.at(index)[static_cast<std::size_t>(gemm)];
  return stats ? &*stats : nullptr;
}

void QuantHooks::enable_profiles(const format::Format& candidate) {
  candidate_.emplace(candidate, quant::range_thresholds(candidate));
}

// One call's values: its profile, and its range fit at the scale the point's scaling would choose
// for the candidate format. A block-scaled point's column-wise copy reads the same values as its
// row-wise one and is left out.
void QuantHooks::profile_call(const model::MatmulOperand& operand, std::span<const float> in) {
  const quant::PointQuantizer* point = points_[operand.index] ? &*points_[operand.index] : nullptr;
  const bool blocks = point && point->settings().scaling == quant::Scaling::block;
  if (blocks && operand.reduction == model::Reduction::along_rows) return;
  if (!profiles_[operand.index]) profiles_[operand.index].emplace();
  PointProfile& p = *profiles_[operand.index];
  // Causal attention probabilities: only the entries a query can attend to are values (row t of
  // each T × T tile holds keys 0..t; the rest are the mask's zeros, quant/causal_mask.hpp).
  std::vector<float> attendable;
  if (operand.causal) {
    for (std::size_t row = 0; row * operand.cols < in.size(); ++row) {
      const auto first = in.begin() + static_cast<std::ptrdiff_t>(row * operand.cols);
      attendable.insert(attendable.end(), first, first + static_cast<std::ptrdiff_t>(row % operand.cols + 1));
    }
  }
  const std::span<const float> values = operand.causal ? std::span<const float>(attendable) : in;
  p.values.add(values);
  const auto& [format, thresholds] = *candidate_;
  if (blocks) {  // blocks along the full rows, as quantized; the masked zeros then taken out
    p.fit_scale = "block";
    const std::size_t block = quant::block_length(point->settings(), operand.run ? operand.run : operand.cols);
    quant::add_range_fit_blocks(p.fit, thresholds, format, in, operand.cols, block, point->settings().scale_rule);
    p.fit.count -= in.size() - values.size();
    return;
  }
  range_fit(p, values, point);
}

void QuantHooks::range_fit(PointProfile& p, std::span<const float> in, const quant::PointQuantizer* point) {
  const auto& [format, thresholds] = *candidate_;
  float scale = 1.0f;
  if (!point) {
    p.fit_scale = "tensor (profile)";
    scale = quant::current_scale(format, in, 0);
  } else if (point->settings().scaling == quant::Scaling::tensor) {
    p.fit_scale = "tensor";
    scale = quant::per_tensor_scale(point->settings().scale_format,
                                    quant::current_scale(format, in, point->settings().margin));
  } else if (point->delayed()) {
    p.fit_scale = "delayed";
    const std::vector<float> history = point->delayed()->history();
    if (!history.empty()) {
      const float amax = point->settings().amax == quant::AmaxAlgorithm::max
                             ? *std::max_element(history.begin(), history.end())
                             : history.back();
      scale = quant::scale_from_amax(format, amax, point->settings().margin);
    }
  } else {
    p.fit_scale = "none";
  }
  quant::add_range_fit(p.fit, thresholds, in, scale);
}

bool QuantHooks::axis_dependent(const model::MatmulOperand& operand) {
  const auto& point = points_[operand.index];
  const bool blocked = point && point->settings().scaling == quant::Scaling::block && !point->settings().tiles;
  return blocked || copies_differ(operand);
}

// The values the point quantizes: `in` itself, or its transform for the GEMM that reads the copy,
// written straight to `out` where the point is off (the transform is then the copy).
std::span<const float> QuantHooks::transformed(const model::MatmulOperand& operand, std::span<const float> in,
                                               std::span<float> out) {
  if (hadamard_.signs(operand) == nullptr) return in;
  if (!quantizer(operand)) {
    hadamard_.transform(operand, in, out);
    return out;
  }
  if (hadamard_copy_.size() < in.size()) hadamard_copy_.resize(in.size());
  const std::span<float> copy = std::span<float>(hadamard_copy_).first(in.size());
  hadamard_.transform(operand, in, copy);
  return copy;
}

// grid() reads the scale of the copy its GEMM multiplies: where the copies differ by GEMM (a
// transformed GEMM beside a plain one under current scaling), each axis keeps its own.
void QuantHooks::record_scale(const model::MatmulOperand& operand, float scale) {
  std::array<float, 2>& scales = last_scale_[operand.index];
  if (copies_differ(operand)) {
    scales[static_cast<std::size_t>(operand.reduction)] = scale;
  } else {
    scales.fill(scale);
  }
}

quant::OperandLayout QuantHooks::layout_of(const model::MatmulOperand& operand) {
  return {operand.cols, operand.reduction == model::Reduction::along_rows, operand.run, operand.causal};
}

void QuantHooks::apply(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) {
  // One profile per operand and pass, of its values as they arrive: a tensor whose GEMMs read
  // different copies is profiled at its row-wise one.
  const bool second_copy = operand.reduction == model::Reduction::along_rows && copies_differ(operand);
  if (profiling() && !second_copy) profile_call(operand, in);
  const std::span<const float> values = transformed(operand, in, out);
  quant::PointQuantizer* point = quantizer(operand);
  std::optional<quant::PointStats> call;
  if (point) {
    call = point->apply(values, out, layout_of(operand), frozen_);
  } else if (values.data() != out.data()) {
    std::copy(in.begin(), in.end(), out.begin());
  }
  if (gathering_hadamard_ && !frozen_ && values.data() != in.data()) {
    const std::span<const float> quantized = point ? std::span<const float>(out) : std::span<const float>();
    const HadamardStats stats_of_call = measure_hadamard(in, values, quantized);
    auto& stats = hadamard_stats_[operand.index][static_cast<std::size_t>(*gemm_of(operand))];
    if (!stats) stats.emplace();
    stats->merge(stats_of_call);
  }
  const bool injected = injecting(operand.index) && !out.empty();
  if (injected) out[0] = std::numeric_limits<float>::quiet_NaN();
  finish_call(operand, call ? &*call : nullptr, injected);
}

void QuantHooks::use_device(quant::Engine& engine, ops::Memory& memory) { device_ = Device{&engine, &memory}; }

bool QuantHooks::runs_on_device(const model::MatmulOperand& operand) const {
  if (!device_ || profiling() || hadamard_.signs(operand) != nullptr || copies_differ(operand)) return false;
  const auto& point = points_[operand.index];
  return !point || point->engine_covers(layout_of(operand), frozen_);
}

void QuantHooks::apply_on_device(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) {
  if (!runs_on_device(operand)) {
    throw std::logic_error(std::string(operand.name) + ": apply_on_device for an operand that runs on the host");
  }
  std::optional<quant::PointStats> call;
  if (auto& point = points_[operand.index]) {
    call = point->apply(in, out, layout_of(operand), frozen_, device_->engine);
  } else {
    device_->memory->copy(out.data(), in.data(), in.size_bytes());
  }
  const bool injected = injecting(operand.index) && !out.empty();
  if (injected) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    device_->memory->upload(out.data(), &nan, sizeof nan);
  }
  finish_call(operand, call ? &*call : nullptr, injected);
}

void QuantHooks::finish_call(const model::MatmulOperand& operand, const quant::PointStats* call, bool injected) {
  const std::uint64_t non_finite = call ? call->values.nan_inputs + call->values.inf_inputs : 0;
  if (call) record_scale(operand, call->scale);
  if ((non_finite > 0 || injected) && !first_non_finite_ && !frozen_) {
    first_non_finite_ = NonFinitePoint{names_[operand.index], non_finite + (injected ? 1 : 0), injected};
  }
}

}  // namespace altgrad::precision
