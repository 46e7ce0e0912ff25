#include "optim/state_groups.hpp"

#include <algorithm>
#include <stdexcept>

namespace altgrad::optim {

StateGroups::StateGroups(std::span<const ParameterRange> ranges, std::size_t group) : group_(group) {
  if (group == 0) throw std::invalid_argument("state groups: the group size must be at least 1");
  for (const ParameterRange& range : ranges) {
    range_first_.push_back(begin_.size());
    const std::size_t range_end = range.offset + range.size;
    for (std::size_t b = range.offset; b < range_end; b += group) {
      begin_.push_back(b);
      end_.push_back(std::min(b + group, range_end));
    }
  }
  range_first_.push_back(begin_.size());
}

}  // namespace altgrad::optim
