// Writing configs: every key, in a fixed order, and reading the output back gives the same config,
// including awkward floats, strings that need escaping and a nested [quant] table; the presets in
// configs/ parse, and default.toml is exactly the defaults.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "support/error_message.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using altgrad::config::config_to_toml;
using altgrad::data::CorpusFormat;
using altgrad::config::load_config;
using altgrad::config::Mlp;
using altgrad::config::Norm;
using altgrad::config::OptimizerKind;
using altgrad::config::parse_config;
using altgrad::config::QuantTable;
using altgrad::config::TrainConfig;
using altgrad::config::write_config;
using altgrad::test_support::ScratchDir;

// Every key a config has, as this test knows them.
const std::vector<std::string> kKeys = {
    "n_layer", "n_head", "n_embd", "block_size", "bias", "norm", "mlp", "mlp_hidden", "data", "data_format",
    "jsonl_field", "val_fraction", "batch_size", "gradient_accumulation_steps", "grad_reduce_format",
    "grad_reduce_sum", "optimizer", "learning_rate",
    "min_lr", "warmup_iters", "lr_decay_iters", "max_iters", "weight_decay", "beta1", "beta2", "momentum", "nesterov",
    "grad_clip", "eval_interval",
    "eval_iters", "log_interval", "seed", "device", "out_dir", "checkpoint_interval", "keep_checkpoints",
    "diag_interval", "warn_overflow_pct", "warn_underflow_pct", "warn_kurtosis", "warn_kurtosis_growth",
    "warn_attention_entropy", "warn_loss_spike", "warn_grad_norm_spike", "warn_every", "stop_loss_multiple"};

// A config where every field differs from its default, with values that are hard to write back.
TrainConfig unusual_config() {
  TrainConfig c;
  c.n_layer = 7;
  c.n_head = 3;
  c.n_embd = 96;
  c.block_size = 33;
  c.bias = true;
  c.norm = Norm::rmsnorm;
  c.mlp = Mlp::swiglu;
  c.mlp_hidden = 257;
  c.data = "corpora/\"quoted\" \\ back\\slash\ttab\nnewline é 中";
  c.data_format = CorpusFormat::jsonl;
  c.jsonl_field = "body";
  c.val_fraction = 1.0 / 3.0;
  c.batch_size = 5;
  c.gradient_accumulation_steps = 4;
  c.grad_reduce_format = "e5m2fnuz,subnormals=off";
  c.grad_reduce_sum = altgrad::config::GradReduceSum::fp32;
  c.optimizer = OptimizerKind::sgd;
  c.learning_rate = 6e-4;
  c.min_lr = 1e-7;
  c.warmup_iters = 0;
  c.lr_decay_iters = 123457;
  c.max_iters = 9'000'000'000;
  c.weight_decay = 0.30000000000000004;
  c.beta1 = 0.0;
  c.beta2 = 0.95;
  c.momentum = 0.25;
  c.nesterov = true;
  c.grad_clip = 0.0;
  c.eval_interval = 17;
  c.eval_iters = 3;
  c.log_interval = 1;
  c.seed = (std::uint64_t{1} << 62) + 3;
  c.device = altgrad::config::Device::cuda;
  c.out_dir = "runs/x y";
  c.checkpoint_interval = 0;
  c.keep_checkpoints = 0;
  c.diag_interval = 7;
  c.warn_overflow_pct = 0.125;
  c.warn_underflow_pct = 55.5;
  c.warn_kurtosis = 1e6;
  c.warn_kurtosis_growth = 2.25;
  c.warn_attention_entropy = 0.0;
  c.warn_loss_spike = 1.5;
  c.warn_grad_norm_spike = 1e3;
  c.warn_every = 1;
  c.stop_loss_multiple = 2.5;
  return c;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path repository_root() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

TEST(ConfigWrite, DefaultsRoundTrip) {
  const std::string text = config_to_toml(TrainConfig{});
  EXPECT_EQ(parse_config(text, "written.toml"), TrainConfig{}) << text;
}

TEST(ConfigWrite, EveryFieldRoundTrips) {
  const TrainConfig original = unusual_config();
  const std::string text = config_to_toml(original);
  const TrainConfig parsed = parse_config(text, "written.toml");
  EXPECT_EQ(parsed, original) << text;
  EXPECT_EQ(parsed.data, original.data);
  EXPECT_EQ(parsed.val_fraction, 1.0 / 3.0);
  EXPECT_EQ(config_to_toml(parsed), text);  // stable: writing again gives the same text
}

TEST(ConfigWrite, QuantTableRoundTrips) {
  const TrainConfig original = parse_config(R"(
[quant]
format = "e4m3"
margin = 0.1
history = 16
enabled = true
formats = ["e4m3", "e5m2"]
scaling = { kind = "delayed", amax = "max" }
[quant.overrides."h.*.attn.c_attn:act"]
format = "bf16"
[[quant.rules]]
pattern = "h.0.*"
[[quant.rules]]
pattern = "lm_head"
)",
                                            "q.toml");
  const std::string text = config_to_toml(original);
  const TrainConfig parsed = parse_config(text, "written.toml");
  EXPECT_EQ(parsed, original) << text;
  EXPECT_EQ(parsed.quant.table()["overrides"]["h.*.attn.c_attn:act"]["format"].value<std::string>(), "bf16");
  EXPECT_EQ(parsed.quant.table()["rules"][1]["pattern"].value<std::string>(), "lm_head");
  EXPECT_NE(parsed.quant, QuantTable{});
}

