#pragma once
// Where one backend's tensors live, and the only ways to move them between it and the host, as
// ggml's backend buffers: allocate (zeroed), upload, download, copy within, zero. The CPU backend's memory is
// the host's own; the CUDA backend's is the GPU's, which the host must never dereference.
//
// Every span a backend's kernels (ops/kernels.hpp) take lies in memory that backend allocated;
// a std::span over device memory is only a pointer and a length, passed on and never read here.
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace altgrad::ops {

class Memory {
 public:
  virtual ~Memory() = default;

  virtual std::string_view name() const = 0;  // "host", "cuda"
  // Whether the host may read and write this memory through plain pointers.
  virtual bool host_accessible() const = 0;

  // `bytes` zeroed bytes, aligned for any element type (at least 64 bytes). Throws
  // std::runtime_error naming the size when the memory is exhausted.
  virtual void* allocate_zeroed(std::size_t bytes) = 0;
  virtual void release(void* data) noexcept = 0;

  // Copies between this memory and the host; in the same stream order as the kernels, and
  // complete (the host buffer readable or reusable) when the call returns.
  virtual void upload(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, std::size_t bytes) = 0;
  // Within this memory; the two ranges do not overlap.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void zero(void* dst, std::size_t bytes) = 0;
  // The most bytes this memory has held allocated at once since the last reset_peak(), where it
  // keeps count (a GPU's: a device run's end event reports it); nothing where it does not.
  virtual std::optional<std::size_t> peak_allocated_bytes() const { return std::nullopt; }
  virtual void reset_peak() {}
  // `rows` strided rows of `row_bytes` each within this memory, row r from src + r·src_pitch to
  // dst + r·dst_pitch (pitches in bytes): a column slice of a matrix, gathered or scattered. The
  // ranges do not overlap. One copy() per row unless the memory has a faster way.
  virtual void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                         std::size_t row_bytes, std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r) {
      copy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, row_bytes);
    }
  }
};

// The host's memory: the CPU backend's.
Memory& host_memory();

// Typed copies between a view into `memory` and a host view of the same length.
template <typename T>
void upload(Memory& memory, std::span<T> dst, std::span<const T> host_src) {
  if (dst.size() != host_src.size()) {
    throw std::invalid_argument("upload to " + std::string(memory.name()) + ": " + std::to_string(host_src.size()) +
                                " elements into a view of " + std::to_string(dst.size()));
  }
  if (!dst.empty()) memory.upload(dst.data(), host_src.data(), dst.size_bytes());
}
template <typename T>
void download(Memory& memory, std::span<T> host_dst, std::span<const T> src) {
  if (host_dst.size() != src.size()) {
    throw std::invalid_argument("download from " + std::string(memory.name()) + ": " + std::to_string(src.size()) +
                                " elements into a host view of " + std::to_string(host_dst.size()));
  }
  if (!src.empty()) memory.download(host_dst.data(), src.data(), src.size_bytes());
}
template <typename T>
void zero(Memory& memory, std::span<T> dst) {
  if (!dst.empty()) memory.zero(dst.data(), dst.size_bytes());
}

// n elements of T in one memory, zeroed at allocation, released with the object. A copy is a new
// allocation in the same memory.
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Memory& memory, std::size_t n)
      : memory_(&memory), data_(n == 0 ? nullptr : static_cast<T*>(memory.allocate_zeroed(n * sizeof(T)))), size_(n) {}
  Buffer(const Buffer& other) : Buffer() {
    if (other.memory_ == nullptr) return;
    *this = Buffer(*other.memory_, other.size_);
    if (size_ != 0) memory_->copy(data_, other.data_, size_ * sizeof(T));
  }
  Buffer& operator=(const Buffer& other) {
    if (this != &other) *this = Buffer(other);
    return *this;
  }
  Buffer(Buffer&& other) noexcept
      : memory_(other.memory_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      free();
      memory_ = other.memory_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~Buffer() { free(); }

  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  Memory& memory() const { return *memory_; }

 private:
  void free() noexcept {
    if (data_ != nullptr) memory_->release(data_);
    data_ = nullptr;
  }

  Memory* memory_ = nullptr;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace altgrad::ops
