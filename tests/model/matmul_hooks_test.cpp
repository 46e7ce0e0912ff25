#include "model/gpt.hpp"
#include "model/matmul_hooks.hpp"
#include "model_test_support.hpp"
#include "ops/test_tensors.hpp"
#include "support/bit_identical.hpp"

namespace {

using namespace altgrad::model;
using namespace altgrad::model_test;
using altgrad::test_support::bit_identical;

struct Visit {
  std::string name, matmul;
  Operand operand;
  std::size_t index, rows, cols;
  bool operator==(const Visit&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Visit& v) {
  return out << v.name << " #" << v.index << " (" << v.rows << ", " << v.cols << ")";
}

// Active at every point; copies the operand unchanged and records the call.
class RecordingHooks : public MatmulHooks<double> {
 public:
  bool active(const MatmulOperand&) override { return true; }
  void apply(const MatmulOperand& operand, std::span<const double> in, std::span<double> out) override {
    visits.push_back({std::string(operand.name), std::string(operand.matmul), operand.operand, operand.index,
                      operand.rows, operand.cols});
    sizes_match = sizes_match && in.size() == operand.rows * operand.cols && out.size() == in.size();
    std::copy(in.begin(), in.end(), out.begin());
  }
  std::vector<Visit> visits;
  bool sizes_match = true;
};

// Active at one point only, where it rewrites each element.
class OnePointHooks : public MatmulHooks<double> {
 public:
  OnePointHooks(std::string point, std::function<double(double)> rewrite)
      : point_(std::move(point)), rewrite_(std::move(rewrite)) {}
  bool active(const MatmulOperand& operand) override { return operand.name == point_; }
  void apply(const MatmulOperand&, std::span<const double> in, std::span<double> out) override {
    std::transform(in.begin(), in.end(), out.begin(), rewrite_);
  }

