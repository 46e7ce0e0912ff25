// Suggestions for misspelled keys: typos find their key, unrelated words find nothing.
#include "config/nearest_name.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace {

using altgrad::config::nearest_name;

constexpr std::array<std::string_view, 6> kNames = {"n_layer", "n_head", "n_embd", "learning_rate", "min_lr", "seed"};

TEST(NearestName, FindsTheKeyATypoMeant) {
  EXPECT_EQ(nearest_name("n_heads", kNames), "n_head");
  EXPECT_EQ(nearest_name("n_embed", kNames), "n_embd");
  EXPECT_EQ(nearest_name("learnig_rat", kNames), "learning_rate");
  EXPECT_EQ(nearest_name("n_layers", kNames), "n_layer");
  EXPECT_EQ(nearest_name("seed", kNames), "seed");
}

TEST(NearestName, SuggestsNothingForUnrelatedWords) {
  EXPECT_EQ(nearest_name("dropout", kNames), std::nullopt);
  EXPECT_EQ(nearest_name("norm", kNames), std::nullopt);
  EXPECT_EQ(nearest_name("", kNames), std::nullopt);
}

}  // namespace
