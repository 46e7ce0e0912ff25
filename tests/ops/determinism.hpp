#pragma once
// Determinism checks: a kernel run twice gives the same bits, and the same bits for any OpenMP
// thread count (see ops/cpu/parallel.hpp and ops/cpu/gemm.hpp).
#include <gtest/gtest.h>

#include "ops/test_tensors.hpp"
#include "support/thread_count.hpp"

namespace altgrad::ops_test {

using test_support::ScopedThreadCount;

// More threads than this machine may have cores, and an odd number, so rows and column blocks
// split unevenly between them.
inline constexpr int kManyThreads = 3;

template <typename Scalar>
void expect_identical(const Pass<Scalar>& a, const Pass<Scalar>& b) {
  EXPECT_TRUE(bit_identical(a.outputs, b.outputs));
  EXPECT_TRUE(bit_identical(a.gradients, b.gradients));
}

// run() returns a Pass. Two runs with kManyThreads threads must agree bit for bit.
template <typename Run>
void expect_identical_bits_on_repeat(Run run) {
  const ScopedThreadCount threads(kManyThreads);
  expect_identical(run(), run());
}

// As above, and a run on one thread must agree with them too.
template <typename Run>
void expect_identical_bits_for_any_thread_count(Run run) {
  expect_identical_bits_on_repeat(run);
  const auto parallel = [&] {
    const ScopedThreadCount threads(kManyThreads);
    return run();
  }();
  const ScopedThreadCount threads(1);
  expect_identical(parallel, run());
}

}  // namespace altgrad::ops_test
