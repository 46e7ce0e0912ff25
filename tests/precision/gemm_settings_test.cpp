// Per-GEMM settings on a Linear layer (docs/quantization.md, "Per-GEMM settings"): each GEMM reads
// its own copy of an operand whose settings differ by GEMM, quantized bit for bit as that GEMM's
// settings say (or left unquantized where they are off), an own copy on a random stream of its own; the
// GEMMs multiply those copies; gemm_point() holds each own copy's statistics; and an operand
// without per-GEMM settings keeps one copy for both of its GEMMs, as before.
#include <gtest/gtest.h>

#include <vector>

#include "format/philox.hpp"
#include "linear_gemms.hpp"
#include "mx_reference.hpp"
#include "precision/quant_hooks.hpp"
#include "support/bit_identical.hpp"
#include "support/one_block_model.hpp"

namespace altgrad::precision::gemm_settings_test {
namespace {

using model::MatmulOperand;
using model::Operand;
using model::Reduction;
using recipe::Gemm;

constexpr std::uint64_t kSeed = 9;

recipe::SettingsPatch patch_of(const char* format, quant::Scaling scaling) {
  recipe::SettingsPatch patch;
  patch.format = format;
  patch.scaling = scaling;
  return patch;
}

// Every Linear point E4M3 under current scaling; X's wgrad copy off (torchao's high-precision
// weight gradient), W's dgrad copy NVFP4-like (E2M1, E4M3 scales per 16, stochastic), dY's wgrad
// copy E5M2.
recipe::Recipe per_gemm_recipe(const model::MatmulPoints& points) {
  recipe::RecipeSpec spec;
  for (auto& role : spec.roles) patch_of("e4m3", quant::Scaling::tensor).apply_to(role, "test");
  recipe::SettingsPatch off;
  off.enabled = false;
  recipe::SettingsPatch nvfp4 = patch_of("e2m1", quant::Scaling::block);
  nvfp4.block = 16;
  nvfp4.scale_format = quant::BlockScaleFormat::e4m3;
  nvfp4.rounding = format::Rounding::stochastic;
  spec.overrides = {{"*:act", off, "test", Gemm::wgrad},
                    {"*:weight", nvfp4, "test", Gemm::dgrad},
                    {"*:grad", patch_of("e5m2", quant::Scaling::tensor), "test", Gemm::wgrad}};
  return recipe::Recipe{"test", kSeed, recipe::resolve(spec, recipe::recipe_points(points)), {}, {}, {}};
}

std::vector<float> values(std::size_t n, std::uint64_t stream, float magnitude) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(magnitude * (2.0 * (format::philox_word(5, stream, i) / 4294967296.0) - 1.0));
  }
  return v;
}

// One Linear's operand as the model describes it for the GEMM reading along `reduction`.
MatmulOperand described(const model::MatmulPoint& fc, std::size_t N, Operand operand, Reduction reduction) {
  return precision_test::LinearOperands{fc, N}.described(operand, reduction);
}

TEST(GemmSettings, EachGemmReadsItsOwnCopyQuantizedAsItsSettingsSay) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);  // C 64, OC 256
  const std::size_t N = 64;
  const recipe::Recipe r = per_gemm_recipe(points);
  QuantHooks hooks(points, r);
  hooks.begin_step(2, false);
  const std::vector<float> x = values(N * fc.in_features, 0, 3.0f), w = values(fc.out_features * fc.in_features, 1, 0.1f),
                           dy = values(N * fc.out_features, 2, 1e-3f);
  // The references: one quantizer per (operand, GEMM) from that GEMM's settings, on the point's
  // stream, or for an own copy on stream (1 + GEMM) · points + point (docs/quantization.md).
  const auto reference_copy = [&](Operand operand, Reduction reduction, const std::vector<float>& in) {
    const MatmulOperand d = described(fc, N, operand, reduction);
    const Gemm gemm = *gemm_of(d);
    const quant::PointSettings& s = r.points[d.index].settings_for(gemm);
    const bool own = r.points[d.index].by_gemm[static_cast<std::size_t>(gemm)].has_value();
    const std::size_t stream = own ? (1 + static_cast<std::size_t>(gemm)) * r.points.size() + d.index : d.index;
    std::vector<float> out(in);
    if (s.enabled) {
      quant::PointQuantizer q(s, kSeed, stream);
      q.begin_step(2);
      q.apply(in, out, quant::OperandLayout{d.cols, reduction == Reduction::along_rows, 0});
    }
    return out;
  };
  const std::vector<std::pair<Operand, Reduction>> calls = {
      {Operand::act, Reduction::along_cols},  {Operand::weight, Reduction::along_cols},
      {Operand::grad, Reduction::along_cols}, {Operand::weight, Reduction::along_rows},
      {Operand::grad, Reduction::along_rows}, {Operand::act, Reduction::along_rows}};
  for (const auto& [operand, reduction] : calls) {
    const MatmulOperand d = described(fc, N, operand, reduction);
    ASSERT_TRUE(hooks.active(d) && hooks.axis_dependent(d)) << d.name;
    const std::vector<float>& in = operand == Operand::act ? x : operand == Operand::weight ? w : dy;
    std::vector<float> copy(in.size());
    hooks.apply(d, in, copy);
    EXPECT_TRUE(test_support::bit_identical(copy, reference_copy(operand, reduction, in)))
        << d.name << " for " << recipe::gemm_name(*gemm_of(d));
  }
  // X's wgrad copy is X itself; the statistics of W's dgrad copy are its own, counted once.
  EXPECT_EQ(hooks.gemm_point(fc.index * 3, Gemm::wgrad), nullptr);
  const quant::PointQuantizer* w_dgrad = hooks.gemm_point(fc.index * 3 + 1, Gemm::dgrad);
  ASSERT_NE(w_dgrad, nullptr);
  EXPECT_EQ(w_dgrad->column_stats().values.count + w_dgrad->step_stats().values.count, w.size());
  EXPECT_EQ(hooks.point(fc.index * 3 + 1)->step_stats().values.count, w.size());  // its forward copy only
}

