// [criteria] in a sweep file: read into the spec (with the groups a criterion judges), written to
// index.json for the report, and every mistake refused before anything runs, naming the file, line
// and key.
#include <gtest/gtest.h>

#include "sweep/expansion.hpp"
#include "sweep/index_writer.hpp"
#include "sweep_test_support.hpp"

namespace altgrad::sweep {
namespace {

using sweep_test::expansion_error;
using test_support::ScratchDir;

const std::string kSweep = R"(base = "base.toml"
[recipes.bf16]
quant.preset = "bf16"
[recipes.fp8]
quant.preset = "fp8-hybrid"
[axes]
recipe = ["bf16", "fp8"]
seed = [1, 2]
)";

TEST(SweepCriteria, OneTableOrSeveralAreReadAndIndexed) {
  ScratchDir dir;
  dir.write("base.toml", sweep_test::kSmallBase);
  const SweepSpec one = load_sweep(dir.write("one.toml", kSweep + "[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = 2\n"));
  ASSERT_EQ(one.criteria.size(), 1u);
  EXPECT_EQ(one.criteria[0].baseline, "bf16");
  EXPECT_EQ(one.criteria[0].max_gap_pct, 2.0);
  EXPECT_EQ(one.criteria[0].min_seeds, 3);  // the defaults
  EXPECT_EQ(one.criteria[0].min_steps, 0);
  const SweepSpec two = load_sweep(dir.write("two.toml", kSweep + R"(
[[criteria]]
baseline = "bf16"
max_gap_pct = 1
min_seeds = 2
min_steps = 1000
[[criteria]]
baseline = "bf16"
max_gap_pct = 2.5
groups = ["fp8"]
)"));
  ASSERT_EQ(two.criteria.size(), 2u);
  EXPECT_EQ(two.criteria[0].min_seeds, 2);
  EXPECT_EQ(two.criteria[0].min_steps, 1000);
  EXPECT_TRUE(two.criteria[0].groups.empty());
  EXPECT_EQ(two.criteria[1].max_gap_pct, 2.5);
  EXPECT_EQ(two.criteria[1].groups, std::vector<std::string>{"fp8"});
  const auto runs = expand(two);
  std::vector<IndexedRun> indexed;
  for (const PlannedRun& run : runs) indexed.push_back({&run, std::nullopt});
  const nlohmann::json index = index_json("base.toml", indexed, {}, two.criteria);
  EXPECT_EQ(index.at("criteria"), nlohmann::json::parse(R"([
    {"baseline": "bf16", "max_gap_pct": 1.0, "min_seeds": 2, "min_steps": 1000},
    {"baseline": "bf16", "max_gap_pct": 2.5, "min_seeds": 3, "min_steps": 0, "groups": ["fp8"]}])"));
}

TEST(SweepCriteria, MistakesAreRefusedWithFileLineAndKey) {
  ScratchDir dir;
  const auto error = [&](const std::string& criteria) { return expansion_error(dir, kSweep + criteria); };
  // kSweep has 8 lines: [criteria] is line 9.

  EXPECT_NE(error("[criteria]\nbaseline = \"bf16\"\nmax_gap = 2\n").find("sweep.toml:11: unknown key 'max_gap' in [criteria]"),
            std::string::npos) << error("[criteria]\nbaseline = \"bf16\"\nmax_gap = 2\n");
  EXPECT_NE(error("[criteria]\nbaseline = \"bf32\"\nmax_gap_pct = 2\n")
                .find("sweep.toml:9: criteria.baseline = \"bf32\" names no group of this sweep (groups: bf16, fp8)"),
            std::string::npos) << error("[criteria]\nbaseline = \"bf32\"\nmax_gap_pct = 2\n");
  EXPECT_NE(error("[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = -1\n").find("sweep.toml:11: criteria.max_gap_pct must be a finite number > 0"),
            std::string::npos) << error("[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = -1\n");
  EXPECT_NE(error("[criteria]\nbaseline = \"bf16\"\n").find("sweep.toml:9: [criteria] needs max_gap_pct"), std::string::npos)
      << error("[criteria]\nbaseline = \"bf16\"\n");
  EXPECT_NE(error("[criteria]\nbaseline = 3\nmax_gap_pct = 2\n").find("sweep.toml:10: criteria.baseline must name a group"),
            std::string::npos) << error("[criteria]\nbaseline = 3\nmax_gap_pct = 2\n");
  EXPECT_NE(error("[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = 2\nmin_seeds = 0\n").find("sweep.toml:12: criteria.min_seeds must be an integer >= 1"),
            std::string::npos) << error("[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = 2\nmin_seeds = 0\n");
  const std::string judged = "[criteria]\nbaseline = \"bf16\"\nmax_gap_pct = 2\n";
  EXPECT_NE(error(judged + "groups = [\"fp16\"]\n")
                .find("sweep.toml:9: criteria.groups = \"fp16\" names no group of this sweep (groups: bf16, fp8)"),
            std::string::npos) << error(judged + "groups = [\"fp16\"]\n");
  EXPECT_NE(error(judged + "groups = [\"fp8\", \"bf16\"]\n")
                .find("sweep.toml:9: criteria.groups names the baseline \"bf16\", which is not judged against itself"),
            std::string::npos) << error(judged + "groups = [\"fp8\", \"bf16\"]\n");
  EXPECT_NE(error(judged + "groups = []\n").find("sweep.toml:12: criteria.groups must be a non-empty array of group names"),
            std::string::npos) << error(judged + "groups = []\n");
  EXPECT_NE(error(judged + "groups = \"fp8\"\n").find("sweep.toml:12: criteria.groups must be a non-empty array"),
            std::string::npos) << error(judged + "groups = \"fp8\"\n");
  EXPECT_NE(error(judged + "groups = [\"fp8\", 2]\n").find("sweep.toml:12: criteria.groups must be a non-empty array"),
            std::string::npos) << error(judged + "groups = [\"fp8\", 2]\n");
  const std::string not_a_table = expansion_error(dir, "criteria = 2\n" + kSweep);
  EXPECT_NE(not_a_table.find("sweep.toml:1: criteria must be a table ([criteria]) or an array of tables ([[criteria]])"),
            std::string::npos) << not_a_table;
}

}  // namespace
}  // namespace altgrad::sweep
