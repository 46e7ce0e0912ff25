#include "model/gpt.hpp"

#include <vector>

#include "model/init.hpp"

namespace altgrad::model {

template <typename Scalar>
Gpt<Scalar>::Gpt(const GptConfig& config, ops::Backend<Scalar> backend)
    : layout_(config),
      matmuls_(config),
      backend_(backend),
      parameters_(*backend.memory, layout_.size()),
      gradients_(*backend.memory, layout_.size()) {}

template <typename Scalar>
void Gpt<Scalar>::initialize(std::uint64_t seed) {
  // Drawn on the host, whatever the backend's memory: one path for every device.
  std::vector<Scalar> host(layout_.size());
  initialize_parameters(layout_, std::span<Scalar>(host), seed);
  ops::upload(*backend_.memory, parameters(), std::span<const Scalar>(host));
}

template <typename Scalar>
void Gpt<Scalar>::zero_gradients() {
  ops::zero(*backend_.memory, gradients());
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace altgrad::model
