// Both logs write every non-finite number by one rule, whichever part of the engine made the line:
// ±∞ as "inf"/"-inf", NaN as null, at any depth of the line.
#include "monitor/run_log.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>

#include "support/scratch_dir.hpp"

namespace altgrad::monitor {
namespace {

nlohmann::json only_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line, extra;
  EXPECT_TRUE(std::getline(in, line)) << path;
  EXPECT_FALSE(std::getline(in, extra)) << path;
  return nlohmann::json::parse(line);
}

TEST(RunLog, WritesNonFiniteNumbersByOneRuleInBothLogs) {
  test_support::ScratchDir dir;
  constexpr double inf = std::numeric_limits<double>::infinity();
  const nlohmann::json line = {{"step", 3},
                               {"loss", 1.5},
                               {"grad_norm", inf},
                               {"diag", {{"grad_snr_db", {{"a", inf}, {"b", -inf}}}, {"per_head", {0.5, std::nan("")}}}},
                               {"quant", {{"h.0:act", {{"scale", std::nan("")}, {"overflow", 2}}}}}};
  {
    monitor::RunLog log(dir.path());
    log.metrics(line);
    log.event(line);
  }
  for (const char* name : {"metrics.jsonl", "events.jsonl"}) {
    const nlohmann::json got = only_line(dir.path() / name);
    EXPECT_EQ(got.at("step"), 3) << name;
    EXPECT_EQ(got.at("loss"), 1.5) << name;
    EXPECT_EQ(got.at("grad_norm"), "inf") << name;
    EXPECT_EQ(got.at("diag").at("grad_snr_db").at("a"), "inf") << name;
    EXPECT_EQ(got.at("diag").at("grad_snr_db").at("b"), "-inf") << name;
    EXPECT_EQ(got.at("diag").at("per_head"), nlohmann::json::parse("[0.5, null]")) << name;
    EXPECT_TRUE(got.at("quant").at("h.0:act").at("scale").is_null()) << name;
    EXPECT_EQ(got.at("quant").at("h.0:act").at("overflow"), 2) << name;
  }
}

}  // namespace
}  // namespace altgrad::monitor
