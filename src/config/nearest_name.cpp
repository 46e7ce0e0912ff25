#include "config/nearest_name.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace altgrad::config {
namespace {

// Levenshtein distance, one row at a time.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string_view> nearest_name(std::string_view name, std::span<const std::string_view> candidates) {
  std::optional<std::string_view> best;
  std::size_t best_distance = 1 + name.size() / 4;
  for (const auto candidate : candidates) {
    const std::size_t distance = edit_distance(name, candidate);
    if (distance <= best_distance && (!best || distance < best_distance)) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace altgrad::config
