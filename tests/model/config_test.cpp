#include "model/config.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using namespace altgrad::model;

bool mentions(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& error : errors) {
    if (error.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(GptConfig, DefaultsAreValidAndByteLevel) {
  const GptConfig config;
  EXPECT_TRUE(config_errors(config).empty());
  EXPECT_EQ(config.vocab_size, 256u);
  EXPECT_EQ(config.norm, Norm::layernorm);
  EXPECT_EQ(config.mlp, Mlp::gelu);
  EXPECT_EQ(hidden_size(config), 4 * config.n_embd);
}

TEST(GptConfig, GeluHiddenIsFourTimesEmbedding) {
  EXPECT_EQ(default_mlp_hidden(Mlp::gelu, 384), 1536u);
  EXPECT_EQ(default_mlp_hidden(Mlp::gelu, 8), 32u);
}

// LLaMA's rule: int(2 · 4C / 3), rounded up to a multiple of 8.
TEST(GptConfig, SwigluHiddenIsTwoThirdsOfFourTimesEmbeddingRoundedUpToEight) {
  EXPECT_EQ(default_mlp_hidden(Mlp::swiglu, 384), 1024u);
  EXPECT_EQ(default_mlp_hidden(Mlp::swiglu, 768), 2048u);
  EXPECT_EQ(default_mlp_hidden(Mlp::swiglu, 8), 24u);    // 21 -> 24
  EXPECT_EQ(default_mlp_hidden(Mlp::swiglu, 64), 176u);  // 170 -> 176
}

TEST(GptConfig, ExplicitHiddenSizeWinsAndSwigluDoublesTheUpProjection) {
  GptConfig config;
  config.mlp = Mlp::swiglu;
  config.mlp_hidden = 100;
  EXPECT_EQ(hidden_size(config), 100u);
  EXPECT_EQ(mlp_inner_size(config), 200u);
  config.mlp = Mlp::gelu;
  EXPECT_EQ(mlp_inner_size(config), 100u);
}

TEST(GptConfig, ReportsEveryProblemByKey) {
  GptConfig config;
  config.n_layer = 0;
  config.vocab_size = 0;
  config.n_embd = 10;
  config.n_head = 3;
  const std::vector<std::string> errors = config_errors(config);
  EXPECT_EQ(errors.size(), 3u);
  EXPECT_TRUE(mentions(errors, "n_layer must be positive"));
  EXPECT_TRUE(mentions(errors, "vocab_size must be positive"));
  EXPECT_TRUE(mentions(errors, "n_embd = 10 is not divisible by n_head = 3"));
}

TEST(GptConfig, ZeroHeadsIsOneErrorNotADivisionByZero) {
  GptConfig config;
  config.n_head = 0;
  const std::vector<std::string> errors = config_errors(config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(mentions(errors, "n_head must be positive"));
}

TEST(GptConfig, ValidateThrowsWithAllMessages) {
  GptConfig config;
  config.block_size = 0;
  config.n_embd = 0;
  try {
    validate(config);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("block_size must be positive"), std::string::npos) << message;
    EXPECT_NE(message.find("n_embd must be positive"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(validate(GptConfig{}));
}

TEST(GptConfig, NamesRoundTrip) {
  for (const Norm norm : {Norm::layernorm, Norm::rmsnorm}) EXPECT_EQ(parse_norm(to_string(norm)), norm);
  for (const Mlp mlp : {Mlp::gelu, Mlp::swiglu}) EXPECT_EQ(parse_mlp(to_string(mlp)), mlp);
  EXPECT_EQ(parse_norm("LayerNorm"), std::nullopt);
  EXPECT_EQ(parse_mlp("relu"), std::nullopt);
}

}  // namespace
