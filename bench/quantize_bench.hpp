#pragma once
// Throughput of the quantizer against memcpy of the same buffer, measured in the same run.
#include <cstddef>
#include <ostream>

namespace altgrad::bench {

struct QuantizeBenchOptions {
  std::size_t values = std::size_t{1} << 24;  // 64 MiB per buffer: well beyond the caches
  int repeats = 5;                            // best of this many timed passes
};

// Prints one line per (case, thread count) and returns 0.
int run_quantize_bench(const QuantizeBenchOptions& options, std::ostream& out);

}  // namespace altgrad::bench
