#include "optim/parameter_range.hpp"

#include <stdexcept>
#include <string>

namespace altgrad::optim {

void check_ranges(std::string_view who, std::size_t parameter_count, std::span<const ParameterRange> ranges) {
  std::size_t covered = 0;
  for (const auto& r : ranges) {
    if (r.offset + r.size > parameter_count) {
      throw std::invalid_argument(std::string(who) + ": parameter range [" + std::to_string(r.offset) + ", " +
                                  std::to_string(r.offset + r.size) + ") exceeds " + std::to_string(parameter_count) +
                                  " parameters");
    }
    covered += r.size;
  }
  if (covered != parameter_count) {
    throw std::invalid_argument(std::string(who) + ": ranges cover " + std::to_string(covered) + " of " +
                                std::to_string(parameter_count) + " parameters");
  }
}

}  // namespace altgrad::optim
