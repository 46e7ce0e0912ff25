#include "ops/cpu/embedding.hpp"

#include "ops/argument_checks.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/kernel_arguments.hpp"

namespace altgrad::ops::cpu {

template <typename Scalar>
void embedding_forward(std::span<Scalar> out, std::span<const std::int32_t> tokens, std::span<const Scalar> wte,
                       std::span<const Scalar> wpe, std::size_t B, std::size_t T, std::size_t C, std::size_t V) {
  check_embedding_forward(out.size(), tokens.size(), wte.size(), wpe.size(), B, T, C, V);
  require_indices_below("embedding_forward", "tokens", tokens, V);

#pragma omp parallel for schedule(static) if (B * T * C >= kMinParallelWork)
  for (std::size_t bt = 0; bt < B * T; ++bt) {
    const Scalar* token_row = wte.data() + static_cast<std::size_t>(tokens[bt]) * C;
    const Scalar* position_row = wpe.data() + (bt % T) * C;
    Scalar* y = out.data() + bt * C;
    for (std::size_t c = 0; c < C; ++c) y[c] = token_row[c] + position_row[c];
  }
}

template <typename Scalar>
void embedding_backward(std::span<Scalar> dwte, std::span<Scalar> dwpe, std::span<const Scalar> dout,
                        std::span<const std::int32_t> tokens, std::size_t B, std::size_t T, std::size_t C,
                        std::size_t V) {
  check_embedding_backward(dwte.size(), dwpe.size(), dout.size(), tokens.size(), B, T, C, V);
  require_indices_below("embedding_backward", "tokens", tokens, V);

  // Repeated tokens make dwte a scatter with collisions: threads own column blocks instead of rows,
  // and each walks the positions in order.
  for_each_column_block(C, B * T * C, [&](std::size_t begin, std::size_t end) {
    for (std::size_t bt = 0; bt < B * T; ++bt) {
      Scalar* dtoken_row = dwte.data() + static_cast<std::size_t>(tokens[bt]) * C;
      const Scalar* dy = dout.data() + bt * C;
      for (std::size_t c = begin; c < end; ++c) dtoken_row[c] += dy[c];
    }
  });

  // Each position's row is owned by one thread, which adds the batch in order.
#pragma omp parallel for schedule(static) if (B * T * C >= kMinParallelWork)
  for (std::size_t t = 0; t < T; ++t) {
    Scalar* dposition_row = dwpe.data() + t * C;
    for (std::size_t b = 0; b < B; ++b) {
      const Scalar* dy = dout.data() + (b * T + t) * C;
      for (std::size_t c = 0; c < C; ++c) dposition_row[c] += dy[c];
    }
  }
}

template void embedding_forward<float>(std::span<float>, std::span<const std::int32_t>, std::span<const float>,
                                       std::span<const float>, std::size_t, std::size_t, std::size_t, std::size_t);
template void embedding_forward<double>(std::span<double>, std::span<const std::int32_t>, std::span<const double>,
                                        std::span<const double>, std::size_t, std::size_t, std::size_t, std::size_t);
template void embedding_backward<float>(std::span<float>, std::span<float>, std::span<const float>,
                                        std::span<const std::int32_t>, std::size_t, std::size_t, std::size_t,
                                        std::size_t);
template void embedding_backward<double>(std::span<double>, std::span<double>, std::span<const double>,
                                         std::span<const std::int32_t>, std::size_t, std::size_t, std::size_t,
                                         std::size_t);

}  // namespace altgrad::ops::cpu
