#pragma once
// A backend whose memory the host must not touch, for testing the model's use of the backend seam
// without a GPU: the CPU's kernels over memory that is mapped PROT_NONE except while a kernel, an
// upload, a download, a copy or a zeroing runs. A pass that reads or writes a buffer anywhere else,
// as a host loop over device memory would, dies with SIGSEGV here instead of on a GPU.
//
// Each allocation is its own mapping (whole pages), opened and closed with mprotect.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <stdexcept>

#include "ops/backend.hpp"
#include "ops/cpu/cpu_backend.hpp"

namespace altgrad::model_test {

class GuardedMemory final : public ops::Memory {
 public:
  std::string_view name() const override { return "guarded"; }
  bool host_accessible() const override { return false; }

  void* allocate_zeroed(std::size_t bytes) override {
    const std::size_t length = round_to_pages(bytes);
    void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) throw std::runtime_error("guarded memory: mmap failed");
    regions_[data] = length;  // anonymous mappings start zeroed
    protect(data, length, PROT_NONE);
    return data;
  }
  void release(void* data) noexcept override {
    munmap(data, regions_.at(data));
    regions_.erase(data);
  }
  void upload(void* dst, const void* host_src, std::size_t bytes) override {
    const Open open(*this);
    std::memmove(dst, host_src, bytes);
  }
  void download(void* host_dst, const void* src, std::size_t bytes) override {
    const Open open(*this);
    std::memmove(host_dst, src, bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    const Open open(*this);
    std::memcpy(dst, src, bytes);
  }
  void zero(void* dst, std::size_t bytes) override {
    const Open open(*this);
    std::memset(dst, 0, bytes);
  }
  void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows) override {
    const Open open(*this);
    for (std::size_t r = 0; r < rows; ++r) {
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, row_bytes);
    }
  }

  // Every region readable and writable for the object's lifetime.
  class Open {
   public:
    explicit Open(GuardedMemory& memory) : memory_(memory) { memory_.protect_all(PROT_READ | PROT_WRITE); }
    Open(const Open&) = delete;
    Open& operator=(const Open&) = delete;
    ~Open() { memory_.protect_all(PROT_NONE); }

   private:
    GuardedMemory& memory_;
  };

 private:
  static std::size_t round_to_pages(std::size_t bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }
  static void protect(void* data, std::size_t length, int protection) {
    if (mprotect(data, length, protection) != 0) throw std::runtime_error("guarded memory: mprotect failed");
  }
  void protect_all(int protection) {
    for (const auto& [data, length] : regions_) protect(data, length, protection);
  }

  std::map<void*, std::size_t> regions_;
};

// The CPU's kernels, each run with the guarded memory open.
template <typename Scalar>
class GuardedKernels final : public ops::Kernels<Scalar> {
 public:
  explicit GuardedKernels(GuardedMemory& memory) : memory_(memory) {}

  using S = std::span<Scalar>;
  using CS = std::span<const Scalar>;
  using Ids = std::span<const std::int32_t>;

