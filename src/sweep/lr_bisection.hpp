#pragma once
// The stability-threshold search as a pure function of the probes so far: which value to try
// next, and the bracket found. Values are searched on a log10 scale, assuming that a larger value
// is never more stable than a smaller one (a learning rate's threshold):
//   probe 1: low. If it diverges, the search stops: the threshold is below the range.
//   probe 2: high. If it is stable, the search stops: the threshold is above the range.
//   probes 3 … 2 + bisections: 10^((log10 s + log10 d) / 2), s the largest stable value below the
//   smallest diverged one d. Each halves the bracket's width in log10.
#include <optional>
#include <span>

namespace altgrad::sweep {

struct Probe {
  double value;
  bool diverged;
};

struct Bracket {
  std::optional<double> stable;    // the largest value with no divergence (below `diverged`)
  std::optional<double> diverged;  // the smallest value that diverged
};

struct BisectionRange {
  double low, high;  // 0 < low < high
  int bisections;    // probes after the two ends
};

// The next value to probe, or nothing when the search is over.
std::optional<double> next_probe(const BisectionRange& range, std::span<const Probe> probes);

Bracket bracket_of(std::span<const Probe> probes);

}  // namespace altgrad::sweep
