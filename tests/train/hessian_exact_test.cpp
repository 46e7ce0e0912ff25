// The power-iteration estimate of a tiny GPT's top Hessian eigenvalue (FP32 model, FP32 gradients)
// against its exact spectrum: the full Hessian of the same weights and batch, built column by column
// from central differences of float64 gradients, symmetrized and diagonalized by cyclic Jacobi in
// double.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "diag/hessian_power_iteration.hpp"
#include "model/activations.hpp"
#include "model/gpt.hpp"

namespace altgrad::train {
namespace {

model::GptConfig tiny_gpt() {
  model::GptConfig c;
  c.n_layer = 1;
  c.n_head = 1;
  c.n_embd = 4;
  c.block_size = 4;
  c.vocab_size = 12;
  return c;
}

struct Batch {
  std::vector<std::int32_t> x, y;
};

template <typename Scalar>
void gradient_at(model::Gpt<Scalar>& gpt, model::Activations<Scalar>& acts, const Batch& b) {
  gpt.zero_gradients();
  model::gpt_forward(gpt, acts, b.x, b.y);
  model::gpt_backward(gpt, acts);
}

// Every eigenvalue of the symmetric n×n matrix a (destroyed), by cyclic Jacobi rotations
// (Golub & Van Loan, Matrix Computations, §8.5) until the off-diagonal mass is negligible.
std::vector<double> jacobi_eigenvalues(std::vector<double> a, std::size_t n) {
  auto at = [&](std::size_t r, std::size_t c) -> double& { return a[r * n + c]; };
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = 0, total = 0;
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < n; ++c) (r == c ? total : off) += at(r, c) * at(r, c);
    }
    if (off <= 1e-26 * (total + off)) break;
    for (std::size_t p = 0; p + 1 < n; ++p) {
      for (std::size_t q = p + 1; q < n; ++q) {
        if (at(p, q) == 0.0) continue;
        const double theta = (at(q, q) - at(p, p)) / (2 * at(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double cs = 1 / std::sqrt(t * t + 1), sn = t * cs;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, q: A ← A·J
          const double akp = at(k, p), akq = at(k, q);
          at(k, p) = cs * akp - sn * akq;
          at(k, q) = sn * akp + cs * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, q: A ← Jᵀ·A
          const double apk = at(p, k), aqk = at(q, k);
          at(p, k) = cs * apk - sn * aqk;
          at(q, k) = sn * apk + cs * aqk;
        }
      }
    }
  }
  std::vector<double> eigenvalues(n);
  for (std::size_t i = 0; i < n; ++i) eigenvalues[i] = at(i, i);
  return eigenvalues;
}

TEST(HessianEstimate, EqualsTheExactTopEigenvalueOfATinyGpt) {
  // One thread: 536 passes over 268 parameters gain nothing from more, and a loaded machine makes
  // OpenMP's waits between tiny parallel regions slow.
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const model::GptConfig config = tiny_gpt();
  model::Gpt<float> gpt(config);
  // Weights larger than the initialization's, so that the loss is far from its flat start.
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (float& w : gpt.parameters()) w = normal(rng);
  Batch batch;
  std::uniform_int_distribution<std::int32_t> token(0, 11);
  for (int i = 0; i < 2 * 4; ++i) {
    batch.x.push_back(token(rng));
    batch.y.push_back(token(rng));
  }
  const std::size_t n = gpt.parameters().size();

  // Exact: H's column j = (∇L(w + h·e_j) − ∇L(w − h·e_j)) / 2h in float64 (error ~h² + 1e-16/h).
  model::Gpt<double> exact(config);
  std::copy(gpt.parameters().begin(), gpt.parameters().end(), exact.parameters().begin());
  model::Activations<double> acts64(config, 2, 4);
  constexpr double h = 1e-5;
  std::vector<double> hessian(n * n), plus(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double wj = exact.parameters()[j];
    exact.parameters()[j] = wj + h;
    gradient_at(exact, acts64, batch);
    std::copy(exact.gradients().begin(), exact.gradients().end(), plus.begin());
    exact.parameters()[j] = wj - h;
    gradient_at(exact, acts64, batch);
    exact.parameters()[j] = wj;
    for (std::size_t i = 0; i < n; ++i) hessian[i * n + j] = (plus[i] - exact.gradients()[i]) / (2 * h);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) hessian[i * n + j] = hessian[j * n + i] = (hessian[i * n + j] + hessian[j * n + i]) / 2;
  }
  std::vector<double> eigenvalues = jacobi_eigenvalues(hessian, n);
  std::sort(eigenvalues.begin(), eigenvalues.end(), [](double a, double b) { return std::abs(a) > std::abs(b); });
  const double top = eigenvalues[0], ratio = std::abs(eigenvalues[1] / eigenvalues[0]);

  // The estimate: FP32 model and gradients, as the trainer computes them, default ε and iterations.
  model::Activations<float> acts(config, 2, 4);
  diag::HessianPowerIteration power(n);
  const diag::HessianEstimate estimate = power.estimate(
      gpt.parameters(),
      [&](std::span<float> out) {
        gradient_at(gpt, acts, batch);
        std::copy(gpt.gradients().begin(), gpt.gradients().end(), out.begin());
      },
      {1e-3, 20, 99, 0});
  std::printf("%zu parameters: exact top |λ| eigenvalue %.9g, |λ2/λ1| = %.4f; estimate %.9g, residual %.2e\n", n, top,
              ratio, estimate.eigenvalue, estimate.residual);
  // Converged if |λ2/λ1|^(2·20) is small; the test would not separate the two otherwise.
  omp_set_num_threads(saved_threads);
  ASSERT_LT(std::pow(ratio, 40), 1e-4);
  // Measured: 7.3e-5 relative, from the FP32 gradients' rounding over 2ε = 2e-3.
  EXPECT_NEAR(estimate.eigenvalue, top, 1e-3 * std::abs(top));
}

}  // namespace
}  // namespace altgrad::train
