// --set key=value overrides: the value is read as the key's type, later overrides win, and each
// error names the argument, the key and the value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "support/error_message.hpp"

namespace {

using altgrad::config::ConfigError;
using altgrad::config::Mlp;
using altgrad::config::Norm;
using altgrad::config::parse_config;
using altgrad::config::TrainConfig;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;

TrainConfig with(const std::vector<std::string>& overrides, const std::string& file = "") {
  return parse_config(file, "base.toml", overrides);
}

std::string override_error(const std::vector<std::string>& overrides, const std::string& file = "") {
  return message_of<ConfigError>([&] { with(overrides, file); });
}

TEST(ConfigOverride, ReadsEachValueAsItsKeysType) {
  const auto config = with({"n_layer=6", "learning_rate=3e-4", "min_lr=0", "bias=true", "norm=rmsnorm",
                            "mlp=\"swiglu\"", "out_dir=runs/a b", "data=\"quoted/path.txt\"", "max_iters=1_000",
                            "lr_decay_iters=1000", "seed=9007199254740993", "val_fraction=.05"});
  EXPECT_EQ(config.n_layer, 6);
  EXPECT_EQ(config.learning_rate, 3e-4);
  EXPECT_EQ(config.min_lr, 0.0);
  EXPECT_TRUE(config.bias);
  EXPECT_EQ(config.norm, Norm::rmsnorm);
  EXPECT_EQ(config.mlp, Mlp::swiglu);
  EXPECT_EQ(config.out_dir, "runs/a b");
  EXPECT_EQ(config.data, "quoted/path.txt");
  EXPECT_EQ(config.max_iters, 1000);
  EXPECT_EQ(config.seed, 9007199254740993u);  // above 2^53: read as an integer, not through a double
  EXPECT_EQ(config.val_fraction, 0.05);
}

TEST(ConfigOverride, AppliesAfterTheFileAndInOrder) {
  const auto config = with({"n_layer=3", "n_layer = 5 ", " n_head=2"}, "n_layer = 2\nn_embd = 64\n");
  EXPECT_EQ(config.n_layer, 5);
  EXPECT_EQ(config.n_head, 2);
  EXPECT_EQ(config.n_embd, 64);  // from the file
  // Rules between keys are checked after all overrides, so --set can repair a file's combination.
  EXPECT_EQ(with({"n_embd=128"}, "n_embd = 130\n").n_embd, 128);
  // A string key takes text that would otherwise read as another type.
  EXPECT_EQ(with({"out_dir=123"}).out_dir, "123");
  EXPECT_EQ(with({"data="}).data, "");
}

TEST(ConfigOverride, WrongTypeNamesTheArgument) {
  EXPECT_TRUE(mentions(override_error({"n_layer=abc"}), {"--set n_layer=abc", "n_layer", "an integer >= 1", "\"abc\""}));
  EXPECT_TRUE(mentions(override_error({"n_layer=4.5"}), {"--set n_layer=4.5", "floating-point 4.5"}));
  EXPECT_TRUE(mentions(override_error({"bias=1"}), {"--set bias=1", "true or false"}));
  EXPECT_TRUE(mentions(override_error({"learning_rate=fast"}), {"--set learning_rate=fast", "number", "\"fast\""}));
  EXPECT_TRUE(mentions(override_error({"n_layer=4\nn_head=2"}), {"n_layer", "integer"}));  // one value only
}

TEST(ConfigOverride, BadValuesNameTheArgumentKeyAndRange) {
  EXPECT_TRUE(mentions(override_error({"n_layer=-1"}), {"--set n_layer=-1", "n_layer = -1", ">= 1"}));
  EXPECT_TRUE(mentions(override_error({"val_fraction=1"}), {"--set val_fraction=1", "val_fraction = 1.0", "(0, 1)"}));
  EXPECT_TRUE(mentions(override_error({"norm=batchnorm"}), {"--set norm=batchnorm", "norm = \"batchnorm\"", "\"rmsnorm\""}));
  EXPECT_TRUE(mentions(override_error({"n_head=5"}), {"--set n_head=5", "n_embd = 128", "n_head = 5", "multiple"}));
  EXPECT_TRUE(mentions(override_error({"min_lr=0.1"}), {"--set min_lr=0.1", "min_lr = 0.1", "learning_rate = 0.001"}));
  // The bad value from the file is named with its line, the override with its argument.
  EXPECT_TRUE(mentions(override_error({"n_head=3"}, "n_embd = 64\n"), {"base.toml:1", "--set n_head=3"}));
}

TEST(ConfigOverride, MalformedArgumentsAndUnknownKeys) {
  EXPECT_TRUE(mentions(override_error({"n_layer"}), {"--set n_layer", "key=value"}));
  EXPECT_TRUE(mentions(override_error({"=4"}), {"--set =4", "empty"}));
  EXPECT_TRUE(mentions(override_error({"n_embed=64"}), {"--set n_embed=64", "unknown key 'n_embed'", "'n_embd'"}));
  EXPECT_TRUE(mentions(override_error({"model.n_layer=2"}), {"--set model.n_layer=2", "unknown key"}));
  EXPECT_TRUE(mentions(override_error({"quant.format=e4m3"}), {"--set quant.format=e4m3", "[quant]"}));
}

// Found by fuzz/config_fuzzer.cpp (fuzz/corpus/config/regress_set_not_utf8): the value was kept,
// and the run directory's config.toml could not be read back.
TEST(ConfigOverride, ValuesThatAreNotUtf8AreRefused) {
  EXPECT_TRUE(mentions(override_error({"out_dir=runs/\xb3"}), {"--set out_dir=runs/", "invalid UTF-8 at byte 13"}));
  EXPECT_EQ(with({"out_dir=runs/\xc3\xa9"}).out_dir, "runs/\xc3\xa9");  // é: valid UTF-8 stays as given
}

}  // namespace
