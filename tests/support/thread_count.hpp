#pragma once
// The OpenMP thread count pinned for one scope, for "the same bits on any thread count" checks.
#include <omp.h>

namespace altgrad::test_support {

// Sets the thread count and restores the previous one on exit, so that a test that pins it cannot
// leak it into the next test.
class ScopedThreadCount {
 public:
  explicit ScopedThreadCount(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedThreadCount() { omp_set_num_threads(saved_); }
  ScopedThreadCount(const ScopedThreadCount&) = delete;
  ScopedThreadCount& operator=(const ScopedThreadCount&) = delete;

 private:
  int saved_;
};

// compute() evaluated with `threads` OpenMP threads.
template <typename Compute>
auto with_threads(int threads, Compute&& compute) {
  const ScopedThreadCount pinned(threads);
  return compute();
}

}  // namespace altgrad::test_support
