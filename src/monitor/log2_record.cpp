#include "monitor/log2_record.hpp"

namespace altgrad::monitor {

nlohmann::json log2_json(const diag::Log2Histogram& h) {
  return {{"lo", h.lo}, {"hi", h.hi}, {"counts", h.buckets}, {"zero_or_below", h.zero_or_below},
          {"above", h.above}, {"non_finite", h.non_finite}};
}

io::TensorBoardHistogram log2_for_tensorboard(const diag::Log2Histogram& h) {
  io::TensorBoardHistogram r;
  const auto add = [&](double left, std::uint64_t count) {
    r.right_edges.push_back(left + 1);
    r.counts.push_back(static_cast<double>(count));
    if (count == 0) return;
    if (r.num == 0) r.min = left;
    r.max = left + 1;
    r.num += static_cast<double>(count);
    r.sum += static_cast<double>(count) * (left + 0.5);
    r.sum_squares += static_cast<double>(count) * (left + 0.5) * (left + 0.5);
  };
  add(h.lo - 1, h.zero_or_below);
  for (std::size_t k = 0; k < h.buckets.size(); ++k) add(h.lo + static_cast<double>(k), h.buckets[k]);
  add(h.hi, h.above);
  return r;
}

}  // namespace altgrad::monitor
