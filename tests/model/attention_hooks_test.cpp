// The attention operands (h.{i}.attn.q, .k, .v, .probs) through the matmul hooks: what the two
// attention products read in the forward pass, and how the backward pass differentiates them
// (straight-through estimator).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "model/gpt.hpp"
#include "model_test_support.hpp"
#include "ops/attention_reference.hpp"
#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"

namespace {

using namespace altgrad::model;
using namespace altgrad::model_test;
using altgrad::ops_test::all_close;
using altgrad::ops_test::AttentionReference;
using altgrad::test_support::bit_identical;
using altgrad::ops_test::straight_through_attention;
using altgrad::ops_test::Tolerance;

const std::vector<Operand> kAttentionOperands{Operand::q, Operand::k, Operand::v, Operand::probs};

// Active at the given attention operands of every block, where it rewrites each element.
template <typename Scalar>
class AttentionHooks : public MatmulHooks<Scalar> {
 public:
  AttentionHooks(std::vector<Operand> operands, std::function<Scalar(Scalar)> rewrite)
      : operands_(std::move(operands)), rewrite_(std::move(rewrite)) {}
  bool active(const MatmulOperand& operand) override {
    return std::find(operands_.begin(), operands_.end(), operand.operand) != operands_.end();
  }
  void apply(const MatmulOperand&, std::span<const Scalar> in, std::span<Scalar> out) override {
    std::transform(in.begin(), in.end(), out.begin(), rewrite_);
  }

 private:
  std::vector<Operand> operands_;
  std::function<Scalar(Scalar)> rewrite_;
};

template <typename Scalar>
struct Outcome {
  Scalar loss;
  std::vector<Scalar> gradients;
};

template <typename Scalar>
Outcome<Scalar> forward_backward(Gpt<Scalar>& model, Activations<Scalar>& acts, const Batch& batch,
                             MatmulHooks<Scalar>* hooks) {
  model.zero_gradients();
  const Scalar loss = gpt_forward(model, acts, batch.tokens, batch.targets, hooks);
  gpt_backward(model, acts, hooks);
  return {loss, to_vector(std::as_const(model).gradients())};
}

double to_eighths(double x) { return std::round(x * 8) / 8; }

template <typename Scalar>
class AttentionHooksTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AttentionHooksTyped, ScalarTypes);

// Copying q, k, v and probs unchanged changes nothing: the split forward pass and the
// straight-through backward pass are exact.
TYPED_TEST(AttentionHooksTyped, IdentityHooksGiveTheSameBits) {
  Gpt<TypeParam> model(tiny_config(Norm::layernorm, Mlp::gelu, true));
  randomize_parameters(model, 101);
  const Batch batch = make_batch(model.config(), 2, 8, 102);
  Activations<TypeParam> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  AttentionHooks<TypeParam> identity(kAttentionOperands, [](TypeParam x) { return x; });
  const Outcome<TypeParam> hooked = forward_backward(model, acts, batch, &identity);
  const Outcome<TypeParam> plain = forward_backward(model, acts, batch, static_cast<MatmulHooks<TypeParam>*>(nullptr));
  EXPECT_TRUE(bit_identical(std::vector<TypeParam>{hooked.loss}, std::vector<TypeParam>{plain.loss})) << "loss";
  EXPECT_TRUE(bit_identical(hooked.gradients, plain.gradients)) << "gradients";
}

// q, k, v and probs rounded to a grid of 1/8: every block's attention output is the reference on
// the rounded operands, its probabilities the unrounded softmax, and block 0's dqkv (the last the
// backward pass leaves in acts.grad) is the straight-through gradient.
TEST(AttentionHooks, RoundedOperandsMatchTheStraightThroughReference) {
  Gpt<double> model(tiny_config(Norm::layernorm, Mlp::gelu, true));
  randomize_parameters(model, 103);
  const Batch batch = make_batch(model.config(), 2, 8, 104);
  Activations<double> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  AttentionHooks<double> rounding(kAttentionOperands, to_eighths);
  const Outcome<double> hooked = forward_backward(model, acts, batch, &rounding);

  const std::size_t C = model.config().n_embd, NH = model.config().n_head;
  const Tolerance tolerance{1e-12, 1e-12};
  for (std::size_t layer = 0; layer < model.config().n_layer; ++layer) {
    SCOPED_TRACE(layer);
    const LayerActivations<double>& l = acts.layers[layer];
    // Block 0's gradient of the attention output is still in acts.grad; the others' dout is unused.
    const std::vector<double> dout =
        layer == 0 ? to_vector(std::span(acts.grad.att_y)) : std::vector<double>(acts.grad.att_y.size());
    const AttentionReference reference = straight_through_attention(l.qkv, dout, batch.B, batch.T, C, NH, to_eighths);
    EXPECT_TRUE(all_close("att_y", to_vector(l.att_y), reference.out, tolerance));
    EXPECT_TRUE(all_close("att_probs", to_vector(l.att_probs), reference.probs, tolerance));
    if (layer == 0) {
      EXPECT_TRUE(all_close("dqkv", to_vector(acts.grad.qkv), reference.dqkv, tolerance));
    }
  }
  // The grid matters.
  Activations<double> plain_acts(model.config(), batch.B, batch.T);
  EXPECT_NE(hooked.loss, forward_backward<double>(model, plain_acts, batch, nullptr).loss);
}

