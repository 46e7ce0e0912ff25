#include "model/gpt.hpp"

#include <algorithm>

#include "model/init.hpp"

namespace altgrad::model {

template <typename Scalar>
Gpt<Scalar>::Gpt(const GptConfig& config)
    : layout_(config),
      matmuls_(config),
      parameters_(layout_.size(), Scalar{0}),
      gradients_(layout_.size(), Scalar{0}) {}

template <typename Scalar>
void Gpt<Scalar>::initialize(std::uint64_t seed) {
  initialize_parameters(layout_, parameters(), seed);
}

template <typename Scalar>
void Gpt<Scalar>::zero_gradients() {
  std::fill(gradients_.begin(), gradients_.end(), Scalar{0});
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace altgrad::model
