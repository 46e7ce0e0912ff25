#pragma once
// The model's MatmulHooks for a quantization recipe: one PointQuantizer per enabled point, the
// step boundaries that delayed scaling and statistics need, evaluation without state changes, the
// first point of a step at which a non-finite value appeared, and the recipe's Hadamard transforms
// of the GEMMs it names (hadamard_operands.hpp) with their statistics (hadamard_stats.hpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recipe/recipe.hpp"
#include "diag/value_profile.hpp"
#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "ops/memory.hpp"
#include "quant/engine.hpp"
#include "precision/hadamard_operands.hpp"
#include "precision/hadamard_stats.hpp"
#include "quant/point_quantizer.hpp"
#include "quant/range_fit.hpp"

namespace altgrad::precision {

// What passed a point in a profiled step (docs/quantization.md, "Value profiles").
struct PointProfile {
  diag::ValueProfile values;  // before quantization
  quant::RangeFit fit;        // of the candidate format, at the scale the point's scaling would choose
  std::string fit_scale;      // that scaling: "none", "tensor", "delayed", "block", or "tensor (profile)" where the point is off
};

// Where a non-finite value first entered a quantization point this step.
struct NonFinitePoint {
  std::string name;
  std::uint64_t count = 0;  // NaN and Inf inputs at that point in that call
  bool injected = false;    // put there by inject_nan
};

class QuantHooks final : public model::MatmulHooks<float> {
 public:
  QuantHooks(const model::MatmulPoints& points, const recipe::Recipe& recipe);

  // The point quantizer at a dense index, or null where the point is off.
  quant::PointQuantizer* point(std::size_t index) { return points_[index] ? &*points_[index] : nullptr; }
  const quant::PointQuantizer* point(std::size_t index) const { return points_[index] ? &*points_[index] : nullptr; }
  // The quantizer of the copy GEMM `gemm` reads where the recipe gives that copy settings of its
  // own (recipe::ResolvedPoint::by_gemm), or null where it does not or they leave the copy
  // unquantized; point() quantizes the other copies. Its statistics are that copy's.
  const quant::PointQuantizer* gemm_point(std::size_t index, recipe::Gemm gemm) const {
    const GemmCopy& copy = gemm_copies_[index][static_cast<std::size_t>(gemm)];
    return copy.quantizer ? &*copy.quantizer : nullptr;
  }
  const std::string& name(std::size_t index) const { return names_[index]; }
  std::size_t size() const { return points_.size(); }

  // collect_codes: gather per-code histograms this step (diagnostic steps). profile: profile every
  // point this step (needs enable_profiles()). error_sums: whether the points gather the error sums
  // behind rel_error this step (the trainer: on the steps that write a metrics line).
  void begin_step(std::int64_t step, bool collect_codes, bool profile = false,
                  quant::ErrorSums error_sums = quant::ErrorSums::gather);
  void end_step();
  // Frozen: evaluation passes, which use the scales and change nothing.
  void set_frozen(bool frozen) { frozen_ = frozen; }

  // Makes the first element of the point's operand NaN in training step `step`, after
  // quantization: a way to exercise the non-finite stop path.
  void inject_nan(std::size_t index, std::int64_t step);

  const std::optional<NonFinitePoint>& first_non_finite() const { return first_non_finite_; }

  // Hadamard statistics (hadamard_stats.hpp) of the transformed copies from now on, the earlier ones
  // dropped; or none. The trainer gathers them on the steps that write a metrics line.
  void gather_hadamard_statistics(bool on);
  // Whether the recipe transforms some GEMM's operands (recipe/hadamard_recipe.hpp).
  bool transforms() const { return recipe_hadamard_; }
  // What the transform did to the point's copy for GEMM `gemm` since gathering began; null where
  // that copy was not transformed or nothing was gathered.
  const HadamardStats* hadamard_stats(std::size_t index, recipe::Gemm gemm) const;

  // Value profiles with range fit for `candidate`: in a step begun with profile = true, every point,
  // quantized or not, is routed through apply() and profiled there before quantization. A point
  // that is off is copied unchanged, so the step computes the same bits.
  void enable_profiles(const format::Format& candidate);
  // The point's profile of the last profiled step; null where the point was not seen.
  const PointProfile* profile(std::size_t index) const { return profiles_[index] ? &*profiles_[index] : nullptr; }

