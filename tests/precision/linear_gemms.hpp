#pragma once
// One Linear layer's three GEMMs as the precision tests check them: its operands described as the
// model describes them to the hooks, a forward and backward pass through linear_forward and
// linear_backward, and the three products recomputed in double from the copies each GEMM reads
// (compare them with mx_reference.hpp's relative_gap).
#include <cstddef>
#include <vector>

#include "model/linear.hpp"
#include "model/matmul_hooks.hpp"
#include "model/matmul_points.hpp"
#include "ops/cpu/cpu_backend.hpp"

namespace altgrad::precision_test {

// One Linear's operands, by GEMM: X and W along their rows' C for the forward GEMM, dY along OC and
// W down its OC rows for dgrad, dY and X down the N tokens for wgrad.
struct LinearOperands {
  const model::MatmulPoint& fc;
  std::size_t N;
  model::MatmulOperand described(model::Operand operand, model::Reduction reduction) const {
    const std::size_t rows = operand == model::Operand::weight ? fc.out_features : N;
    const std::size_t cols = operand == model::Operand::grad ? fc.out_features : fc.in_features;
    return {fc.operand_name(operand), fc.name, operand,
            fc.index * model::kOperandsPerMatmul + static_cast<std::size_t>(operand), rows, cols, reduction};
  }
};

// What the pass computed: Y, dX and dW, and dY's two copies (dgrad's, wgrad's).
struct LinearPass {
  std::vector<float> y, dx, dw, dy_rows, dy_columns;
};

inline LinearPass linear_pass(const model::MatmulPoint& fc, std::size_t N, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& dy,
                              model::MatmulHooks<float>& hooks) {
  const std::size_t C = fc.in_features, OC = fc.out_features;
  LinearPass p{std::vector<float>(N * OC), std::vector<float>(N * C, 0.0f), std::vector<float>(OC * C, 0.0f),
               std::vector<float>(N * OC), std::vector<float>(N * OC)};
  std::vector<float> x_copy(N * C), w_copy(OC * C), db(OC, 0.0f), x_columns(N * C), w_columns(OC * C);
  const auto used = model::linear_forward<float>(ops::cpu::kernels<float>(), p.y, x, w, {}, x_copy, w_copy, fc, &hooks, N);
  model::linear_backward<float>(ops::cpu::kernels<float>(), p.dx, p.dw, db, dy, used,
                                {p.dy_rows, p.dy_columns, x_columns, w_columns}, fc, &hooks, N);
  return p;
}

// The copies each GEMM reads: forward X·Wᵀ, dgrad dY·W, wgrad dYᵀ·X.
struct GemmCopies {
  const std::vector<float> &x_forward, &w_forward, &dy_dgrad, &w_dgrad, &dy_wgrad, &x_wgrad;
};

struct DoubleGemms {
  std::vector<double> y, dx, dw;
};

inline DoubleGemms double_gemms(const model::MatmulPoint& fc, std::size_t N, const GemmCopies& g) {
  const std::size_t C = fc.in_features, OC = fc.out_features;
  DoubleGemms r{std::vector<double>(N * OC), std::vector<double>(N * C), std::vector<double>(OC * C)};
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t o = 0; o < OC; ++o) {
      for (std::size_t c = 0; c < C; ++c) {
        r.y[n * OC + o] += static_cast<double>(g.x_forward[n * C + c]) * g.w_forward[o * C + c];
        r.dx[n * C + c] += static_cast<double>(g.dy_dgrad[n * OC + o]) * g.w_dgrad[o * C + c];
        r.dw[o * C + c] += static_cast<double>(g.dy_wgrad[n * OC + o]) * g.x_wgrad[n * C + c];
      }
    }
  }
  return r;
}

}  // namespace altgrad::precision_test
