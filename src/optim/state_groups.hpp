#pragma once
// The groups of a per-group-scaled state tensor (optim/quantized_state.hpp): each parameter range
// cut into runs of `group` consecutive elements from its start, the last run of a range shorter
// when `group` does not divide its size. A group never spans two parameter tensors, so a tensor of
// small values never shares a scale with one of large values (torchao and COAT also group within
// one tensor's flattened state).
#include <cstddef>
#include <span>
#include <vector>

#include "optim/parameter_range.hpp"

namespace altgrad::optim {

class StateGroups {
 public:
  // Throws std::invalid_argument when group is 0.
  StateGroups(std::span<const ParameterRange> ranges, std::size_t group);

  std::size_t group_size() const { return group_; }
  std::size_t count() const { return begin_.size(); }
  // Offsets in the parameter buffer: group g covers [begin(g), end(g)).
  std::size_t begin(std::size_t g) const { return begin_[g]; }
  std::size_t end(std::size_t g) const { return end_[g]; }
  // Range r's groups are [first_of_range(r), first_of_range(r + 1)).
  std::size_t first_of_range(std::size_t r) const { return range_first_[r]; }

 private:
  std::size_t group_;
  std::vector<std::size_t> begin_, end_;
  std::vector<std::size_t> range_first_;  // one per range, plus count()
};

}  // namespace altgrad::optim
