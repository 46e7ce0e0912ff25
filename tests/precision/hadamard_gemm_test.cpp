// Hadamard transforms on a Linear layer's GEMMs (docs/quantization.md, "Hadamard transforms"):
//   - with every point unquantized, a training step's loss and gradients are the plain step's up to
//     FP32 rounding, since both operands of each GEMM get the same orthogonal Q (A·Q)(B·Q)ᵀ = A·Bᵀ;
//   - each copy is quant/hadamard.hpp's transform along its GEMM's reduction axis (the rows' C for
//     the forward, OC for dgrad, down the N tokens for wgrad), then quantized as the point says, bit
//     for bit, with the signs the recipe names; a GEMM that is not transformed reads a plain copy;
//   - the GEMMs multiply those copies, and grid() gives each copy's own scale.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "format/philox.hpp"
#include "format/philox_key.hpp"
#include "linear_gemms.hpp"
#include "mx_reference.hpp"
#include "model/gpt.hpp"
#include "precision/quant_hooks.hpp"
#include "quant/hadamard.hpp"
#include "support/bit_identical.hpp"
#include "support/one_block_model.hpp"

namespace altgrad::precision {
namespace {

using model::MatmulOperand;
using model::Operand;
using model::Reduction;
using precision_test::double_gemms;
using precision_test::DoubleGemms;
using precision_test::linear_pass;
using precision_test::LinearOperands;
using precision_test::LinearPass;
using precision_test::relative_gap;
using recipe::Gemm;

constexpr std::uint64_t kHadamardSeed = 7;

recipe::HadamardSpec hadamard_on(std::initializer_list<Gemm> gemms, std::size_t size, recipe::HadamardSigns signs,
                                 const char* match = "*") {
  recipe::HadamardSpec spec;
  for (const Gemm g : gemms) spec.gemms[static_cast<std::size_t>(g)] = true;
  spec.size = size;
  spec.signs = signs;
  spec.match = match;
  return spec;
}

// `roles` patched onto every Linear point (none: all off), with the Hadamard element `hadamard`.
recipe::Recipe recipe_with(const model::MatmulPoints& points, const recipe::HadamardSpec& hadamard,
                           const char* format = nullptr, quant::Scaling scaling = quant::Scaling::none) {
  recipe::RecipeSpec spec;
  if (format != nullptr) {
    for (auto& role : spec.roles) {
      recipe::SettingsPatch patch;
      patch.format = format;
      patch.scaling = scaling;
      patch.apply_to(role, "test");
    }
  }
  return recipe::Recipe{"test", kHadamardSeed, recipe::resolve(spec, recipe::recipe_points(points)), {}, {}, hadamard};
}

std::vector<float> values_with_outlier(std::size_t n, std::uint64_t stream, float magnitude) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(magnitude * (2.0 * (format::philox_word(11, stream, i) / 4294967296.0) - 1.0));
  }
  v[n / 3] = 20 * magnitude;  // an outlier for the transform to spread
  return v;
}

// ---- A training step with every point off ---------------------------------------------------------

struct HadamardStep {
  double loss;
  std::vector<float> gradients;
};

HadamardStep hadamard_training_step(model::Gpt<float>& gpt, precision::QuantHooks* hooks, std::size_t B, std::size_t T) {
  std::vector<std::int32_t> tokens(B * T), targets(B * T);
  for (std::size_t i = 0; i < B * T; ++i) {
    tokens[i] = static_cast<std::int32_t>(format::philox_word(3, 0, i) % 256);
    targets[i] = static_cast<std::int32_t>(format::philox_word(3, 1, i) % 256);
  }
  model::Activations<float> acts(gpt.config(), B, T, model::OperandCopies::allocated);
  gpt.zero_gradients();
  if (hooks) hooks->begin_step(0, false);
  const double loss = model::gpt_forward<float>(gpt, acts, tokens, targets, hooks);
  model::gpt_backward<float>(gpt, acts, hooks);
  return {loss, {gpt.gradients().begin(), gpt.gradients().end()}};
}

struct UnquantizedCase {
  std::vector<Gemm> gemms;
  std::size_t size;
  recipe::HadamardSigns signs;
};

class UnquantizedHadamard : public ::testing::TestWithParam<UnquantizedCase> {};