  // True also for both operands of a GEMM the recipe's Hadamard element transforms, for each GEMM
  // that reads them, and for a point some GEMM's copy of which has settings of its own.
  bool active(const model::MatmulOperand& operand) override;
  // Quantizes along the operand's reduction axis (block scaling blocks along it). Where the GEMM
  // reading the copy is transformed, the copy is the transform of `in` along that axis, quantized
  // as the point says, or left as transformed where the point is off.
  void apply(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out) override;
  // True for block-scaled points, for the operands of a transformed GEMM and for points with
  // per-GEMM settings: each GEMM gets its own copy, blocked, transformed or quantized as its
  // settings say (X's forward copy stays plain when only wgrad is transformed).
  bool axis_dependent(const model::MatmulOperand& operand) override;
  // The recipe's model for the GEMM where both of its operands are quantized, else null.
  const format::AccumulatorModel* accumulation(const model::MatmulPoint& matmul, model::Gemm gemm) override;
  // The same for one of a block's two forward attention products.
  const format::AccumulatorModel* attention_accumulation(std::size_t layer, model::AttentionGemm gemm) override;
  // The point's format and the scale of its last call (1 under block scaling, whose copies hold
  // the grid's values times powers of two).
  ops::GridOperand grid(const model::MatmulOperand& operand) override;

  // For a model whose operands lie in `memory`, a device's: from now on the operands that
  // runs_on_device() accepts may be passed to apply_on_device() and are quantized there by `engine`
  // (quant/engine.hpp), with the same copies and statistics as apply() on the host. The others must
  // go through apply() on host copies (train/staged_hooks.hpp). Both outlive the hooks.
  void use_device(quant::Engine& engine, ops::Memory& memory);
  // Whether apply_on_device() can take this operand now: no profile, Hadamard transform or
  // per-GEMM settings, and a point that is off or whose call the engine covers
  // (quant::PointQuantizer::engine_covers).
  bool runs_on_device(const model::MatmulOperand& operand) const;
  void apply_on_device(const model::MatmulOperand& operand, std::span<const float> in, std::span<float> out);

 private:
  struct Device {
    quant::Engine* engine;
    ops::Memory* memory;
  };
  // A GEMM's copy with settings of its own: quantized by `quantizer`, or copied unchanged without one.
  struct GemmCopy {
    bool own = false;
    std::optional<quant::PointQuantizer> quantizer;
  };
  // The quantizer of the copy this operand describes, or null where that copy is left unquantized.
  quant::PointQuantizer* quantizer(const model::MatmulOperand& operand);
  const quant::PointQuantizer* quantizer(const model::MatmulOperand& operand) const;
  // Whether the GEMMs reading this operand's tensor read different copies (Hadamard or settings).
  bool copies_differ(const model::MatmulOperand& operand) const;
  static quant::OperandLayout layout_of(const model::MatmulOperand& operand);
  // After a copy (by the point's `call`, or none where the point is off, with a NaN `injected`):
  // the scale grid() reports and the step's first non-finite point.
  void finish_call(const model::MatmulOperand& operand, const quant::PointStats* call, bool injected);
  bool injecting(std::size_t index) const;
  bool profiling() const { return profiling_ && !frozen_; }
  void profile_call(const model::MatmulOperand& operand, std::span<const float> in);
  void range_fit(PointProfile& profile, std::span<const float> in, const quant::PointQuantizer* point);
  std::span<const float> transformed(const model::MatmulOperand& operand, std::span<const float> in,
                                     std::span<float> out);
  void record_scale(const model::MatmulOperand& operand, float scale);

  std::vector<std::optional<quant::PointQuantizer>> points_;
  std::vector<std::array<GemmCopy, recipe::kGemmCount>> gemm_copies_;  // by point, by Gemm
  std::vector<std::array<format::AccumulatorModel, recipe::kGemmCount>> accumulation_;  // by matmul index
  // By layer: the models of the attention's forward products.
  std::vector<std::array<format::AccumulatorModel, model::kAttentionGemmCount>> attention_accumulation_;
  // By point, by model::Reduction: the scale of the last call for the GEMMs reading along that axis.
  std::vector<std::array<float, 2>> last_scale_;
  HadamardOperands hadamard_;
  bool recipe_hadamard_ = false;
  std::vector<float> hadamard_copy_;  // a quantized point's transform, before it is quantized into the copy
  bool gathering_hadamard_ = false;
  std::vector<std::array<std::optional<HadamardStats>, recipe::kGemmCount>> hadamard_stats_;  // by point
  std::vector<std::string> names_;
  std::int64_t step_ = 0;
  bool frozen_ = false;
  std::optional<std::pair<std::size_t, std::int64_t>> injection_;
  std::optional<NonFinitePoint> first_non_finite_;
  std::optional<std::pair<format::Format, quant::RangeThresholds>> candidate_;
  bool profiling_ = false;
  std::vector<std::optional<PointProfile>> profiles_;
  std::optional<Device> device_;
};

}  // namespace altgrad::precision
