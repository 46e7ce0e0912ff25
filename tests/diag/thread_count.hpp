#pragma once
// Runs a computation under a pinned OpenMP thread count, for "same bits with 1 and 2 threads" checks.
#include <omp.h>

namespace altgrad::diag_test {

// Sets the OpenMP thread count for one scope and restores the previous one, so a test that pins the
// count cannot leak it into the next test.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ThreadCount() { omp_set_num_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// compute() evaluated with `threads` OpenMP threads.
template <typename Compute>
auto with_threads(int threads, Compute&& compute) {
  const ThreadCount pinned(threads);
  return compute();
}

}  // namespace altgrad::diag_test
