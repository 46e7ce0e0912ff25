// The low-precision moment keys (adam_m_format, adam_v_format, adam_state_group,
// adam_state_rounding): read, refused with the key and value named, and refused by name with an
// optimizer other than adamw.
#include <gtest/gtest.h>

#include <string>

#include "config/config.hpp"
#include "support/error_message.hpp"

namespace {

using altgrad::config::ConfigError;
using altgrad::config::parse_config;
using altgrad::config::TrainConfig;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;

std::string moment_key_error(const std::string& text) {
  return message_of<ConfigError>([&] { parse_config(text, "moments.toml"); });
}

TEST(MomentStorageConfig, DefaultsKeepFp32MomentsAndKeysAreRead) {
  const TrainConfig defaults = parse_config("", "empty.toml");
  EXPECT_EQ(defaults.adam_m_format, "fp32");
  EXPECT_EQ(defaults.adam_v_format, "fp32");
  EXPECT_EQ(defaults.adam_state_group, 128);
  EXPECT_EQ(defaults.adam_state_rounding, altgrad::format::Rounding::nearest_even);
  const TrainConfig c = parse_config(
      "adam_m_format = \"e4m3\"\nadam_v_format = \"e8m0fnu\"\nadam_state_group = 256\nadam_state_rounding = \"stochastic\"\n",
      "ok.toml");
  EXPECT_EQ(c.adam_m_format, "e4m3");
  EXPECT_EQ(c.adam_v_format, "e8m0fnu");
  EXPECT_EQ(c.adam_state_group, 256);
  EXPECT_EQ(c.adam_state_rounding, altgrad::format::Rounding::stochastic);
  EXPECT_NO_THROW(parse_config("adam_v_format = \"e5m2fnuz,subnormals=off\"\n", "ok.toml"));
}

TEST(MomentStorageConfig, BadValuesNameTheKeyAndValue) {
  EXPECT_TRUE(mentions(moment_key_error("\nadam_m_format = \"e9m9\"\n"), {"moments.toml:2", "adam_m_format", "\"e9m9\"", "not a format"}));
  EXPECT_TRUE(mentions(moment_key_error("adam_v_format = \"float8\"\n"), {"moments.toml:1", "adam_v_format", "\"float8\""}));
  EXPECT_TRUE(mentions(moment_key_error("adam_m_format = \"e8m0fnu\"\n"),
                       {"moments.toml:1", "adam_m_format = \"e8m0fnu\"", "unsigned", "exp_avg"}));
  EXPECT_TRUE(mentions(moment_key_error("adam_m_format = \"\"\n"), {"adam_m_format", "\"\""}));
  EXPECT_TRUE(mentions(moment_key_error("adam_state_group = 0\n"), {"adam_state_group = 0", "[1, 4096]"}));
  EXPECT_TRUE(mentions(moment_key_error("adam_state_group = 5000\n"), {"adam_state_group = 5000", "[1, 4096]"}));
  EXPECT_TRUE(mentions(moment_key_error("adam_state_rounding = \"nearest-even\"\n"),
                       {"adam_state_rounding", "\"nearest-even\"", "\"stochastic\""}));
  EXPECT_TRUE(mentions(moment_key_error("adam_state_group = \"128\"\n"), {"adam_state_group", "string"}));
  EXPECT_TRUE(mentions(message_of<ConfigError>([] {
                         parse_config("", "ok.toml", std::vector<std::string>{"adam_v_format=e4m3,bias=200"});
                       }),
                       {"--set adam_v_format=e4m3,bias=200", "adam_v_format"}));
}

TEST(MomentStorageConfig, OtherOptimizersRefuseTheKeysByName) {
  for (const char* optimizer : {"sgd", "stiffness_adamw", "gridwalk", "madam", "madam_int"}) {
    for (const std::string line : {"adam_m_format = \"e4m3\"", "adam_v_format = \"bf16\"", "adam_state_group = 64",
                                   "adam_state_rounding = \"stochastic\""}) {
      const std::string key = line.substr(0, line.find(' '));
      const std::string message = moment_key_error("optimizer = \"" + std::string(optimizer) + "\"\n" + line + "\n");
      EXPECT_TRUE(mentions(message, {"moments.toml:1", "moments.toml:2", key, "applies only to optimizer = \"adamw\""}))
          << message;
    }
  }
  // The defaults, as a written config.toml repeats them, are no request.
  EXPECT_NO_THROW(parse_config("optimizer = \"sgd\"\nadam_m_format = \"fp32\"\nadam_state_group = 128\n", "ok.toml"));
}

}  // namespace
