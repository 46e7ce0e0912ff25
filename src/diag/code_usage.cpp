#include "diag/code_usage.hpp"

#include <stdexcept>
#include <string>

#include "format/codec.hpp"
#include "format/grid.hpp"

namespace altgrad::diag {

CodeUsage code_usage(std::span<const std::uint64_t> histogram, const format::Format& f) {
  if (histogram.size() != f.code_count()) {
    throw std::invalid_argument("code_usage: histogram has " + std::to_string(histogram.size()) +
                                " bins but the " + std::to_string(f.width) + "-bit format has " +
                                std::to_string(f.code_count()) + " codes");
  }
  CodeUsage usage;
  for (std::uint32_t code = 0; code < f.code_count(); ++code) {
    if (format::is_nan_code(f, code) || !format::is_valid_code(f, code)) continue;
    ++usage.total;
    if (histogram[code] > 0) ++usage.used;
  }
  usage.fraction = usage.total > 0 ? static_cast<double>(usage.used) / usage.total : 0.0;
  return usage;
}

}  // namespace altgrad::diag
