#include "model/parameter_layout.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "model/matmul_points.hpp"
#include "model_test_support.hpp"

namespace {

using namespace altgrad::model;
using altgrad::model_test::tiny_config;

struct Expected {
  std::string name;
  std::vector<std::size_t> shape;
};

// nanoGPT's GPT(config).state_dict() for n_layer 2, n_embd 8, block_size 8, vocab_size 256,
// bias=True, read off model.py: transformer = ModuleDict(wte, wpe, drop, h, ln_f), then lm_head;
// Block = ln_1, attn (c_attn, c_proj), ln_2, mlp (c_fc, c_proj); Linear = weight [out, in], bias.
// (The attention mask buffer "attn.bias" exists only without flash attention and is not a
// parameter.)
std::vector<Expected> nanogpt_state_dict_with_bias() {
  std::vector<Expected> expected = {{"transformer.wte.weight", {256, 8}}, {"transformer.wpe.weight", {8, 8}}};
  for (const std::string i : {"0", "1"}) {
    const std::string h = "transformer.h." + i + ".";
    const std::vector<Expected> block = {
        {h + "ln_1.weight", {8}},
        {h + "ln_1.bias", {8}},
        {h + "attn.c_attn.weight", {24, 8}},
        {h + "attn.c_attn.bias", {24}},
        {h + "attn.c_proj.weight", {8, 8}},
        {h + "attn.c_proj.bias", {8}},
        {h + "ln_2.weight", {8}},
        {h + "ln_2.bias", {8}},
        {h + "mlp.c_fc.weight", {32, 8}},
        {h + "mlp.c_fc.bias", {32}},
        {h + "mlp.c_proj.weight", {8, 32}},
        {h + "mlp.c_proj.bias", {8}},
    };
    expected.insert(expected.end(), block.begin(), block.end());
  }
  expected.push_back({"transformer.ln_f.weight", {8}});
  expected.push_back({"transformer.ln_f.bias", {8}});
  expected.push_back({"lm_head.weight", {256, 8}});
  return expected;
}

std::vector<Expected> without_biases(const std::vector<Expected>& all) {
  std::vector<Expected> kept;
  for (const Expected& e : all) {
    if (!e.name.ends_with(".bias")) kept.push_back(e);
  }
  return kept;
}

void expect_state_dict(const ParameterLayout& layout, const std::vector<Expected>& expected) {
  const auto entries = layout.state_dict();
  ASSERT_EQ(entries.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(entries[i].name, expected[i].name) << "entry " << i;
    EXPECT_EQ(entries[i].shape, expected[i].shape) << expected[i].name;
  }
}

TEST(ParameterLayout, NamesShapesAndOrderAreNanoGptsWithBias) {
  expect_state_dict(ParameterLayout(tiny_config(Norm::layernorm, Mlp::gelu, true)), nanogpt_state_dict_with_bias());
}

TEST(ParameterLayout, NamesShapesAndOrderAreNanoGptsWithoutBias) {
  expect_state_dict(ParameterLayout(tiny_config(Norm::layernorm, Mlp::gelu, false)),
                    without_biases(nanogpt_state_dict_with_bias()));
}

// RMSNorm has a weight only, whatever `bias` says; the Linears keep their biases.
TEST(ParameterLayout, RmsNormHasNoBias) {
  std::vector<Expected> expected;
  for (const Expected& e : nanogpt_state_dict_with_bias()) {
    if (!(e.name.find("ln_") != std::string::npos && e.name.ends_with(".bias"))) expected.push_back(e);
  }
  expect_state_dict(ParameterLayout(tiny_config(Norm::rmsnorm, Mlp::gelu, true)), expected);
}

// c_fc produces [gate | value]: 2H rows; c_proj reads H. Default H for n_embd 8 is 24.
TEST(ParameterLayout, SwigluShapes) {
  const ParameterLayout layout(tiny_config(Norm::layernorm, Mlp::swiglu, true));
  EXPECT_EQ(layout.at("transformer.h.1.mlp.c_fc.weight").shape, (std::vector<std::size_t>{48, 8}));
  EXPECT_EQ(layout.at("transformer.h.1.mlp.c_fc.bias").shape, (std::vector<std::size_t>{48}));
  EXPECT_EQ(layout.at("transformer.h.1.mlp.c_proj.weight").shape, (std::vector<std::size_t>{8, 24}));
}

// nanoGPT's sum(p.numel() for p in model.parameters()), the tied weight counted once.
std::size_t nanogpt_parameter_count(const GptConfig& c) {
  const std::size_t C = c.n_embd;
  const std::size_t per_block = c.bias ? 12 * C * C + 13 * C : 12 * C * C + 2 * C;
  return c.vocab_size * C + c.block_size * C + c.n_layer * per_block + (c.bias ? 2 * C : C);
}

TEST(ParameterLayout, ParameterCountIsNanoGptsFormula) {
  for (const bool bias : {true, false}) {
    GptConfig config = tiny_config(Norm::layernorm, Mlp::gelu, bias);
    EXPECT_EQ(ParameterLayout(config).size(), nanogpt_parameter_count(config));
    config = GptConfig{};
    config.bias = bias;
    EXPECT_EQ(ParameterLayout(config).size(), nanogpt_parameter_count(config));
  }
}

// GPT-2 small as nanoGPT's from_pretrained builds it: 124,439,808 parameters (its printed
// "123.65M" leaves out wpe's 786,432).
TEST(ParameterLayout, Gpt2SmallHasItsKnownParameterCount) {
  GptConfig gpt2;
  gpt2.n_layer = 12;
  gpt2.n_head = 12;
  gpt2.n_embd = 768;
  gpt2.block_size = 1024;
  gpt2.vocab_size = 50257;
  gpt2.bias = true;
  const ParameterLayout layout(gpt2);
  EXPECT_EQ(layout.size(), 124'439'808u);
  EXPECT_EQ(layout.size() - layout.wpe().size, 123'653'376u);
}

TEST(ParameterLayout, SwigluParameterCount) {
  const GptConfig config = tiny_config(Norm::rmsnorm, Mlp::swiglu, false);
  const std::size_t C = 8, H = 24;
  const std::size_t per_block = C + 4 * C * C + C + 2 * H * C + H * C;
  EXPECT_EQ(ParameterLayout(config).size(), 256 * C + 8 * C + 2 * per_block + C);
}

TEST(ParameterLayout, TensorsTileTheBufferInOrder) {
  const ParameterLayout layout(tiny_config());
  std::size_t offset = 0;
  for (const TensorSpec& spec : layout.tensors()) {
    EXPECT_EQ(spec.slot.offset, offset) << spec.name;
    std::size_t size = 1;
    for (const std::size_t extent : spec.shape) size *= extent;
    EXPECT_EQ(spec.slot.size, size) << spec.name;
    EXPECT_TRUE(spec.alias_of.empty()) << spec.name;
    offset += size;
  }
  EXPECT_EQ(offset, layout.size());
}

TEST(ParameterLayout, LmHeadIsAnAliasOfWte) {
  const ParameterLayout layout(tiny_config());
  const TensorSpec& head = layout.at("lm_head.weight");
  const TensorSpec& wte = layout.at("transformer.wte.weight");
  EXPECT_EQ(head.alias_of, "transformer.wte.weight");
  EXPECT_EQ(head.slot.offset, wte.slot.offset);
  EXPECT_EQ(head.slot.size, wte.slot.size);
  EXPECT_EQ(layout.lm_head().offset, layout.wte().offset);
  EXPECT_EQ(layout.state_dict().size(), layout.tensors().size() + 1);
}

TEST(ParameterLayout, BlockSlotsMatchTheirNames) {
  const ParameterLayout layout(tiny_config());
  const BlockSlots& b = layout.block(1);
  EXPECT_EQ(b.attn_c_attn_weight.offset, layout.at("transformer.h.1.attn.c_attn.weight").slot.offset);
  EXPECT_EQ(b.mlp_c_proj_bias.offset, layout.at("transformer.h.1.mlp.c_proj.bias").slot.offset);
  EXPECT_EQ(layout.ln_f_weight().offset, layout.at("transformer.ln_f.weight").slot.offset);
  const ParameterLayout no_bias(tiny_config(Norm::layernorm, Mlp::gelu, false));
  EXPECT_EQ(no_bias.block(0).attn_c_attn_bias.size, 0u);
  EXPECT_EQ(no_bias.ln_f_bias().size, 0u);
  EXPECT_THROW(static_cast<void>(layout.block(2)), std::out_of_range);
}

TEST(ParameterLayout, RolesFollowNanoGptsInit) {
  const ParameterLayout layout(tiny_config());
  EXPECT_EQ(layout.at("transformer.wpe.weight").role, ParameterRole::embedding);
  EXPECT_EQ(layout.at("transformer.h.0.attn.c_attn.weight").role, ParameterRole::linear_weight);
  EXPECT_EQ(layout.at("transformer.h.0.attn.c_proj.weight").role, ParameterRole::residual_projection);
  EXPECT_EQ(layout.at("transformer.h.0.mlp.c_proj.weight").role, ParameterRole::residual_projection);
  EXPECT_EQ(layout.at("transformer.h.0.mlp.c_proj.bias").role, ParameterRole::bias);
  EXPECT_EQ(layout.at("transformer.ln_f.weight").role, ParameterRole::norm_weight);
}

TEST(ParameterLayout, UnknownNameIsNamedInTheError) {
  const ParameterLayout layout(tiny_config(Norm::layernorm, Mlp::gelu, false));
  EXPECT_EQ(layout.find("transformer.h.0.ln_1.bias"), nullptr);
  try {
    static_cast<void>(layout.at("transformer.h.0.ln_1.bias"));
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("'transformer.h.0.ln_1.bias'"), std::string::npos) << e.what();
  }
}

