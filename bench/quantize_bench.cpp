#include "quantize_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "format/parse.hpp"
#include "quant/mx.hpp"
#include "quant/quantize.hpp"
#include "seconds.hpp"

namespace altgrad::bench {
namespace {

using format::Rounding;

// Per-tensor scaling, or MX blocks of 32 (mx8's) along the rows or down the columns of a matrix
// 512 values wide, the MLP's hidden width at n_embd = 128.
enum class Scaling { per_tensor, mx_rows, mx_columns };
constexpr std::size_t kMxMatrixWidth = 512;

struct Case {
  const char* label;
  const char* format;
  Rounding rounding;
  Scaling scaling;
  double target;  // fraction of memcpy's throughput the quantizer should reach; 0 = none set
  // Skip: a training step that writes no metrics line, whose passes leave out the error sums
  // behind rel_error (docs/quantization.md, "Which steps gather what").
  quant::ErrorSums sums = quant::ErrorSums::gather;
};

constexpr double kNearestTarget = 0.60, kStochasticTarget = 0.40;

constexpr Case kCases[] = {
    {"e4m3 nearest-even", "e4m3", Rounding::nearest_even, Scaling::per_tensor, kNearestTarget},
    {"e5m2 nearest-even", "e5m2", Rounding::nearest_even, Scaling::per_tensor, kNearestTarget},
    {"e4m3 stochastic", "e4m3", Rounding::stochastic, Scaling::per_tensor, kStochasticTarget},
    {"e1m6 nearest-even", "e1m6", Rounding::nearest_even, Scaling::per_tensor, kNearestTarget},
    {"e7m0 nearest-even", "e7m0", Rounding::nearest_even, Scaling::per_tensor, kNearestTarget},
    {"mx e4m3 rows", "e4m3", Rounding::nearest_even, Scaling::mx_rows, 0.0},
    {"mx e4m3 columns", "e4m3", Rounding::nearest_even, Scaling::mx_columns, 0.0},
    {"e4m3 no sums", "e4m3", Rounding::nearest_even, Scaling::per_tensor, kNearestTarget,
     quant::ErrorSums::skip},
    {"mx rows, no sums", "e4m3", Rounding::nearest_even, Scaling::mx_rows, 0.0, quant::ErrorSums::skip},
    {"mx columns, no sums", "e4m3", Rounding::nearest_even, Scaling::mx_columns, 0.0, quant::ErrorSums::skip},
};

// One pass of a case over `in` into `out`.
void quantize_case(const Case& c, const format::Format& f, const std::vector<float>& in, std::vector<float>& out) {
  if (c.scaling == Scaling::per_tensor) {
    quant::QuantizeOptions q;
    q.rounding = c.rounding;
    q.seed = 42;
    q.error_sums = c.sums;
    quant::quantize(f, in, out, q);
    return;
  }
  quant::MxOptions mx;
  mx.rounding = c.rounding;
  mx.error_sums = c.sums;
  if (c.scaling == Scaling::mx_rows) {
    quant::quantize_mx(f, in, out, kMxMatrixWidth, mx);
  } else {
    quant::quantize_mx_columns(f, in, out, kMxMatrixWidth, in.size() / kMxMatrixWidth, mx);
  }
}

// memcpy split into the same number of pieces as threads, so both sides use the same parallelism.
void parallel_copy(const float* in, float* out, std::size_t n) {
#pragma omp parallel
  {
    const std::size_t threads = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t begin = n * t / threads, end = n * (t + 1) / threads;
    std::memcpy(out + begin, in + begin, (end - begin) * sizeof(float));
  }
}

struct Timing {
  double copy = 1e30;
  double quantize = 1e30;
};

// Best of `repeats` for memcpy and for the quantizer, taken in alternation so that both see the
// same machine: on a shared or frequency-scaling host, timings taken minutes apart do not compare.
template <typename Quantize>
Timing best_alternating(int repeats, const std::vector<float>& in, std::vector<float>& dst, const Quantize& quantize) {
  parallel_copy(in.data(), dst.data(), in.size());  // warm-up: page faults and caches out of the measurement
  quantize();
  Timing best;
  for (int r = 0; r < repeats; ++r) {
    best.copy = std::min(best.copy, seconds([&] { parallel_copy(in.data(), dst.data(), in.size()); }));
    best.quantize = std::min(best.quantize, seconds(quantize));
  }
  return best;
}

}  // namespace

int run_quantize_bench(const QuantizeBenchOptions& options, std::ostream& out) {
  // Whole rows of the MX cases' matrix.
  const std::size_t n = std::max(kMxMatrixWidth, options.values / kMxMatrixWidth * kMxMatrixWidth);
  std::vector<float> in(n), dst(n);
  std::mt19937 gen(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& x : in) x = normal(gen);
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);  // one read + one write per value

  const int max_threads = omp_get_max_threads();
  char line[256];
  std::snprintf(line, sizeof line,
                "quantize benchmark: %zu values (%.0f MiB per buffer), statistics on; best of %d passes, "
                "each case alternating with memcpy of the same buffers\n",
                n, static_cast<double>(n) * sizeof(float) / (1 << 20), options.repeats);
  out << line;
  std::snprintf(line, sizeof line, "%-20s %7s %10s %8s %14s %10s %8s\n", "case", "threads", "Gvalues/s", "GB/s",
                "memcpy Gval/s", "vs memcpy", "target");
  out << line;
  std::vector<int> thread_counts = {1};
  if (max_threads > 1) thread_counts.push_back(max_threads);
  double one_thread_seconds[std::size(kCases)] = {};
  for (int threads : thread_counts) {
    omp_set_num_threads(threads);
    for (std::size_t i = 0; i < std::size(kCases); ++i) {
      const Case& c = kCases[i];
      const format::Format f = format::make_format(format::parse_format(c.format));
      const Timing t = best_alternating(options.repeats, in, dst, [&] { quantize_case(c, f, in, dst); });
      const double ratio = t.copy / t.quantize;
      char target[32] = "-";
      if (c.target > 0) {
        std::snprintf(target, sizeof target, ">=%.0f%% %s", 100.0 * c.target, ratio >= c.target ? "met" : "NOT MET");
      }
      std::snprintf(line, sizeof line, "%-20s %7d %10.3f %8.2f %14.3f %9.0f%% %s\n", c.label, threads,
                    n / t.quantize * 1e-9, bytes / t.quantize * 1e-9, n / t.copy * 1e-9, 100.0 * ratio, target);
      out << line;
      if (threads == 1) one_thread_seconds[i] = t.quantize;
      // The quantizer is bound by the core at one thread: with cores of their own, more threads
      // speed it up. When they do not, the row measured shared or busy cores, not the quantizer.
      const double speedup = one_thread_seconds[i] / t.quantize;
      if (threads > 1 && speedup < 1.2) {
        std::snprintf(line, sizeof line,
                      "note: %s ran %.2fx faster on %d threads than on 1: the threads shared cores\n", c.label,
                      speedup, threads);
        out << line;
      }
    }
  }
  omp_set_num_threads(max_threads);
  return 0;
}

}  // namespace altgrad::bench
