// The forward and backward passes allocate nothing: every buffer is made once, in Activations and
// Gpt. This file replaces the global operator new for the whole test binary, counting calls while
// a probe is armed; the replacement is plain malloc/free otherwise.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "model/gpt.hpp"
#include "model_test_support.hpp"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};

}  // namespace

// The replaced operator new allocates with malloc, so free is its match; GCC 12 cannot see that
// through the replacement at every optimization level and warns (-Wmismatched-new-delete).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace altgrad::model;
using namespace altgrad::model_test;

// Identity hooks that allocate nothing themselves.
class CopyHooks : public MatmulHooks<float> {
 public:
  bool active(const MatmulOperand&) override { return true; }
  void apply(const MatmulOperand&, std::span<const float> in, std::span<float> out) override {
    std::copy(in.begin(), in.end(), out.begin());
  }
};

TEST(Allocation, ForwardAndBackwardAllocateNothing) {
  for (const Mlp mlp : {Mlp::gelu, Mlp::swiglu}) {
    Gpt<float> model(tiny_config(Norm::layernorm, mlp, true));
    model.initialize(1);
    const Batch batch = make_batch(model.config(), 2, 8, 2);
    Activations<float> acts(model.config(), batch.B, batch.T, OperandCopies::allocated);
    CopyHooks hooks;
    for (MatmulHooks<float>* h :
         {static_cast<MatmulHooks<float>*>(nullptr), static_cast<MatmulHooks<float>*>(&hooks)}) {
      g_allocations = 0;
      g_counting = true;
      gpt_forward(model, acts, batch.tokens, batch.targets, h);
      gpt_backward(model, acts, h);
      g_counting = false;
      EXPECT_EQ(g_allocations.load(), 0u) << (h != nullptr ? "with hooks" : "without hooks");
    }
  }
}

// The probe works: constructing Activations allocates.
TEST(Allocation, ProbeSeesAllocations) {
  g_allocations = 0;
  g_counting = true;
  const Activations<float> acts(tiny_config(), 1, 4);
  g_counting = false;
  EXPECT_GT(g_allocations.load(), 0u);
}

}  // namespace