// Zeroed keys make every score 0: each position attends uniformly to itself and the positions
// before it, so its output is the running mean of v, which passes unhooked.
TEST(AttentionHooks, ZeroedKeysGiveTheRunningMeanOfValues) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 105);
  const Batch batch = make_batch(model.config(), 2, 8, 106);
  Activations<double> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  AttentionHooks<double> zero_keys({Operand::k}, [](double) { return 0.0; });
  gpt_forward(model, acts, batch.tokens, batch.targets, &zero_keys);

  const std::size_t T = batch.T, C = model.config().n_embd;
  const LayerActivations<double>& l = acts.layers[1];
  for (std::size_t b = 0; b < batch.B; ++b) {
    for (std::size_t c = 0; c < C; ++c) {
      double sum = 0;
      for (std::size_t t = 0; t < T; ++t) {
        sum += l.qkv[(b * T + t) * 3 * C + 2 * C + c];
        ASSERT_NEAR(l.att_y[(b * T + t) * C + c], sum / static_cast<double>(t + 1), 1e-14) << b << " " << t << " " << c;
      }
    }
  }
}

// Zeroed values zero the output, while q and k pass unhooked: the probabilities are the plain
// model's, bit for bit, in the first block (whose input the hook cannot have changed yet).
TEST(AttentionHooks, ZeroedValuesLeaveTheProbabilities) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 107);
  const Batch batch = make_batch(model.config(), 2, 8, 108);
  Activations<double> hooked(model.config(), batch.B, batch.T, OperandCopies::allocated);
  Activations<double> plain(model.config(), batch.B, batch.T);
  AttentionHooks<double> zero_values({Operand::v}, [](double) { return 0.0; });
  gpt_forward(model, hooked, batch.tokens, batch.targets, &zero_values);
  gpt_forward(model, plain, batch.tokens, batch.targets);
  for (const double y : hooked.layers[0].att_y) ASSERT_EQ(y, 0.0);
  EXPECT_TRUE(bit_identical(to_vector(hooked.layers[0].att_probs), to_vector(plain.layers[0].att_probs))) << "probs";
}

// Zeroed probabilities zero the output and dv = probs_usedᵀ·dY, but the softmax is differentiated
// at the probabilities it produced, so q and k still get a gradient.
TEST(AttentionHooks, ZeroedProbabilitiesStillTeachQueriesAndKeys) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 109);
  const Batch batch = make_batch(model.config(), 2, 8, 110);
  Activations<double> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  AttentionHooks<double> zero_probs({Operand::probs}, [](double) { return 0.0; });
  forward_backward(model, acts, batch, &zero_probs);

  const std::size_t N = batch.B * batch.T, C = model.config().n_embd;
  for (const double y : acts.layers[0].att_y) ASSERT_EQ(y, 0.0);
  double qk_norm = 0;
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t c = 0; c < 3 * C; ++c) {
      const double g = acts.grad.qkv[n * 3 * C + c];
      if (c >= 2 * C) {
        ASSERT_EQ(g, 0.0) << "dv at row " << n;
      } else {
        qk_norm += g * g;
      }
    }
  }
  EXPECT_GT(qk_norm, 0.0);
}

// The probs operand arrives as (B·NH·T, T) tiles with its causal mask declared, so statistics can
// leave the masked zeros out; no other operand claims to be causal.
TEST(AttentionHooks, OnlyTheProbabilitiesAreDescribedAsCausal) {
  struct Recorder : MatmulHooks<double> {
    std::vector<MatmulOperand> seen;
    bool active(const MatmulOperand&) override { return true; }
    void apply(const MatmulOperand& operand, std::span<const double> in, std::span<double> out) override {
      seen.push_back(operand);
      std::copy(in.begin(), in.end(), out.begin());
    }
  };
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 111);
  const Batch batch = make_batch(model.config(), 2, 8, 112);
  Activations<double> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  Recorder recorder;
  gpt_forward(model, acts, batch.tokens, batch.targets, &recorder);
  std::size_t probs = 0;
  for (const MatmulOperand& operand : recorder.seen) {
    EXPECT_EQ(operand.causal, operand.operand == Operand::probs) << operand.name;
    if (operand.operand != Operand::probs) continue;
    ++probs;
    EXPECT_EQ(operand.rows, batch.B * model.config().n_head * batch.T);
    EXPECT_EQ(operand.cols, batch.T);
  }
  EXPECT_EQ(probs, model.config().n_layer);
}

}  // namespace
