// The host's Memory (ops/memory.hpp): the CPU backend's tensors are ordinary host allocations.
#include <cstring>
#include <new>
#include <string>

#include "ops/memory.hpp"

namespace altgrad::ops {
namespace {

// A cache line: a tensor never starts mid-line, so that two threads writing neighbouring
// tensors never share one.
constexpr std::align_val_t kAlignment{64};

class HostMemory final : public Memory {
 public:
  std::string_view name() const override { return "host"; }
  bool host_accessible() const override { return true; }

  void* allocate_zeroed(std::size_t bytes) override {
    void* data = ::operator new(bytes, kAlignment, std::nothrow);
    if (data == nullptr) {
      throw std::runtime_error("host memory: cannot allocate " + std::to_string(bytes) + " bytes");
    }
    std::memset(data, 0, bytes);
    return data;
  }
  void release(void* data) noexcept override { ::operator delete(data, kAlignment); }

  void upload(void* dst, const void* host_src, std::size_t bytes) override { std::memmove(dst, host_src, bytes); }
  void download(void* host_dst, const void* src, std::size_t bytes) override { std::memmove(host_dst, src, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void zero(void* dst, std::size_t bytes) override { std::memset(dst, 0, bytes); }
};

}  // namespace

Memory& host_memory() {
  static HostMemory memory;
  return memory;
}

}  // namespace altgrad::ops
