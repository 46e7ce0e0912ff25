#include "quantize_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "format/parse.hpp"
#include "quant/quantize.hpp"

namespace altgrad::bench {
namespace {

using format::Rounding;

struct Case {
  const char* label;
  const char* format;
  Rounding rounding;
};

constexpr Case kCases[] = {
    {"e4m3 nearest-even", "e4m3", Rounding::nearest_even},
    {"e5m2 nearest-even", "e5m2", Rounding::nearest_even},
    {"e4m3 stochastic", "e4m3", Rounding::stochastic},
    {"e1m6 nearest-even", "e1m6", Rounding::nearest_even},
    {"e7m0 nearest-even", "e7m0", Rounding::nearest_even},
};

double best_seconds(int repeats, const std::function<void()>& pass) {
  pass();  // warm-up: page faults and caches out of the measurement
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
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

}  // namespace

int run_quantize_bench(const QuantizeBenchOptions& options, std::ostream& out) {
  const std::size_t n = options.values;
  std::vector<float> in(n), dst(n);
  std::mt19937 gen(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& x : in) x = normal(gen);
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);  // one read + one write per value

  const int max_threads = omp_get_max_threads();
  char line[256];
  std::snprintf(line, sizeof line, "quantize benchmark: %zu values (%.0f MiB per buffer), best of %d, statistics on\n",
                n, static_cast<double>(n) * sizeof(float) / (1 << 20), options.repeats);
  out << line;
  std::snprintf(line, sizeof line, "%-20s %7s %12s %9s %12s\n", "case", "threads", "Gvalues/s", "GB/s", "vs memcpy");
  out << line;
  std::vector<int> thread_counts = {1};
  if (max_threads > 1) thread_counts.push_back(max_threads);
  for (int threads : thread_counts) {
    omp_set_num_threads(threads);
    const double copy_s = best_seconds(options.repeats, [&] { parallel_copy(in.data(), dst.data(), n); });
    std::snprintf(line, sizeof line, "%-20s %7d %12.3f %9.2f %12s\n", "memcpy", threads, n / copy_s * 1e-9,
                  bytes / copy_s * 1e-9, "1.00");
    out << line;
    for (const Case& c : kCases) {
      const format::Format f = format::make_format(format::parse_format(c.format));
      quant::QuantizeOptions q;
      q.rounding = c.rounding;
      q.seed = 42;
      const double s = best_seconds(options.repeats, [&] { quant::quantize(f, in, dst, q); });
      std::snprintf(line, sizeof line, "%-20s %7d %12.3f %9.2f %11.0f%%\n", c.label, threads, n / s * 1e-9,
                    bytes / s * 1e-9, 100.0 * copy_s / s);
      out << line;
    }
  }
  omp_set_num_threads(max_threads);
  return 0;
}

}  // namespace altgrad::bench
