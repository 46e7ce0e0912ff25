#pragma once
// GPU memory a kernel uses between its launches and no longer (the embedding's links between
// repeated tokens): kept from call to call and grown when a call needs more, so that the step loop
// allocates only while the shapes still grow (in a training run: on the first step).
#include <cstddef>

namespace altgrad::ops::cuda {

class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  // At least `bytes` bytes of GPU memory, contents undefined; valid until the next call. Throws
  // std::runtime_error when the GPU's memory is exhausted.
  void* bytes(std::size_t bytes);

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace altgrad::ops::cuda
