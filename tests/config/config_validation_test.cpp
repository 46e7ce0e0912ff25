// Bad values: each rule of the config, broken once, from a file (named with its line), from --set
// (named with the argument) and in code; each message names the key, the value and what is allowed.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "support/error_message.hpp"

namespace {

using altgrad::config::ConfigError;
using altgrad::config::parse_config;
using altgrad::config::TrainConfig;
using altgrad::config::validate_config;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;

// The file puts the bad line after a comment line, so line 2 is the one to name.
std::string file_error(const std::string& line) {
  return message_of<ConfigError>([&] { parse_config("# experiment\n" + line + "\n", "bad.toml"); });
}

struct BadValue {
  std::string line;                  // as written in a file
  std::vector<std::string> mention;  // what the message must contain besides "bad.toml:2"
};

TEST(ConfigValidation, OutOfRangeValuesNameKeyValueAndRange) {
  const std::vector<BadValue> cases = {
      {"n_layer = 0", {"n_layer = 0", "an integer >= 1"}},
      {"n_head = -2", {"n_head = -2", "an integer >= 1"}},
      {"n_embd = -128", {"n_embd = -128", ">= 1"}},
      {"block_size = 0", {"block_size = 0", ">= 1"}},
      {"batch_size = -1", {"batch_size = -1", ">= 1"}},
      {"gradient_accumulation_steps = 0", {"gradient_accumulation_steps = 0", ">= 1"}},
      {"mlp_hidden = -1", {"mlp_hidden = -1", "an integer >= 0"}},
      {"n_layer = 3000000000", {"n_layer = 3000000000", "an integer in [1, 2147483647]"}},  // beyond int
      {"max_iters = 0", {"max_iters = 0", ">= 1"}},
      {"warmup_iters = -5", {"warmup_iters = -5", ">= 0"}},
      {"eval_interval = 0", {"eval_interval = 0", ">= 1"}},
      {"eval_iters = 0", {"eval_iters = 0", ">= 1"}},
      {"log_interval = -1", {"log_interval = -1", ">= 1"}},
      {"checkpoint_interval = -1", {"checkpoint_interval = -1", ">= 0"}},
      {"keep_checkpoints = -3", {"keep_checkpoints = -3", ">= 0"}},
      {"seed = -1", {"seed = -1", "an integer >= 0"}},
      {"learning_rate = 0", {"learning_rate = 0.0", "> 0"}},
      {"learning_rate = -1e-3", {"learning_rate = -0.001", "> 0"}},
      {"learning_rate = nan", {"learning_rate = nan", "finite"}},
      {"min_lr = -1e-5", {"min_lr = -1e-05", ">= 0"}},
      {"weight_decay = -0.1", {"weight_decay = -0.1", ">= 0"}},
      {"grad_clip = -1", {"grad_clip = -1.0", ">= 0"}},
      {"grad_clip = inf", {"grad_clip = inf", "finite"}},
      {"beta1 = 1.0", {"beta1 = 1.0", "[0, 1)"}},
      {"beta2 = -0.5", {"beta2 = -0.5", "[0, 1)"}},
      {"val_fraction = 0", {"val_fraction = 0.0", "(0, 1)"}},
      {"val_fraction = 1.0", {"val_fraction = 1.0", "(0, 1)"}},
      {"val_fraction = 1.5", {"val_fraction = 1.5", "(0, 1)"}},
      {"val_fraction = -0.1", {"val_fraction = -0.1", "(0, 1)"}},
      {"out_dir = \"\"", {"out_dir = \"\"", "non-empty"}},
      {"jsonl_field = \"\"", {"jsonl_field = \"\"", "non-empty"}},
  };
  for (const auto& c : cases) {
    const std::string message = file_error(c.line);
    EXPECT_TRUE(mentions(message, {"bad.toml:2"})) << c.line;
    for (const auto& part : c.mention) EXPECT_TRUE(mentions(message, {part})) << c.line;
  }
}

TEST(ConfigValidation, UnknownChoicesListTheAllowedOnes) {
  EXPECT_TRUE(mentions(file_error("norm = \"batchnorm\""), {"bad.toml:2", "norm = \"batchnorm\"", "\"layernorm\", \"rmsnorm\""}));
  EXPECT_TRUE(mentions(file_error("mlp = \"relu\""), {"bad.toml:2", "mlp = \"relu\"", "\"gelu\", \"swiglu\""}));
  EXPECT_TRUE(mentions(file_error("data_format = \"csv\""),
                       {"bad.toml:2", "data_format = \"csv\"", "\"auto\", \"text\", \"dir\", \"jsonl\""}));
  EXPECT_TRUE(mentions(file_error("norm = \"LayerNorm\""), {"bad.toml:2", "\"LayerNorm\""}));  // names are exact
  EXPECT_TRUE(mentions(file_error("optimizer = \"adam\""), {"bad.toml:2", "optimizer = \"adam\"", "\"adamw\", \"sgd\""}));
  EXPECT_TRUE(mentions(file_error("device = \"gpu\""), {"bad.toml:2", "device = \"gpu\"", "\"cpu\", \"cuda\""}));
}

TEST(ConfigValidation, NesterovNeedsMomentumForSgd) {
  const auto message = message_of<ConfigError>(
      [] { parse_config("optimizer = \"sgd\"\nmomentum = 0\nnesterov = true\n", "bad.toml"); });
  EXPECT_TRUE(mentions(message, {"bad.toml:2", "bad.toml:3", "nesterov = true", "momentum = 0"}));
  EXPECT_NO_THROW(parse_config("momentum = 0\nnesterov = true\n", "ok.toml"));  // AdamW ignores both
  EXPECT_TRUE(mentions(file_error("momentum = 1.5"), {"bad.toml:2", "momentum = 1.5", "[0, 1)"}));
}

TEST(ConfigValidation, NEmbdMustBeAMultipleOfNHead) {
  const auto message = message_of<ConfigError>([] { parse_config("n_embd = 130\nn_head = 4\n", "bad.toml"); });
  EXPECT_TRUE(mentions(message, {"bad.toml:1", "bad.toml:2", "n_embd = 130", "n_head = 4", "multiple"}));
  // With n_head left at its default, only the line that set n_embd is named.
  const auto one = message_of<ConfigError>([] { parse_config("\nn_embd = 102\n", "bad.toml"); });
  EXPECT_TRUE(mentions(one, {"bad.toml:2", "n_embd = 102", "n_head = 4"}));
  EXPECT_NO_THROW(parse_config("n_embd = 96\nn_head = 6\n", "ok.toml"));
}

TEST(ConfigValidation, MinLrMustNotExceedLearningRate) {
  const auto message = message_of<ConfigError>([] { parse_config("learning_rate = 1e-4\nmin_lr = 1e-3\n", "bad.toml"); });
  EXPECT_TRUE(mentions(message, {"bad.toml:1", "bad.toml:2", "min_lr = 0.001", "learning_rate = 1e-04"}));
  EXPECT_NO_THROW(parse_config("learning_rate = 1e-4\nmin_lr = 1e-4\n", "ok.toml"));  // constant rate
}

TEST(ConfigValidation, DecayMustEndAfterWarmup) {
  const auto message = message_of<ConfigError>([] { parse_config("warmup_iters = 200\nlr_decay_iters = 200\n", "bad.toml"); });
  EXPECT_TRUE(mentions(message, {"bad.toml:1", "bad.toml:2", "lr_decay_iters = 200", "warmup_iters = 200"}));
}

TEST(ConfigValidation, ConfigsBuiltInCodeAreCheckedByTheSameRules) {
  EXPECT_NO_THROW(validate_config(TrainConfig{}));
  TrainConfig zero_layers;
  zero_layers.n_layer = 0;
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { validate_config(zero_layers); }), {"n_layer = 0", ">= 1"}));
  TrainConfig odd_heads;
  odd_heads.n_head = 3;
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { validate_config(odd_heads); }), {"n_embd = 128", "n_head = 3"}));
  TrainConfig huge_seed;
  huge_seed.seed = std::numeric_limits<std::uint64_t>::max();  // TOML integers stop at 2^63 - 1
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { validate_config(huge_seed); }), {"seed = 18446744073709551615", "[0, 9223372036854775807]"}));
  TrainConfig no_out_dir;
  no_out_dir.out_dir.clear();
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { validate_config(no_out_dir); }), {"out_dir = \"\""}));
  TrainConfig bad_fraction;
  bad_fraction.val_fraction = 0.0;
  EXPECT_TRUE(mentions(message_of<ConfigError>([&] { validate_config(bad_fraction); }), {"val_fraction = 0.0", "(0, 1)"}));
}

}  // namespace
