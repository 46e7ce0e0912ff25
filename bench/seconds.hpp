#pragma once
// The wall time of one call, for the benches that time two sides in turn.
#include <chrono>

namespace altgrad::bench {

template <typename Call>
double seconds(const Call& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace altgrad::bench