TEST_P(UnquantizedHadamard, TrainingStepEqualsThePlainOneToFp32Rounding) {
  model::GptConfig config = test_support::one_block_model(2, 64, 32);
  config.n_layer = 2;
  model::Gpt<float> gpt(config);
  gpt.initialize(5);
  const std::size_t B = 2, T = 32;
  const HadamardStep plain = hadamard_training_step(gpt, nullptr, B, T);

  recipe::HadamardSpec spec;
  for (const Gemm g : GetParam().gemms) spec.gemms[static_cast<std::size_t>(g)] = true;
  spec.size = GetParam().size;
  spec.signs = GetParam().signs;
  spec.match = "*";  // the LM head too
  precision::QuantHooks hooks(gpt.matmuls(), recipe_with(gpt.matmuls(), spec));
  hooks.gather_hadamard_statistics(true);
  const HadamardStep transformed = hadamard_training_step(gpt, &hooks, B, T);

  EXPECT_NEAR(transformed.loss, plain.loss, 1e-6 * plain.loss);
  double largest = 0, gap = 0;
  for (std::size_t i = 0; i < plain.gradients.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(plain.gradients[i])));
    gap = std::max(gap, std::fabs(static_cast<double>(transformed.gradients[i]) - plain.gradients[i]));
  }
  EXPECT_LT(gap, 1e-5 * largest) << "largest gradient " << largest;
  // The transform did run: the copies were rotated (the outliers spread) and nothing rounded them.
  std::size_t seen = 0;
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    for (const Gemm g : GetParam().gemms) {
      const HadamardStats* s = hooks.hadamard_stats(i, g);
      if (s == nullptr) continue;
      ++seen;
      EXPECT_NE(s->amax_before, s->amax_after) << hooks.name(i);
      EXPECT_FALSE(s->quantized);
    }
  }
  EXPECT_EQ(seen, 2 * GetParam().gemms.size() * gpt.matmuls().all().size());
}

INSTANTIATE_TEST_SUITE_P(
    GemmsSizesSigns, UnquantizedHadamard,
    ::testing::Values(UnquantizedCase{{Gemm::wgrad}, 16, recipe::HadamardSigns::te},
                      UnquantizedCase{{Gemm::forward}, 32, recipe::HadamardSigns::seeded},
                      UnquantizedCase{{Gemm::dgrad}, 64, recipe::HadamardSigns::none},
                      UnquantizedCase{{Gemm::forward, Gemm::dgrad, Gemm::wgrad}, 32, recipe::HadamardSigns::seeded}));

// ---- Each copy, bit for bit -------------------------------------------------------------------------

// The signs the docs define: TE's 0xD7E8, all +1, or Philox under the hadamard_signs purpose at stream
// 3·matmul index + GEMM.
std::vector<float> documented_signs(recipe::HadamardSigns signs, std::size_t n, std::size_t matmul, Gemm gemm) {
  if (signs == recipe::HadamardSigns::te) return quant::transformer_engine_signs();
  if (signs == recipe::HadamardSigns::none) return std::vector<float>(n, 1.0f);
  const std::uint64_t key = format::philox_key(kHadamardSeed, format::RandomPurpose::hadamard_signs);
  return quant::random_signs(n, key, 3 * matmul + static_cast<std::size_t>(gemm));
}

struct CopyCase {
  recipe::HadamardSigns signs;
  std::size_t size;
};

class HadamardCopies : public ::testing::TestWithParam<CopyCase> {};

// NVFP4-like points (E2M1, E4M3 scales per 16, stochastic rounding: the words each call draws
// follow the point's counter, so the calls are made in the same order on both sides).
TEST_P(HadamardCopies, AreTheTransformAlongTheReductionAxisThenQuantized) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);  // C 64, OC 256
  const std::size_t N = 64;                                                        // two sequences of 32
  const LinearOperands ops{fc, N};
  const recipe::HadamardSpec spec = hadamard_on({Gemm::forward, Gemm::dgrad, Gemm::wgrad}, GetParam().size,
                                                GetParam().signs, "h.0.mlp.c_fc");
  recipe::Recipe r = recipe_with(points, spec, "e2m1", quant::Scaling::block);
  for (auto& p : r.points) {
    p.settings.block = 16;
    p.settings.scale_format = quant::BlockScaleFormat::e4m3;
    p.settings.rounding = format::Rounding::stochastic;
  }
  precision::QuantHooks hooks(points, r);
  hooks.begin_step(3, false);
  std::vector<quant::PointQuantizer> reference;
  for (std::size_t o = 0; o < model::kOperandsPerMatmul; ++o) {
    reference.emplace_back(r.points[fc.index * 3 + o].settings, kHadamardSeed, fc.index * 3 + o);
    reference.back().begin_step(3);
  }
  const std::vector<float> x = values_with_outlier(N * fc.in_features, 0, 1.0f),
                           w = values_with_outlier(fc.out_features * fc.in_features, 1, 0.1f),
                           dy = values_with_outlier(N * fc.out_features, 2, 0.01f);
  const auto source = [&](Operand o) -> const std::vector<float>& {
    return o == Operand::act ? x : o == Operand::weight ? w : dy;
  };
  // The order linear_forward and linear_backward ask in.
  const std::vector<std::pair<Operand, Reduction>> calls = {
      {Operand::act, Reduction::along_cols},  {Operand::weight, Reduction::along_cols},
      {Operand::grad, Reduction::along_cols}, {Operand::weight, Reduction::along_rows},
      {Operand::grad, Reduction::along_rows}, {Operand::act, Reduction::along_rows}};
  for (const auto& [operand, reduction] : calls) {
    const MatmulOperand d = ops.described(operand, reduction);
    ASSERT_TRUE(hooks.active(d) && hooks.axis_dependent(d));
    const std::vector<float>& in = source(operand);
    std::vector<float> copy(in.size()), transformed(in.size()), expected(in.size());
    hooks.apply(d, in, copy);
    const Gemm gemm = *gemm_of(d);
    const std::vector<float> signs = documented_signs(GetParam().signs, GetParam().size, fc.index, gemm);
    const bool columns = reduction == Reduction::along_rows;
    if (columns) {
      quant::hadamard_columns(in, transformed, d.cols, signs);
    } else {
      quant::hadamard_rows(in, transformed, d.cols, signs);
    }
    reference[static_cast<std::size_t>(operand)].apply(transformed, expected, quant::OperandLayout{d.cols, columns, 0});
    EXPECT_TRUE(test_support::bit_identical(copy, expected)) << d.name << " for " << recipe::gemm_name(gemm);
  }
}

