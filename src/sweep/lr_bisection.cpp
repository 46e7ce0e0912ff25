#include "sweep/lr_bisection.hpp"

#include <cmath>

namespace altgrad::sweep {

Bracket bracket_of(std::span<const Probe> probes) {
  Bracket bracket;
  for (const Probe& p : probes) {
    if (p.diverged && (!bracket.diverged || p.value < *bracket.diverged)) bracket.diverged = p.value;
  }
  for (const Probe& p : probes) {
    const bool below = !bracket.diverged || p.value < *bracket.diverged;
    if (!p.diverged && below && (!bracket.stable || p.value > *bracket.stable)) bracket.stable = p.value;
  }
  return bracket;
}

std::optional<double> next_probe(const BisectionRange& range, std::span<const Probe> probes) {
  if (probes.empty()) return range.low;
  if (probes.size() == 1) return probes[0].diverged ? std::nullopt : std::optional<double>(range.high);
  if (probes.size() == 2 && !probes[1].diverged) return std::nullopt;
  if (probes.size() >= 2 + static_cast<std::size_t>(range.bisections)) return std::nullopt;
  const Bracket b = bracket_of(probes);
  if (!b.stable || !b.diverged) return std::nullopt;
  return std::pow(10.0, (std::log10(*b.stable) + std::log10(*b.diverged)) / 2);
}

}  // namespace altgrad::sweep
