#pragma once
// A log2 histogram (diag/log2_histogram.hpp) as a metrics line records it and as a TensorBoard
// histogram: the weights' of every diagnostic step and the value profiles' share both forms.
#include <nlohmann/json.hpp>

#include "diag/log2_histogram.hpp"
#include "io/tensorboard_histogram.hpp"

namespace altgrad::monitor {

// {"lo", "hi", "counts", "zero_or_below", "above", "non_finite"}.
nlohmann::json log2_json(const diag::Log2Histogram& h);

// Buckets end (exclusive) at their right edge: bucket k (|x| in [2^k, 2^(k+1))) ends at k + 1;
// values below 2^lo (zero included) share a bucket ending at lo, values from 2^hi up one ending at
// hi + 1. Sums use bucket centres.
io::TensorBoardHistogram log2_for_tensorboard(const diag::Log2Histogram& h);

}  // namespace altgrad::monitor
