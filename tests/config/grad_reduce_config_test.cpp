// The low-precision gradient reduction's keys (grad_reduce_format, grad_reduce_sum): read, and
// refused with the file, line, key and value named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.hpp"
#include "support/error_message.hpp"

namespace {

using altgrad::config::ConfigError;
using altgrad::config::GradReduceSum;
using altgrad::config::parse_config;
using altgrad::config::TrainConfig;
using altgrad::test_support::mentions;
using altgrad::test_support::message_of;

std::string grad_reduce_error(const std::string& text) {
  return message_of<ConfigError>([&] { parse_config(text, "reduce.toml"); });
}

TEST(GradReduceConfig, DefaultsSumInFp32AndKeysAreRead) {
  const TrainConfig defaults = parse_config("", "empty.toml");
  EXPECT_EQ(defaults.grad_reduce_format, "");
  EXPECT_EQ(defaults.grad_reduce_sum, GradReduceSum::in_format);
  const TrainConfig c = parse_config("grad_reduce_format = \"e5m2\"\ngrad_reduce_sum = \"fp32\"\n", "ok.toml");
  EXPECT_EQ(c.grad_reduce_format, "e5m2");
  EXPECT_EQ(c.grad_reduce_sum, GradReduceSum::fp32);
  EXPECT_EQ(parse_config("grad_reduce_format = \"e4m3\"\n", "ok.toml").grad_reduce_sum, GradReduceSum::in_format);
  EXPECT_NO_THROW(parse_config("grad_reduce_format = \"e2m1\"\ngradient_accumulation_steps = 3\n", "ok.toml"));
  EXPECT_NO_THROW(parse_config("grad_reduce_format = \"bf16\"\n", "ok.toml"));
  EXPECT_NO_THROW(parse_config("grad_reduce_format = \"e4m3,overflow=inf\"\n", "ok.toml"));
  // The default sum, as a written config.toml repeats it, is no request without a format.
  EXPECT_NO_THROW(parse_config("grad_reduce_format = \"\"\ngrad_reduce_sum = \"format\"\n", "ok.toml"));
}

TEST(GradReduceConfig, BadValuesNameTheKeyAndValue) {
  EXPECT_TRUE(mentions(grad_reduce_error("\ngrad_reduce_format = \"e9m9\"\n"),
                       {"reduce.toml:2", "grad_reduce_format", "\"e9m9\"", "not a format"}));
  EXPECT_TRUE(mentions(grad_reduce_error("grad_reduce_format = \"e8m0fnu\"\n"),
                       {"reduce.toml:1", "grad_reduce_format = \"e8m0fnu\"", "unsigned", "both signs"}));
  EXPECT_TRUE(mentions(grad_reduce_error("grad_reduce_format = \"fp32\"\n"),
                       {"reduce.toml:1", "grad_reduce_format = \"fp32\"", "\"\""}));
  EXPECT_TRUE(mentions(grad_reduce_error("grad_reduce_format = 8\n"), {"reduce.toml:1", "grad_reduce_format"}));
  EXPECT_TRUE(mentions(grad_reduce_error("grad_reduce_format = \"e4m3\"\ngrad_reduce_sum = \"bf16\"\n"),
                       {"reduce.toml:2", "grad_reduce_sum", "\"bf16\"", "\"format\"", "\"fp32\""}));
  EXPECT_TRUE(mentions(grad_reduce_error("grad_reduce_sum = \"fp32\"\n"),
                       {"reduce.toml:1", "grad_reduce_sum = \"fp32\"", "grad_reduce_format = \"\"",
                        "applies only with a grad_reduce_format"}));
  EXPECT_TRUE(mentions(message_of<ConfigError>([] {
                         parse_config("", "ok.toml", std::vector<std::string>{"grad_reduce_format=e4m3,bias=200"});
                       }),
                       {"--set grad_reduce_format=e4m3,bias=200", "grad_reduce_format"}));
}

}  // namespace
