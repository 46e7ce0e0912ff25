#pragma once
// The names of the GPT's matmuls and of their quantization points (DESIGN.md, "Names are the
// interface"). Each matmul Y = X·Wᵀ has three operands, each a point named "<matmul>:<operand>":
//
//   h.{i}.attn.c_attn   X = ln_1(x) (B·T, C)      W (3C, C)   dY (B·T, 3C)
//   h.{i}.attn.c_proj   X = attention y (B·T, C)  W (C, C)    dY (B·T, C)
//   h.{i}.mlp.c_fc      X = ln_2(x) (B·T, C)      W (I, C)    dY (B·T, I)    I = H or 2H (swiglu)
//   h.{i}.mlp.c_proj    X = act(c_fc) (B·T, H)    W (C, H)    dY (B·T, C)
//   lm_head             X = ln_f(x) (B·T, C)      W = wte (V, C)              dY (B·T, V)
//
//   :act (X) and :weight (W) are visited in the forward pass, :grad (dY) in the backward pass.
//
// The attention core has four more points per block, named without an operand suffix:
//
//   h.{i}.attn.q, .k, .v    (B·T, C) the query, key and value thirds of c_attn's output
//   h.{i}.attn.probs        (B·NH·T, T) the causal softmax, the left operand of probs·v
//
// All points share one dense index: the matmul operands first (3·matmul index + operand), then
// the attention operands (3·matmuls + 4·layer + q|k|v|probs).
//
// Two of the attention core's products read two points: scores = q·kᵀ and out = probs·v. Its
// backward products each read a tensor that is no point (the gradient arriving at the core, or
// the gradients derived from it).
//
// The names are built once per config, so the passes hand out string_views and never allocate.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/config.hpp"

namespace altgrad::model {

enum class Operand { act, weight, grad, q, k, v, probs };
inline constexpr std::size_t kOperandsPerMatmul = 3;         // act, weight, grad
inline constexpr std::size_t kAttentionOperandsPerBlock = 4;  // q, k, v, probs
std::string_view to_string(Operand operand);

// The attention core's forward products whose operands are both points: scores = q·kᵀ, out = probs·v.
enum class AttentionGemm : std::uint8_t { scores, values };
inline constexpr std::size_t kAttentionGemmCount = 2;
// The points each reads, in the order of its product: q and k, probs and v.
constexpr std::array<Operand, 2> attention_gemm_operands(AttentionGemm gemm) {
  if (gemm == AttentionGemm::scores) return {Operand::q, Operand::k};
  return {Operand::probs, Operand::v};
}

// One quantization point of the model, as recipes, metrics and warnings name it.
struct OperandPoint {
  std::size_t index;  // the dense index (see above)
  std::string name;   // "h.3.mlp.c_fc:act", "h.0.attn.probs"
  Operand operand;
};

// The matmuls of one block, in the order the forward pass runs them.
enum class BlockMatmul { attn_c_attn, attn_c_proj, mlp_c_fc, mlp_c_proj };
inline constexpr std::size_t kMatmulsPerBlock = 4;

struct MatmulPoint {
  std::size_t index;                                          // position in MatmulPoints::all()
  std::string name;                                           // "h.3.mlp.c_fc", "lm_head"
  std::array<std::string, kOperandsPerMatmul> operand_names;  // by Operand: "h.3.mlp.c_fc:act", ...
  std::size_t in_features;                                    // C of the kernel: columns of X and W
  std::size_t out_features;                                   // OC: rows of W, columns of Y and dY

  std::string_view operand_name(Operand operand) const { return operand_names[static_cast<std::size_t>(operand)]; }
};

class MatmulPoints {
 public:
  explicit MatmulPoints(const GptConfig& config);

  // Forward order: for each block attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj; then lm_head.
  std::span<const MatmulPoint> all() const { return points_; }
  const MatmulPoint& block(std::size_t layer, BlockMatmul matmul) const {
    return points_.at(layer * kMatmulsPerBlock + static_cast<std::size_t>(matmul));
  }
  const MatmulPoint& lm_head() const { return points_.back(); }
  // The blocks (n_layer), each with its four matmuls and four attention points.
  std::size_t layers() const { return (points_.size() - 1) / kMatmulsPerBlock; }

  // Every quantization point, by dense index: a hook can keep per-point state (scales, amax
  // histories, statistics) in a vector of operand_count() entries.
  std::span<const OperandPoint> operands() const { return operands_; }
  std::size_t operand_count() const { return operands_.size(); }
  // The point of an attention operand (q, k, v or probs) of one block.
  const OperandPoint& attention(std::size_t layer, Operand operand) const;

 private:
  std::vector<MatmulPoint> points_;
  std::vector<OperandPoint> operands_;
};

}  // namespace altgrad::model