  void embedding_forward(S out, Ids tokens, CS wte, CS wpe, std::size_t B, std::size_t T, std::size_t C,
                         std::size_t V) override {
    run([&](auto& k) { k.embedding_forward(out, tokens, wte, wpe, B, T, C, V); });
  }
  void embedding_backward(S dwte, S dwpe, CS dout, Ids tokens, std::size_t B, std::size_t T, std::size_t C,
                          std::size_t V) override {
    run([&](auto& k) { k.embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V); });
  }
  void layernorm_forward(S out, S mean, S rstd, CS inp, CS weight, CS bias, std::size_t N, std::size_t C,
                         Scalar eps) override {
    run([&](auto& k) { k.layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps); });
  }
  void layernorm_backward(S dinp, S dweight, S dbias, CS dout, CS inp, CS weight, CS mean, CS rstd, std::size_t N,
                          std::size_t C) override {
    run([&](auto& k) { k.layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C); });
  }
  void rmsnorm_forward(S out, S rstd, CS inp, CS weight, std::size_t N, std::size_t C, Scalar eps) override {
    run([&](auto& k) { k.rmsnorm_forward(out, rstd, inp, weight, N, C, eps); });
  }
  void rmsnorm_backward(S dinp, S dweight, CS dout, CS inp, CS weight, CS rstd, std::size_t N, std::size_t C) override {
    run([&](auto& k) { k.rmsnorm_backward(dinp, dweight, dout, inp, weight, rstd, N, C); });
  }
  void matmul_forward(S out, CS inp, CS weight, CS bias, std::size_t N, std::size_t C, std::size_t OC) override {
    run([&](auto& k) { k.matmul_forward(out, inp, weight, bias, N, C, OC); });
  }
  void matmul_backward(S dinp, S dweight, S dbias, const ops::MatmulBackwardOperands<Scalar>& operands, std::size_t N,
                       std::size_t C, std::size_t OC) override {
    run([&](auto& k) { k.matmul_backward(dinp, dweight, dbias, operands, N, C, OC); });
  }
  void attention_forward(S out, S probs, CS qkv, const ops::AttentionShape& shape) override {
    run([&](auto& k) { k.attention_forward(out, probs, qkv, shape); });
  }
  void attention_probs_forward(S probs, CS qkv, const ops::AttentionShape& shape) override {
    run([&](auto& k) { k.attention_probs_forward(probs, qkv, shape); });
  }
  void attention_values_forward(S out, CS probs, CS qkv, const ops::AttentionShape& shape) override {
    run([&](auto& k) { k.attention_values_forward(out, probs, qkv, shape); });
  }
  void attention_backward(S dqkv, S dprobs, CS dout, const ops::AttentionOperands<Scalar>& used, CS probs,
                          const ops::AttentionShape& shape) override {
    run([&](auto& k) { k.attention_backward(dqkv, dprobs, dout, used, probs, shape); });
  }
  void gelu_forward(S out, CS inp) override {
    run([&](auto& k) { k.gelu_forward(out, inp); });
  }
  void gelu_backward(S dinp, CS inp, CS dout) override {
    run([&](auto& k) { k.gelu_backward(dinp, inp, dout); });
  }
  void swiglu_forward(S out, CS inp, std::size_t N, std::size_t H) override {
    run([&](auto& k) { k.swiglu_forward(out, inp, N, H); });
  }
  void swiglu_backward(S dinp, CS inp, CS dout, std::size_t N, std::size_t H) override {
    run([&](auto& k) { k.swiglu_backward(dinp, inp, dout, N, H); });
  }
  void residual_forward(S out, CS a, CS b) override {
    run([&](auto& k) { k.residual_forward(out, a, b); });
  }
  void softmax_cross_entropy_forward(S losses, S probs, CS logits, Ids targets, std::size_t N, std::size_t V) override {
    run([&](auto& k) { k.softmax_cross_entropy_forward(losses, probs, logits, targets, N, V); });
  }
  void softmax_cross_entropy_backward(S dlogits, CS dlosses, CS probs, Ids targets, std::size_t N,
                                      std::size_t V) override {
    run([&](auto& k) { k.softmax_cross_entropy_backward(dlogits, dlosses, probs, targets, N, V); });
  }

 private:
  template <typename Call>
  void run(Call&& call) {
    const GuardedMemory::Open open(memory_);
    call(ops::cpu::kernels<Scalar>());
  }

  GuardedMemory& memory_;
};

// A guarded memory and its kernels; the backend stays valid while this object lives.
template <typename Scalar>
struct GuardedBackend {
  GuardedMemory memory;
  GuardedKernels<Scalar> kernels{memory};
  // `cuda` stands for any device whose memory the host cannot reach.
  ops::Backend<Scalar> backend() { return {ops::Device::cuda, &memory, &kernels}; }
};

}  // namespace altgrad::model_test