TEST(ParameterLayout, RejectsAnInvalidConfig) {
  GptConfig config = tiny_config();
  config.n_head = 3;
  EXPECT_THROW(ParameterLayout{config}, std::invalid_argument);
}

TEST(MatmulPoints, NamesAndShapesFollowDesign) {
  const GptConfig config = tiny_config(Norm::layernorm, Mlp::swiglu, false);
  const MatmulPoints points(config);
  ASSERT_EQ(points.all().size(), 9u);
  ASSERT_EQ(points.operand_count(), 27u + 8u);  // 9 matmuls × 3, 2 blocks × q, k, v, probs
  const MatmulPoint& fc = points.block(1, BlockMatmul::mlp_c_fc);
  EXPECT_EQ(fc.name, "h.1.mlp.c_fc");
  EXPECT_EQ(fc.index, 6u);
  EXPECT_EQ(fc.operand_name(Operand::act), "h.1.mlp.c_fc:act");
  EXPECT_EQ(fc.operand_name(Operand::weight), "h.1.mlp.c_fc:weight");
  EXPECT_EQ(fc.operand_name(Operand::grad), "h.1.mlp.c_fc:grad");
  EXPECT_EQ(fc.in_features, 8u);
  EXPECT_EQ(fc.out_features, 48u);
  EXPECT_EQ(points.block(0, BlockMatmul::mlp_c_proj).in_features, 24u);
  EXPECT_EQ(points.block(0, BlockMatmul::attn_c_attn).out_features, 24u);
  EXPECT_EQ(points.lm_head().name, "lm_head");
  EXPECT_EQ(points.lm_head().out_features, 256u);
  for (std::size_t i = 0; i < points.operand_count(); ++i) EXPECT_EQ(points.operands()[i].index, i);
  EXPECT_EQ(points.operands()[6 * 3 + 2].name, "h.1.mlp.c_fc:grad");
  EXPECT_EQ(points.operands()[26].name, "lm_head:grad");
  const OperandPoint& probs = points.attention(1, Operand::probs);
  EXPECT_EQ(probs.name, "h.1.attn.probs");
  EXPECT_EQ(probs.index, 27u + 4u + 3u);
  EXPECT_EQ(points.attention(0, Operand::k).name, "h.0.attn.k");
  EXPECT_THROW((void)points.attention(0, Operand::act), std::invalid_argument);
  EXPECT_EQ(points.lm_head().index, 8u);
}

}  // namespace
