#include "train/value_profiles.hpp"

#include <cmath>

namespace altgrad::train {
namespace {

using nlohmann::json;

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// log2(p99.9 / p50): the binades between the median magnitude and the top 0.1%; null when the
// median is zero (more than half the values are zero).
json dynamic_range(double p50, double p999) {
  if (!(p50 > 0) || !std::isfinite(p999)) return nullptr;
  return std::log2(p999 / p50);
}

// A log2 histogram for TensorBoard: bucket k (|x| in [2^k, 2^(k+1))) ends at k + 1; the values
// below 2^lo share a bucket ending at lo, those from 2^hi up one ending at hi + 1.
io::TensorBoardHistogram tensorboard_histogram(const diag::ValueProfile::Binades& b) {
  io::TensorBoardHistogram h;
  const auto add = [&](double left, std::uint64_t count) {
    h.right_edges.push_back(left + 1);
    h.counts.push_back(static_cast<double>(count));
    if (count == 0) return;
    if (h.num == 0) h.min = left;
    h.max = left + 1;
    h.num += static_cast<double>(count);
    h.sum += static_cast<double>(count) * (left + 0.5);
    h.sum_squares += static_cast<double>(count) * (left + 0.5) * (left + 0.5);
  };
  add(b.lo - 1, b.zero_or_below);
  for (std::size_t k = 0; k < b.counts.size(); ++k) add(b.lo + static_cast<double>(k), b.counts[k]);
  add(b.hi, b.above);
  return h;
}

json profile_json(const PointProfile& p, const std::string& candidate) {
  const diag::ValueProfile& v = p.values;
  const double p50 = v.abs_percentile(50), p99 = v.abs_percentile(99), p999 = v.abs_percentile(99.9);
  const diag::ValueProfile::Binades b = v.binades();
  return {{"count", v.count()},
          {"non_finite", v.non_finite()},
          {"mean", v.mean()},
          {"std", v.stddev()},
          {"min", v.min()},
          {"max", v.max()},
          {"p50", p50},
          {"p99", p99},
          {"p99_9", p999},
          {"dynamic_range", dynamic_range(p50, p999)},
          {"log2", {{"lo", b.lo}, {"hi", b.hi}, {"counts", b.counts}, {"zero_or_below", b.zero_or_below}, {"above", b.above}}},
          {"fit",
           {{"format", candidate},
            {"scale", p.fit_scale},
            {"overflow_pct", percent(p.fit.overflow, p.fit.count)},
            {"subnormal_pct", percent(p.fit.subnormal, p.fit.count)},
            {"flush_pct", percent(p.fit.flush, p.fit.count)}}}};
}

}  // namespace

json value_profiles(const QuantHooks& hooks, const std::string& candidate, ScalarLog& scalars) {
  json out = json::object();
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    const PointProfile* p = hooks.profile(i);
    if (!p) continue;
    const std::string& name = hooks.name(i);
    json entry = profile_json(*p, candidate);
    scalars.histograms.emplace_back("profile_log2/" + name, tensorboard_histogram(p->values.binades()));
    out[name] = std::move(entry);
  }
  return out;
}

}  // namespace altgrad::train
