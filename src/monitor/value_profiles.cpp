#include "monitor/value_profiles.hpp"

#include <cmath>

#include "monitor/log2_record.hpp"

namespace altgrad::monitor {
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

json profile_json(const precision::PointProfile& p, const std::string& candidate) {
  const diag::ValueProfile& v = p.values;
  const double p50 = v.abs_percentile(50), p99 = v.abs_percentile(99), p999 = v.abs_percentile(99.9);

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
          {"log2", log2_json(v.log2_histogram())},
          {"fit",
           {{"format", candidate},
            {"scale", p.fit_scale},
            {"overflow_pct", percent(p.fit.overflow, p.fit.count)},
            {"subnormal_pct", percent(p.fit.subnormal, p.fit.count)},
            {"flush_pct", percent(p.fit.flush, p.fit.count)}}}};
}

}  // namespace

json value_profiles(const precision::QuantHooks& hooks, const std::string& candidate, ScalarLog& scalars) {
  json out = json::object();
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    const precision::PointProfile* p = hooks.profile(i);
    if (!p) continue;
    const std::string& name = hooks.name(i);
    json entry = profile_json(*p, candidate);
    scalars.histograms.emplace_back("profile_log2/" + name, log2_for_tensorboard(p->values.log2_histogram()));
    out[name] = std::move(entry);
  }
  return out;
}

}  // namespace altgrad::monitor