INSTANTIATE_TEST_SUITE_P(SignsAndSizes, HadamardCopies,
                         ::testing::Values(CopyCase{recipe::HadamardSigns::te, 16},
                                           CopyCase{recipe::HadamardSigns::seeded, 32},
                                           CopyCase{recipe::HadamardSigns::none, 64}));

// Along the tokens a group is n consecutive positions of one sequence: with T = 32 and n = 16 the
// first group of column c is rows 0..15, never rows of the next sequence.
TEST(HadamardCopies, WgradGroupsAreConsecutiveTokensOfOneSequence) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  precision::QuantHooks hooks(points, recipe_with(points, hadamard_on({Gemm::wgrad}, 16, recipe::HadamardSigns::none)));
  const std::size_t N = 64, C = fc.in_features;
  std::vector<float> x(N * C, 0.0f), copy(N * C);
  x[17 * C + 5] = 4.0f;  // token 17 of sequence 0, channel 5
  hooks.apply(LinearOperands{fc, N}.described(Operand::act, Reduction::along_rows), x, copy);
  for (std::size_t n = 0; n < N; ++n) {
    const bool in_group = n >= 16 && n < 32;  // H_16/4 spreads it as ±1 over tokens 16..31 of column 5
    EXPECT_EQ(std::fabs(copy[n * C + 5]), in_group ? 1.0f : 0.0f) << n;
  }
}

TEST(HadamardCopies, AGemmThatIsNotTransformedReadsThePlainCopy) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  const recipe::Recipe r = recipe_with(points, hadamard_on({Gemm::wgrad}, 16, recipe::HadamardSigns::te), "e4m3",
                                       quant::Scaling::tensor);
  precision::QuantHooks hooks(points, r);
  hooks.begin_step(0, false);
  const LinearOperands ops{fc, 32};
  const std::vector<float> x = values_with_outlier(32 * fc.in_features, 4, 1.0f);
  std::vector<float> copy(x.size()), expected(x.size());
  const MatmulOperand forward_x = ops.described(Operand::act, Reduction::along_cols);
  EXPECT_TRUE(hooks.axis_dependent(forward_x));  // its wgrad copy differs, so each GEMM gets its own
  hooks.apply(forward_x, x, copy);
  quant::PointQuantizer reference(r.points[forward_x.index].settings, kHadamardSeed, forward_x.index);
  reference.apply(x, expected, quant::OperandLayout{fc.in_features, false, 0});
  EXPECT_TRUE(test_support::bit_identical(copy, expected));
  // W is read by forward and dgrad, neither transformed: one copy serves both, as before.
  EXPECT_FALSE(hooks.axis_dependent(ops.described(Operand::weight, Reduction::along_cols)));
}

// ---- The GEMMs multiply those copies ---------------------------------------------------------------

