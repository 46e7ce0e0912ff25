// torchao's rowwise float8 recipes on a Linear layer, against a reference written here from their
// definition (torchao/float8/config.py, Float8LinearConfig.from_recipe_name; float8_utils.py,
// amax_to_scale): each operand a GEMM reads is cast to E4M3 at a scale per line along that GEMM's
// reduction axis ("axiswise"), s = fl32(448 / max(amax, 10⁻¹²)) computed in double, rounded down to a
// power of two, and the value read back is RNE_E4M3(x · s) / s.
//   rowwise:             every copy of X, W and dY so.
//   rowwise_with_gw_hp:  the forward GEMM and dY's dgrad copy so; W in dgrad at one such scale for
//                        the whole tensor; wgrad on X and dY as they are.
// 1280 tokens make wgrad's lines longer than the MX kernels' blocks (1024), so the whole-axis
// blocks go through the long path. The rounding to a power of two is the exact floor (torch takes
// exp2(floor(log2 s)) in FP32; docs/quantization.md says where that can differ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "format/codec.hpp"
#include "format/parse.hpp"
#include "linear_gemms.hpp"
#include "mx_reference.hpp"
#include "precision/quant_hooks.hpp"
#include "recipe/recipe_spec.hpp"
#include "support/bit_identical.hpp"
#include "support/one_block_model.hpp"

namespace altgrad::precision::torchao_rowwise_test {
namespace {

using model::Operand;
using model::Reduction;
using precision_test::floor_log2;

constexpr std::size_t kTokens = 1280;

// How one copy is scaled: per line along the rows' or the columns' axis, once for the tensor, or
// not quantized.
enum class Lines { along_cols, along_rows, tensor, none };

float torchao_scale(double amax) {
  const float s = static_cast<float>(448.0 / std::max(amax, 1e-12));
  return std::ldexp(1.0f, floor_log2(s));
}

std::vector<float> torchao_copy(const std::vector<float>& x, std::size_t rows, std::size_t cols, Lines lines) {
  if (lines == Lines::none) return x;
  const format::Format e4m3 = format::make_format(format::parse_format("e4m3"));
  const auto line_of = [&](std::size_t r, std::size_t c) {
    return lines == Lines::along_cols ? r : lines == Lines::along_rows ? c : 0;
  };
  const std::size_t line_count = lines == Lines::along_cols ? rows : lines == Lines::along_rows ? cols : 1;
  std::vector<double> amax(line_count, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      amax[line_of(r, c)] = std::max(amax[line_of(r, c)], std::fabs(static_cast<double>(x[r * cols + c])));
    }
  }
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const float s = torchao_scale(amax[line_of(r, c)]);
      const float q = format::decode(e4m3, format::encode(e4m3, format::Rounding::nearest_even, x[r * cols + c] * s));
      y[r * cols + c] = q / s;
    }
  }
  return y;
}

struct Operands {
  std::vector<float> x, w, dy;
};

// X with one all-zero token (torchao's 10⁻¹² floor on amax, AltGrad's scale 1: zeros either way).
Operands operands_of(const model::MatmulPoint& fc) {
  Operands o{precision_test::graded_values(kTokens, fc.in_features, 7, 0, 3.0, 9),
             precision_test::graded_values(fc.out_features, fc.in_features, 7, 1, 0.05, 5),
             precision_test::graded_values(kTokens, fc.out_features, 7, 2, 1e-4, 11)};
  std::fill_n(o.x.begin() + 5 * fc.in_features, fc.in_features, 0.0f);
  return o;
}

struct Case {
  const char* preset;
  Lines w_dgrad, wgrad;  // the other copies are per line along their GEMM's axis in both
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.preset; }

class TorchaoRowwise : public ::testing::TestWithParam<Case> {};

TEST_P(TorchaoRowwise, EachGemmReadsTheCopiesTheRecipeDefines) {
  const Case& c = GetParam();
  const model::MatmulPoints points(test_support::one_block_model(2, 32, 64));
  const model::MatmulPoint& fc = points.block(0, model::BlockMatmul::mlp_c_fc);  // C 32, OC 128
  const std::size_t C = fc.in_features, OC = fc.out_features;
  const recipe::Recipe r{c.preset, 3, recipe::resolve(recipe::preset(c.preset), recipe::recipe_points(points)), {}, {}, {}};
  const Operands o = operands_of(fc);
  QuantHooks hooks(points, r);
  hooks.begin_step(0, false);
  const precision_test::LinearOperands described{fc, kTokens};
  const auto copy_of = [&](Operand operand, Reduction reduction, const std::vector<float>& in) {
    std::vector<float> out(in.size());
    hooks.apply(described.described(operand, reduction), in, out);
    return out;
  };
  const std::vector<float> x_forward = copy_of(Operand::act, Reduction::along_cols, o.x),
                           w_forward = copy_of(Operand::weight, Reduction::along_cols, o.w),
                           dy_dgrad = copy_of(Operand::grad, Reduction::along_cols, o.dy),
                           w_dgrad = copy_of(Operand::weight, Reduction::along_rows, o.w),
                           dy_wgrad = copy_of(Operand::grad, Reduction::along_rows, o.dy),
                           x_wgrad = copy_of(Operand::act, Reduction::along_rows, o.x);
  EXPECT_TRUE(test_support::bit_identical(x_forward, torchao_copy(o.x, kTokens, C, Lines::along_cols)));
  EXPECT_TRUE(test_support::bit_identical(w_forward, torchao_copy(o.w, OC, C, Lines::along_cols)));
  EXPECT_TRUE(test_support::bit_identical(dy_dgrad, torchao_copy(o.dy, kTokens, OC, Lines::along_cols)));
  EXPECT_TRUE(test_support::bit_identical(w_dgrad, torchao_copy(o.w, OC, C, c.w_dgrad)));
  EXPECT_TRUE(test_support::bit_identical(dy_wgrad, torchao_copy(o.dy, kTokens, OC, c.wgrad)));
  EXPECT_TRUE(test_support::bit_identical(x_wgrad, torchao_copy(o.x, kTokens, C, c.wgrad)));

  // The Linear multiplies those copies: its three GEMMs against the same products in double.
  QuantHooks pass_hooks(points, r);
  pass_hooks.begin_step(0, false);
  const precision_test::LinearPass pass = precision_test::linear_pass(fc, kTokens, o.x, o.w, o.dy, pass_hooks);
  const precision_test::DoubleGemms want =
      precision_test::double_gemms(fc, kTokens, {x_forward, w_forward, dy_dgrad, w_dgrad, dy_wgrad, x_wgrad});
  EXPECT_LT(precision_test::relative_gap(pass.y, want.y), 1e-5);
  EXPECT_LT(precision_test::relative_gap(pass.dx, want.dx), 1e-5);
  EXPECT_LT(precision_test::relative_gap(pass.dw, want.dw), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Recipes, TorchaoRowwise,
                         ::testing::Values(Case{"torchao-rowwise", Lines::along_rows, Lines::along_rows},
                                           Case{"torchao-rowwise-gw-hp", Lines::tensor, Lines::none}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.preset;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace altgrad::precision::torchao_rowwise_test
