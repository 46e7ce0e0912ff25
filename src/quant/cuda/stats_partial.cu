#include "quant/cuda/stats_partial.cuh"

#include "quant/cuda/cuda_status.cuh"

namespace altgrad::quant::cuda {
namespace {

__global__ void __launch_bounds__(kThreads) fold_partials(StatsPartial* partials, unsigned count) {
  StatsPartial p{};
  for (unsigned i = threadIdx.x; i < count; i += kThreads) p = combine(p, partials[i]);
  p = block_total(p);
  if (threadIdx.x == 0) partials[kMaxGrid] = p;
}

}  // namespace

StatsPartial reduce_partials(StatsPartial* partials, unsigned count, const char* caller) {
  fold_partials<<<1, kThreads>>>(partials, count);
  check_cuda(cudaGetLastError(), caller, "launch of the statistics' reduction");
  StatsPartial total{};
  // A fault inside the quantizer's kernel shows here, at the first call that waits for the GPU.
  check_cuda(cudaMemcpy(&total, partials + kMaxGrid, sizeof total, cudaMemcpyDeviceToHost), caller,
             "download of the statistics");
  return total;
}

}  // namespace altgrad::quant::cuda
