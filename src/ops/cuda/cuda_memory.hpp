#pragma once
// The CUDA backend's memory (ops/memory.hpp): the GPU's, which the host never dereferences.
// cudaMalloc'd (256-byte aligned) and zeroed; copies to and from the host are cudaMemcpy, complete
// for the host when they return; every copy is ordered with the kernels, which all run on the
// default stream.
// Failures throw std::runtime_error naming the call, the size and CUDA's description of the error.
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <string_view>

#include "ops/memory.hpp"

namespace altgrad::ops::cuda {

class CudaMemory final : public Memory {
 public:
  std::string_view name() const override { return "cuda"; }
  bool host_accessible() const override { return false; }

  void* allocate_zeroed(std::size_t bytes) override;
  void release(void* data) noexcept override;
  void upload(void* dst, const void* host_src, std::size_t bytes) override;
  void download(void* host_dst, const void* src, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void zero(void* dst, std::size_t bytes) override;
  void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows) override;  // one cudaMemcpy2D
  std::optional<std::size_t> peak_allocated_bytes() const override { return peak_; }
  void reset_peak() override { peak_ = allocated_; }

 private:
  std::unordered_map<void*, std::size_t> sizes_;  // what each live allocation holds
  std::size_t allocated_ = 0, peak_ = 0;
};

}  // namespace altgrad::ops::cuda
