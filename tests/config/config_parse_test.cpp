// Reading configs from TOML: keys map onto TrainConfig with their types, absent keys keep their
// defaults, [quant] passes through untouched, and every error names file, line, key and value.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"

namespace {

using altgrad::config::ConfigError;
using altgrad::data::CorpusFormat;
using altgrad::config::load_config;
using altgrad::config::Mlp;
using altgrad::config::Norm;
using altgrad::config::parse_config;
using altgrad::config::TrainConfig;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;
using altgrad::test_support::ScratchDir;

std::string parse_error(const std::string& toml) {
  return message_of<ConfigError>([&] { parse_config(toml, "run.toml"); });
}

TEST(ConfigParse, EmptyFileGivesTheDefaults) {
  EXPECT_EQ(parse_config("", "empty.toml"), TrainConfig{});
  EXPECT_EQ(parse_config("# only a comment\n", "empty.toml"), TrainConfig{});
}

TEST(ConfigParse, ReadsEachKindOfValue) {
  const auto config = parse_config(R"(
n_layer = 6
n_head = 8
n_embd = 256
bias = true
norm = "rmsnorm"
mlp = "swiglu"
learning_rate = 3e-4
min_lr = 3e-5
weight_decay = 0        # an integer where a number is expected
max_iters = 5_000
lr_decay_iters = 5000
data = "corpora/books"
data_format = "dir"
seed = 42
)",
                                   "run.toml");
  TrainConfig expected;
  expected.n_layer = 6;
  expected.n_head = 8;
  expected.n_embd = 256;
  expected.bias = true;
  expected.norm = Norm::rmsnorm;
  expected.mlp = Mlp::swiglu;
  expected.learning_rate = 3e-4;
  expected.min_lr = 3e-5;
  expected.weight_decay = 0.0;
  expected.max_iters = 5000;
  expected.lr_decay_iters = 5000;
  expected.data = "corpora/books";
  expected.data_format = CorpusFormat::dir;
  expected.seed = 42;
  EXPECT_EQ(config, expected);
}

TEST(ConfigParse, LoadsAFile) {
  ScratchDir dir;
  const auto file = dir.write("exp.toml", "block_size = 64\ndata_format = \"jsonl\"\njsonl_field = \"content\"\n");
  const auto config = load_config(file);
  EXPECT_EQ(config.block_size, 64);
  EXPECT_EQ(config.data_format, CorpusFormat::jsonl);
  EXPECT_EQ(config.jsonl_field, "content");
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { load_config(dir.path() / "missing.toml"); }),
                       {"missing.toml", "no such config file"}));
}

TEST(ConfigParse, QuantTablePassesThroughWithItsPositions) {
  ScratchDir dir;
  const auto file = dir.write("q.toml", R"(n_layer = 2

[quant]
format = "e4m3"
scaling = { kind = "delayed", history = 16 }

[quant.overrides."h.*.mlp.c_fc:grad"]
format = "e5m2"

[[quant.rules]]
pattern = "h.0.*"
)");
  const TrainConfig loaded = load_config(file);
  const TrainConfig copy = loaded;  // copies must keep file positions for the recipe parser
  const auto& quant = copy.quant.table();
  EXPECT_EQ(quant["format"].value<std::string>(), "e4m3");
  EXPECT_EQ(quant["scaling"]["history"].value<std::int64_t>(), 16);
  EXPECT_EQ(quant["overrides"]["h.*.mlp.c_fc:grad"]["format"].value<std::string>(), "e5m2");
  EXPECT_EQ(quant["rules"][0]["pattern"].value<std::string>(), "h.0.*");
  const auto* format = quant.get("format");
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->source().begin.line, 4u);
  ASSERT_TRUE(format->source().path);
  EXPECT_EQ(*format->source().path, file.string());
  EXPECT_EQ(copy.n_layer, 2);
}

TEST(ConfigParse, SyntaxErrorNamesFileAndLine) {
  EXPECT_TRUE(mentions(parse_error("n_layer = 4\nn_head = = 2\n"), {"run.toml:2", "TOML syntax error"}));
  EXPECT_TRUE(mentions(parse_error("n_layer = 4\n\nn_layer = 5\n"), {"run.toml:3", "n_layer"}));  // duplicate key
}

TEST(ConfigParse, UnknownKeyNamesItAndSuggestsTheNearestKey) {
  EXPECT_TRUE(mentions(parse_error("n_layer = 4\n\nn_heads = 4\n"), {"run.toml:3", "unknown key 'n_heads'", "did you mean 'n_head'"}));
  EXPECT_TRUE(mentions(parse_error("learnin_rate = 1e-3\n"), {"run.toml:1", "'learnin_rate'", "'learning_rate'"}));
  const auto far = parse_error("dropout = 0.1\n");
  EXPECT_TRUE(mentions(far, {"run.toml:1", "unknown key 'dropout'"}));
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST(ConfigParse, UnknownTableIsAnErrorButQuantIsNot) {
  EXPECT_TRUE(mentions(parse_error("n_layer = 4\n[model]\nn_layer = 2\n"), {"run.toml:2", "unknown table [model]", "[quant]"}));
  EXPECT_TRUE(mentions(parse_error("optim.beta1 = 0.9\n"), {"run.toml:1", "[optim]"}));
  EXPECT_TRUE(mentions(parse_error("quant = 3\n"), {"run.toml:1", "quant must be a table", "integer"}));
  EXPECT_TRUE(mentions(parse_error("[[quant]]\nformat = \"e4m3\"\n"), {"run.toml:1", "quant must be a table", "array"}));
  EXPECT_NO_THROW(parse_config("[quant]\nanything = [1, \"goes\"]\n", "run.toml"));
}

TEST(ConfigParse, WrongTypeNamesKeyExpectedTypeAndValue) {
  EXPECT_TRUE(mentions(parse_error("\n\nn_layer = \"4\"\n"), {"run.toml:3", "n_layer", "an integer >= 1", "string \"4\""}));
  EXPECT_TRUE(mentions(parse_error("n_layer = 4.0\n"), {"run.toml:1", "n_layer", "integer", "floating-point 4.0"}));
  EXPECT_TRUE(mentions(parse_error("bias = 1\n"), {"run.toml:1", "bias", "true or false", "integer 1"}));
  EXPECT_TRUE(mentions(parse_error("learning_rate = \"1e-3\"\n"), {"run.toml:1", "learning_rate", "number", "string \"1e-3\""}));
  EXPECT_TRUE(mentions(parse_error("out_dir = 5\n"), {"run.toml:1", "out_dir", "string", "integer 5"}));
  EXPECT_TRUE(mentions(parse_error("norm = true\n"), {"run.toml:1", "norm", "\"layernorm\", \"rmsnorm\"", "boolean true"}));
  EXPECT_TRUE(mentions(parse_error("n_layer = [4]\n"), {"run.toml:1", "n_layer", "array"}));
}

}  // namespace
