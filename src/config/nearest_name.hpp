#pragma once
// "Did you mean ...?" for misspelled config keys.
#include <optional>
#include <span>
#include <string_view>

namespace altgrad::config {

// The candidate closest to `name` by edit distance (insertions, deletions, substitutions), if it
// is close enough to be a plausible typo: at most 1 + length/4 edits (n_heads → n_head,
// learning_rat → learning_rate); "seed" is not near "norm".
std::optional<std::string_view> nearest_name(std::string_view name, std::span<const std::string_view> candidates);

}  // namespace altgrad::config
