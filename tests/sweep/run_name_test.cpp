#include <gtest/gtest.h>

#include "sweep/run_name.hpp"

namespace altgrad::sweep {
namespace {

TEST(RunName, NumbersAreShortest) {
  EXPECT_EQ(number_text(3e-4), "3e-4");
  EXPECT_EQ(number_text(0.001), "1e-3");
  EXPECT_EQ(number_text(6e-4), "6e-4");
  EXPECT_EQ(number_text(1.25e-5), "1.25e-5");
  EXPECT_EQ(number_text(0.05), "0.05");
  EXPECT_EQ(number_text(0.5), "0.5");
  EXPECT_EQ(number_text(2.0), "2");
  EXPECT_EQ(number_text(1e5), "1e5");
  EXPECT_EQ(number_text(0.0), "0");
}

TEST(RunName, PartsFollowTheDocumentedRule) {
  EXPECT_EQ(name_part("recipe", "e4m3-hybrid").text, "e4m3-hybrid");
  EXPECT_EQ(name_part("learning_rate", 3e-4).text, "lr3e-4");
  const NamePart seed = name_part("seed", 1);
  EXPECT_EQ(seed.text, "seed1");
  EXPECT_TRUE(seed.is_seed);
  EXPECT_FALSE(name_part("quant.seed", 1).is_seed);  // the rounding seed is a setting of the group
  EXPECT_EQ(name_part("optimizer", "sgd").text, "optimizer-sgd");
  EXPECT_EQ(name_part("quant.act.format", "e3m4").text, "format-e3m4");
  EXPECT_EQ(name_part("bias", true).text, "bias-true");
  EXPECT_EQ(name_part("data", "corpora/my file.txt").text, "data-corpora_my_file.txt");
  const std::vector<NamePart> parts = {{"e4m3-hybrid", false}, {"seed1", true}, {"lr3e-4", false}};
  EXPECT_EQ(join_name(parts), "e4m3-hybrid.seed1.lr3e-4");
  EXPECT_EQ(join_group(parts), "e4m3-hybrid.lr3e-4");
  EXPECT_EQ(join_name({}), "base");
}

}  // namespace
}  // namespace altgrad::sweep