TEST(HadamardGemms, LinearMultipliesEachGemmsOwnCopyAndGridGivesItsScale) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  const std::size_t N = 64, C = fc.in_features, OC = fc.out_features;
  // Current per-tensor scaling: the transformed copy's amax differs, so its scale does too.
  const recipe::Recipe r = recipe_with(points, hadamard_on({Gemm::wgrad}, 16, recipe::HadamardSigns::te), "e4m3",
                                       quant::Scaling::tensor);
  const std::vector<float> x = values_with_outlier(N * C, 5, 1.0f), w = values_with_outlier(OC * C, 6, 0.1f),
                           dy = values_with_outlier(N * OC, 7, 0.01f);
  precision::QuantHooks hooks(points, r);
  hooks.begin_step(0, false);
  const LinearPass pass = linear_pass(fc, N, x, w, dy, hooks);

  // The copies again, from a second set of hooks, and the three GEMMs on them in double. W is not
  // transformed: dgrad reads the forward's copy.
  precision::QuantHooks again(points, r);
  again.begin_step(0, false);
  const LinearOperands ops{fc, N};
  const auto copy_of = [&](Operand o, Reduction red, const std::vector<float>& in) {
    std::vector<float> out(in.size());
    again.apply(ops.described(o, red), in, out);
    return out;
  };
  const std::vector<float> xf = copy_of(Operand::act, Reduction::along_cols, x),
                           wf = copy_of(Operand::weight, Reduction::along_cols, w),
                           dyd = copy_of(Operand::grad, Reduction::along_cols, dy),
                           dyw = copy_of(Operand::grad, Reduction::along_rows, dy),
                           xw = copy_of(Operand::act, Reduction::along_rows, x);
  const DoubleGemms want = double_gemms(fc, N, {xf, wf, dyd, wf, dyw, xw});
  EXPECT_LT(relative_gap(pass.y, want.y), 1e-5);
  EXPECT_LT(relative_gap(pass.dx, want.dx), 1e-5);
  EXPECT_LT(relative_gap(pass.dw, want.dw), 1e-5);

  // grid(): each of dY's copies with its own scale, on which its values are E4M3 grid values.
  const float dgrad_scale = hooks.grid(ops.described(Operand::grad, Reduction::along_cols)).scale;
  const float wgrad_scale = hooks.grid(ops.described(Operand::grad, Reduction::along_rows)).scale;
  EXPECT_NE(dgrad_scale, wgrad_scale);
  // x̂·s is a grid value up to the rounding of x̂ = q/s to FP32: E4M3 has 8 steps per binade
  // above 2^-6 and steps of 2^-9 below.
  const auto on_e4m3_grid = [](const std::vector<float>& copy, float scale) {
    for (const float v : copy) {
      const double g = static_cast<double>(v) * scale;
      int exponent = 0;
      const double mantissa = std::frexp(std::fabs(g), &exponent);  // g = mantissa · 2^exponent, mantissa in [0.5, 1)
      const double steps = exponent - 1 >= -6 ? std::ldexp(mantissa, 4) : std::ldexp(std::fabs(g), 9);
      if (std::fabs(g) > 448.001 || std::fabs(steps - std::round(steps)) > 1e-4) return false;
    }
    return true;
  };
  EXPECT_TRUE(on_e4m3_grid(pass.dy_rows, dgrad_scale));
  EXPECT_TRUE(on_e4m3_grid(pass.dy_columns, wgrad_scale));
  EXPECT_FALSE(on_e4m3_grid(pass.dy_columns, dgrad_scale));  // so sharing the scale would re-round the copy
}

// ---- Refusals at run time ----------------------------------------------------------------------

TEST(HadamardGemms, RefusesAnAxisTheSizeDoesNotDivide) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);
  precision::QuantHooks hooks(points, recipe_with(points, hadamard_on({Gemm::wgrad}, 32, recipe::HadamardSigns::none)));
  const MatmulOperand x = LinearOperands{fc, 48}.described(Operand::act, Reduction::along_rows);
  std::vector<float> in(48 * fc.in_features), out(in.size());
  try {
    hooks.apply(x, in, out);
    FAIL() << "48 tokens taken in groups of 32";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("h.0.mlp.c_fc:act: Hadamard size 32 does not divide"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("48 tokens"), std::string::npos) << e.what();
  }
}

TEST(HadamardGemms, AttentionOperandsAreNeverTransformed) {
  const model::MatmulPoints points(test_support::one_block_model(2, 64, 32));
  precision::QuantHooks hooks(points, recipe_with(points, hadamard_on({Gemm::forward, Gemm::dgrad, Gemm::wgrad}, 16,
                                                                      recipe::HadamardSigns::te)));
  for (const Operand o : {Operand::q, Operand::k, Operand::v, Operand::probs}) {
    const model::OperandPoint& p = points.attention(0, o);
    for (const Reduction red : {Reduction::along_cols, Reduction::along_rows}) {
      const MatmulOperand d{p.name, "h.0.attn", o, p.index, 64, 64, red};
      EXPECT_FALSE(hooks.active(d)) << p.name;
      EXPECT_FALSE(hooks.axis_dependent(d)) << p.name;
    }
  }
}

}  // namespace
}  // namespace altgrad::precision
