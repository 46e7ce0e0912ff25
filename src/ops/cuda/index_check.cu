#include "ops/cuda/index_check.hpp"

#include <cstdint>
#include <string>

#include "ops/argument_checks.hpp"
#include "ops/cuda/cuda_error.cuh"

namespace altgrad::ops::cuda {
namespace {

constexpr unsigned kCheckThreads = 1024;

// One block: each thread finds its first bad position (positions thread, thread + 1024, ...), and
// the block takes the least of them by a tree of minima in shared memory; no atomics, and the
// answer is the first bad position whichever thread saw it.
__global__ void first_outside_kernel(long long* found, const std::int32_t* indices, std::size_t n, long long limit) {
  __shared__ unsigned long long first[kCheckThreads];
  unsigned long long mine = ~0ull;
  for (std::size_t i = threadIdx.x; i < n; i += kCheckThreads) {
    if (indices[i] < 0 || indices[i] >= limit) {
      mine = i;
      break;
    }
  }
  first[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = kCheckThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half && first[threadIdx.x + half] < first[threadIdx.x]) {
      first[threadIdx.x] = first[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const bool any = first[0] != ~0ull;
    found[0] = any ? static_cast<long long>(first[0]) : -1;
    found[1] = any ? indices[first[0]] : 0;
  }
}

}  // namespace

IndexCheck::IndexCheck() {
  void* memory = nullptr;
  check_cuda(cudaMalloc(&memory, 2 * sizeof(long long)), "cudaMalloc of the index check's 16 bytes");
  found_ = static_cast<long long*>(memory);
}

IndexCheck::~IndexCheck() { cudaFree(found_); }

void IndexCheck::require_below(const char* kernel, const char* buffer, std::span<const std::int32_t> indices,
                               std::size_t limit) {
  if (indices.empty()) return;
  // Indices are int32: a limit past their range only admits all non-negative ones.
  const long long bound =
      limit > std::size_t{INT32_MAX} ? static_cast<long long>(INT32_MAX) + 1 : static_cast<long long>(limit);
  first_outside_kernel<<<1, kCheckThreads>>>(found_, indices.data(), indices.size(), bound);
  check_launch("first_outside_kernel");
  long long found[2];
  check_cuda(cudaMemcpy(found, found_, sizeof found, cudaMemcpyDeviceToHost),
             [&] { return std::string(kernel) + ": cudaMemcpy of the check of " + buffer; });
  if (found[0] >= 0) throw_index_outside(kernel, buffer, static_cast<std::size_t>(found[0]), found[1], limit);
}

}  // namespace altgrad::ops::cuda
