// Counting the causally masked entries of attention probabilities, by hand on small tiles.
#include "quant/causal_mask.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace altgrad::quant {
namespace {

TEST(CausalMask, CountsTheEntriesAboveEachTilesDiagonal) {
  EXPECT_EQ(causal_mask_count(1, 1, 0).values, 0u);        // a single query sees its only key
  EXPECT_EQ(causal_mask_count(16, 4, 0).values, 6u);       // 0 + 1 + 2 + 3 ... rows 3, 2, 1, 0 masked
  EXPECT_EQ(causal_mask_count(3 * 16, 4, 0).values, 18u);  // three tiles
  EXPECT_EQ(causal_mask_count(16, 4, 0).blocks, 0u);       // no block scaling, no blocks
}

TEST(CausalMask, CountsBlocksHoldingOnlyMaskedEntries) {
  // T = 4, blocks of 2: rows attend to 1, 2, 3, 4 keys, so rows 0 and 1 have their second block
  // wholly masked, rows 2 and 3 none.
  EXPECT_EQ(causal_mask_count(16, 4, 2).blocks, 2u);
  // T = 5, blocks of 2 (3 per row, the last one short): rows need 1, 1, 2, 2, 3 blocks.
  EXPECT_EQ(causal_mask_count(2 * 25, 5, 2).blocks, 2u * (2 + 2 + 1 + 1 + 0));
  // A block wider than the row: every row uses its one block.
  EXPECT_EQ(causal_mask_count(16, 4, 32).blocks, 0u);
}

TEST(CausalMask, CountsBlocksDownTheColumns) {
  // T = 5, blocks of 2 queries ([0, 2), [2, 4), [4, 5)) down each key's column: a block is wholly
  // masked when its last query comes before the key. Keys 0..4 have 0, 0, 1, 1, 2 such blocks.
  EXPECT_EQ(causal_mask_count(25, 5, 2, true).blocks, 4u);
  EXPECT_EQ(causal_mask_count(16, 4, 2, true).blocks, 2u);
  EXPECT_EQ(causal_mask_count(25, 5, 2, true).values, 10u);
}

TEST(CausalMask, RejectsAPartialTile) { EXPECT_THROW(causal_mask_count(15, 4, 0), std::invalid_argument); }

}  // namespace
}  // namespace altgrad::quant