 private:
  std::string point_;
  std::function<double(double)> rewrite_;
};

struct Result {
  double loss;
  std::vector<double> gradients;
};

Result run(Gpt<double>& model, const Batch& batch, MatmulHooks<double>* hooks) {
  Activations<double> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
  model.zero_gradients();
  const double loss = gpt_forward(model, acts, batch.tokens, batch.targets, hooks);
  gpt_backward(model, acts, hooks);
  return {loss, to_vector(model.gradients())};
}

void expect_same_bits(const Result& a, const Result& b) {
  EXPECT_TRUE(bit_identical(std::vector<double>{a.loss}, std::vector<double>{b.loss})) << "loss";
  EXPECT_TRUE(bit_identical(a.gradients, b.gradients)) << "gradients";
}

// Every point named in DESIGN.md, in pass order, with the operand's shape.
std::vector<Visit> expected_visits(const GptConfig& config, std::size_t B, std::size_t T) {
  const std::size_t C = config.n_embd, H = hidden_size(config), I = mlp_inner_size(config), V = config.vocab_size;
  const std::size_t N = B * T, NH = config.n_head;
  struct Matmul {
    std::string name;
    std::size_t in, out;
  };
  std::vector<Matmul> matmuls;
  for (std::size_t i = 0; i < config.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    matmuls.push_back({h + "attn.c_attn", C, 3 * C});
    matmuls.push_back({h + "attn.c_proj", C, C});
    matmuls.push_back({h + "mlp.c_fc", C, I});
    matmuls.push_back({h + "mlp.c_proj", H, C});
  }
  matmuls.push_back({"lm_head", C, V});
  // The attention operands follow c_attn in each block; their dense indices follow all matmul
  // operands, four per block.
  const std::size_t first_attention_index = 3 * matmuls.size();
  const auto attention_visits = [&](std::size_t layer) {
    const std::string attn = "h." + std::to_string(layer) + ".attn";
    const std::size_t index = first_attention_index + 4 * layer;
    return std::vector<Visit>{{attn + ".q", attn, Operand::q, index, N, C},
                              {attn + ".k", attn, Operand::k, index + 1, N, C},
                              {attn + ".v", attn, Operand::v, index + 2, N, C},
                              {attn + ".probs", attn, Operand::probs, index + 3, B * NH * T, T}};
  };
  std::vector<Visit> visits;
  for (std::size_t m = 0; m < matmuls.size(); ++m) {
    const Matmul& mm = matmuls[m];
    visits.push_back({mm.name + ":act", mm.name, Operand::act, 3 * m, N, mm.in});
    visits.push_back({mm.name + ":weight", mm.name, Operand::weight, 3 * m + 1, mm.out, mm.in});
    if (m % 4 == 0 && m / 4 < config.n_layer) {  // attn.c_attn of block m / 4
      for (const Visit& visit : attention_visits(m / 4)) visits.push_back(visit);
    }
  }
  // The backward pass runs the matmuls in reverse: lm_head, then each block's mlp.c_proj, mlp.c_fc,
  // attn.c_proj, attn.c_attn from the last block down.
  for (std::size_t m = matmuls.size(); m-- > 0;) {
    visits.push_back({matmuls[m].name + ":grad", matmuls[m].name, Operand::grad, 3 * m + 2, N, matmuls[m].out});
  }
  return visits;
}

TEST(MatmulHooks, EveryPointIsVisitedOnceWithItsShape) {
  for (const Mlp mlp : {Mlp::gelu, Mlp::swiglu}) {
    Gpt<double> model(tiny_config(Norm::layernorm, mlp, true));
    randomize_parameters(model, 81);
    const Batch batch = make_batch(model.config(), 2, 6, 82);
    RecordingHooks hooks;
    run(model, batch, &hooks);
    EXPECT_TRUE(hooks.sizes_match);
    const std::vector<Visit> expected = expected_visits(model.config(), batch.B, batch.T);
    ASSERT_EQ(hooks.visits.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(hooks.visits[i], expected[i]) << "visit " << i;
  }
}

// Copying operands unchanged changes nothing: the seam itself is exact.
TEST(MatmulHooks, IdentityHooksGiveTheSameBits) {
  Gpt<double> model(tiny_config(Norm::rmsnorm, Mlp::swiglu, true));
  randomize_parameters(model, 83);
  const Batch batch = make_batch(model.config(), 2, 7, 84);
  RecordingHooks hooks;
  expect_same_bits(run(model, batch, &hooks), run(model, batch, nullptr));
}

// Zeroing W at one point is zeroing that weight: same loss and, since dW = dYᵀ·X does not read W
// and dX reads the zeroed copy, the same gradients, bit for bit.
TEST(MatmulHooks, ZeroedWeightEqualsAZeroWeight) {
  for (const std::string matmul : {"h.1.mlp.c_fc", "h.0.attn.c_attn", "h.0.attn.c_proj"}) {
    Gpt<double> hooked(tiny_config(Norm::layernorm, Mlp::gelu, true));
    randomize_parameters(hooked, 85);
    Gpt<double> zeroed = hooked;
    const std::span<double> weight = zeroed.parameter("transformer." + matmul + ".weight");
    std::fill(weight.begin(), weight.end(), 0.0);
    const Batch batch = make_batch(hooked.config(), 2, 8, 86);
    OnePointHooks hooks(matmul + ":weight", [](double) { return 0.0; });
    const Result with_hook = run(hooked, batch, &hooks);
    expect_same_bits(with_hook, run(zeroed, batch, nullptr));
    EXPECT_NE(with_hook.loss, run(hooked, batch, nullptr).loss) << matmul;
  }
}

// The LM head's W is wte: zeroing it there gives uniform logits (loss ln V) but leaves the
// embedding lookup alone.
TEST(MatmulHooks, ZeroedLmHeadWeightGivesUniformLogits) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 87);
  const Batch batch = make_batch(model.config(), 2, 8, 88);
  OnePointHooks hooks("lm_head:weight", [](double) { return 0.0; });
  const Result result = run(model, batch, &hooks);
  EXPECT_NEAR(result.loss, std::log(256.0), 1e-12);
  // Straight-through: dX = dY·W_q = 0, so nothing reaches the blocks; wte still gets doutᵀ·X.
  for (const double g : std::as_const(model).gradient("transformer.h.0.attn.c_attn.weight")) ASSERT_EQ(g, 0.0);
  double wte_norm = 0;
  for (const double g : std::as_const(model).gradient("transformer.wte.weight")) wte_norm += g * g;
  EXPECT_GT(wte_norm, 0.0);
}

// Doubling X at one point equals doubling that Linear's weight in the forward pass (bias-free
// model, and ×2 is exact). In the backward pass the hook is straight-through: dW = dYᵀ·(2X), twice
// the doubled-weight model's dYᵀ·X.
TEST(MatmulHooks, ScaledActivationScalesTheProduct) {
  Gpt<double> hooked(tiny_config(Norm::layernorm, Mlp::gelu, false));
  randomize_parameters(hooked, 89);
  Gpt<double> doubled = hooked;
  const std::string tensor = "transformer.h.0.mlp.c_proj.weight";
  for (double& w : doubled.parameter(tensor)) w *= 2;
  const Batch batch = make_batch(hooked.config(), 2, 8, 90);
  OnePointHooks hooks("h.0.mlp.c_proj:act", [](double x) { return 2 * x; });
  const Result with_hook = run(hooked, batch, &hooks);
  const Result reference = run(doubled, batch, nullptr);
  EXPECT_EQ(with_hook.loss, reference.loss);
  const Slot slot = hooked.layout().at(tensor).slot;
  for (std::size_t i = slot.offset; i < slot.offset + slot.size; ++i) {
    ASSERT_EQ(with_hook.gradients[i], 2 * reference.gradients[i]) << i;
  }
}

// The backward pass is linear in dY: doubling the LM head's dY doubles every gradient exactly;
// zeroing it zeroes every gradient.
TEST(MatmulHooks, ScaledGradientScalesEveryGradient) {
  Gpt<double> model(tiny_config(Norm::rmsnorm, Mlp::swiglu, true));
  randomize_parameters(model, 91);
  const Batch batch = make_batch(model.config(), 2, 8, 92);
  const Result plain = run(model, batch, nullptr);
  OnePointHooks doubling("lm_head:grad", [](double g) { return 2 * g; });
  const Result doubled = run(model, batch, &doubling);
  EXPECT_EQ(doubled.loss, plain.loss);
  for (std::size_t i = 0; i < plain.gradients.size(); ++i) ASSERT_EQ(doubled.gradients[i], 2 * plain.gradients[i]) << i;
  OnePointHooks zeroing("lm_head:grad", [](double) { return 0.0; });
  for (const double g : run(model, batch, &zeroing).gradients) ASSERT_EQ(g, 0.0);
}

// A :grad hook on a residual branch sees a copy: the skip path still carries the true gradient.
TEST(MatmulHooks, GradientHookLeavesTheSkipPathAlone) {
  Gpt<double> model(tiny_config());
  randomize_parameters(model, 93);
  const Batch batch = make_batch(model.config(), 2, 8, 94);
  const Result plain = run(model, batch, nullptr);
  OnePointHooks zeroing("h.1.mlp.c_proj:grad", [](double) { return 0.0; });
  const Result hooked = run(model, batch, &zeroing);
  // Block 1's MLP gets nothing, but the attention of block 1 and everything below still learn.
  for (const double g : std::as_const(model).gradient("transformer.h.1.mlp.c_fc.weight")) ASSERT_EQ(g, 0.0);
  const Slot attn = model.layout().at("transformer.h.1.attn.c_attn.weight").slot;
  EXPECT_NE(hooked.gradients[attn.offset], 0.0);
  // ln_f and the LM head are above the hook: their gradients are unchanged.
  const Slot ln_f = model.layout().ln_f_weight();
  for (std::size_t i = ln_f.offset; i < ln_f.offset + ln_f.size; ++i)
    ASSERT_EQ(hooked.gradients[i], plain.gradients[i]);
}

TEST(MatmulHooks, NeedActivationsWithRoomForCopies) {
  Gpt<double> model(tiny_config());
  const Batch batch = make_batch(model.config(), 2, 4, 95);
  Activations<double> acts(model.config(), batch.B, batch.T);
  RecordingHooks hooks;
  EXPECT_THROW(gpt_forward(model, acts, batch.tokens, batch.targets, &hooks), std::invalid_argument);
  gpt_forward(model, acts, batch.tokens, batch.targets);
  EXPECT_THROW(gpt_backward(model, acts, &hooks), std::invalid_argument);
}

}  // namespace