TEST(ConfigWrite, WritesEveryKeyOnceInAFixedOrderBeforeTheQuantTable) {
  const std::string text = config_to_toml(TrainConfig{});
  const auto quant = text.find("\n[quant]");
  ASSERT_NE(quant, std::string::npos);
  std::size_t previous = 0;
  for (const auto& key : kKeys) {
    const auto at = text.find("\n" + key + " = ");
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_EQ(text.find("\n" + key + " = ", at + 1), std::string::npos) << key << " written twice";
    EXPECT_LT(at, quant) << key;
    EXPECT_GT(at, previous) << key << " out of order";
    previous = at;
  }
  EXPECT_EQ(config_to_toml(TrainConfig{}), text);
}

TEST(ConfigWrite, WritesAFileThatLoadsBack) {
  ScratchDir dir;
  const auto path = dir.path() / "config.toml";
  write_config(path, unusual_config());
  EXPECT_EQ(load_config(path), unusual_config());
  EXPECT_EQ(read_file(path), config_to_toml(unusual_config()));
}

TEST(ConfigPresets, DefaultTomlIsExactlyTheDefaults) {
  EXPECT_EQ(load_config(repository_root() / "configs/default.toml"), TrainConfig{});
}

TEST(ConfigPresets, DefaultTomlSetsEveryKeyExplicitly) {
  const std::string text = read_file(repository_root() / "configs/default.toml");
  for (const auto& key : kKeys) EXPECT_NE(text.find("\n" + key + " = "), std::string::npos) << key;
}

TEST(ConfigPresets, TinyTomlIsASecondsLongValidRun) {
  const TrainConfig tiny = load_config(repository_root() / "configs/tiny.toml");
  EXPECT_LE(tiny.max_iters, 50);
  EXPECT_LE(tiny.n_layer * tiny.n_embd * tiny.n_embd, 2 * 64 * 64);
  EXPECT_LE(tiny.batch_size * tiny.block_size, 256);
  EXPECT_LE(tiny.eval_iters * 2 * (tiny.max_iters / tiny.eval_interval + 1), 50);
  EXPECT_NE(tiny.out_dir, TrainConfig{}.out_dir);  // never overwrites a real run
}

}  // namespace
