#pragma once
// How many OpenMP threads each of `jobs` concurrent runs gets on `cores` cores, so that together
// they do not oversubscribe the machine: max(1, cores / jobs). Bits do not depend on it
// (docs/determinism.md), only speed.

namespace altgrad::sweep {

constexpr int threads_per_run(int cores, int jobs) {
  const int share = jobs > 0 ? cores / jobs : cores;
  return share > 1 ? share : 1;
}

}  // namespace altgrad::sweep