TEST(GemmSettings, AnOperandWithoutThemKeepsOneCopyForBothGemms) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  recipe::RecipeSpec spec;
  for (auto& role : spec.roles) patch_of("e4m3", quant::Scaling::tensor).apply_to(role, "test");
  recipe::SettingsPatch off;
  off.enabled = false;
  spec.overrides = {{"*:act", off, "test", Gemm::wgrad}};
  QuantHooks hooks(points, recipe::Recipe{"test", kSeed, recipe::resolve(spec, recipe::recipe_points(points)),
                                          {}, {}, {}});
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  EXPECT_TRUE(hooks.axis_dependent(described(fc, 32, Operand::act, Reduction::along_cols)));
  EXPECT_FALSE(hooks.axis_dependent(described(fc, 32, Operand::weight, Reduction::along_cols)));
  EXPECT_FALSE(hooks.axis_dependent(described(fc, 32, Operand::grad, Reduction::along_cols)));
}

TEST(GemmSettings, TheLinearMultipliesEachGemmsOwnCopy) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  const std::size_t N = 64, C = fc.in_features, OC = fc.out_features;
  const recipe::Recipe r = per_gemm_recipe(points);
  const std::vector<float> x = values(N * C, 3, 3.0f), w = values(OC * C, 4, 0.1f), dy = values(N * OC, 6, 1e-3f);
  QuantHooks hooks(points, r);
  hooks.begin_step(0, false);
  const precision_test::LinearPass pass = precision_test::linear_pass(fc, N, x, w, dy, hooks);

  // The copies again from fresh hooks, in the same order, and the three GEMMs on them in double.
  QuantHooks again(points, r);
  again.begin_step(0, false);
  const auto copy_of = [&](Operand o, Reduction red, const std::vector<float>& in) {
    std::vector<float> out(in.size());
    again.apply(described(fc, N, o, red), in, out);
    return out;
  };
  const std::vector<float> xf = copy_of(Operand::act, Reduction::along_cols, x),
                           wf = copy_of(Operand::weight, Reduction::along_cols, w),
                           dyd = copy_of(Operand::grad, Reduction::along_cols, dy),
                           wd = copy_of(Operand::weight, Reduction::along_rows, w),
                           dyw = copy_of(Operand::grad, Reduction::along_rows, dy),
                           xw = copy_of(Operand::act, Reduction::along_rows, x);
  ASSERT_FALSE(test_support::bit_identical(wf, wd));  // the GEMMs do read different copies
  ASSERT_TRUE(test_support::bit_identical(xw, x));
  const precision_test::DoubleGemms want = precision_test::double_gemms(fc, N, {xf, wf, dyd, wd, dyw, xw});
  EXPECT_LT(precision_test::relative_gap(pass.y, want.y), 1e-5);
  EXPECT_LT(precision_test::relative_gap(pass.dx, want.dx), 1e-5);
  EXPECT_LT(precision_test::relative_gap(pass.dw, want.dw), 1e-5);
}

}  // namespace
}  // namespace altgrad::precision::gemm_settings_test
