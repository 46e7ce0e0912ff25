#pragma once
// Causal attention written out in plain loops, in double, as a straight-through estimator sees it:
// `rewrite` (a quantizer, say) is applied to every element of q, k, v and of the probabilities
// before they are multiplied, and the gradient treats it as the identity. The softmax and its
// gradient use the probabilities as computed.
//
//   qkv (B, T, 3C) rows [q | k | v]; dout and out (B, T, C); probs (B, NH, T, T)
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace altgrad::ops_test {

struct AttentionReference {
  std::vector<double> out;    // (B, T, C)      rewrite(probs) · rewrite(v)
  std::vector<double> probs;  // (B, NH, T, T)  softmax(rewrite(q) · rewrite(k)ᵀ / √hs), masked entries 0
  std::vector<double> dqkv;   // (B, T, 3C)     d ⟨dout, out⟩ / d qkv, rewrite taken as the identity
};

// One (b, h) pair's operands as (T, hs) or (T, T) row-major matrices.
struct ReferenceHead {
  std::size_t T, hs;
  std::vector<double> q, k, v, probs, probs_used;

  // Every matrix has T rows, so its width is its size / T.
  double& at(std::vector<double>& m, std::size_t row, std::size_t col) { return m[row * (m.size() / T) + col]; }
};

// probs = causal softmax of q·kᵀ/√hs; probs_used = rewrite(probs), masked entries included.
inline void reference_softmax(ReferenceHead& head, const std::function<double(double)>& rewrite) {
  const std::size_t T = head.T;
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<double> scores(t + 1);
    for (std::size_t s = 0; s <= t; ++s) {
      double dot = 0;
      for (std::size_t i = 0; i < head.hs; ++i) dot += head.at(head.q, t, i) * head.at(head.k, s, i);
      scores[s] = dot / std::sqrt(static_cast<double>(head.hs));
    }
    const double max = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (const double score : scores) sum += std::exp(score - max);
    for (std::size_t s = 0; s < T; ++s) {
      head.at(head.probs, t, s) = s <= t ? std::exp(scores[s] - max) / sum : 0.0;
      head.at(head.probs_used, t, s) = rewrite(head.at(head.probs, t, s));
    }
  }
}

inline AttentionReference straight_through_attention(std::span<const double> qkv, std::span<const double> dout,
                                                     std::size_t B, std::size_t T, std::size_t C, std::size_t NH,
                                                     const std::function<double(double)>& rewrite) {
  const std::size_t hs = C / NH;
  AttentionReference result{std::vector<double>(B * T * C), std::vector<double>(B * NH * T * T),
                            std::vector<double>(B * T * 3 * C)};
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < NH; ++h) {
      ReferenceHead head{T, hs, std::vector<double>(T * hs), std::vector<double>(T * hs), std::vector<double>(T * hs),
                         std::vector<double>(T * T), std::vector<double>(T * T)};
      const auto qkv_index = [&](std::size_t t, std::size_t part, std::size_t i) {
        return (b * T + t) * 3 * C + part * C + h * hs + i;
      };
      const auto out_index = [&](std::size_t t, std::size_t i) { return (b * T + t) * C + h * hs + i; };
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t i = 0; i < hs; ++i) {
          head.at(head.q, t, i) = rewrite(qkv[qkv_index(t, 0, i)]);
          head.at(head.k, t, i) = rewrite(qkv[qkv_index(t, 1, i)]);
          head.at(head.v, t, i) = rewrite(qkv[qkv_index(t, 2, i)]);
        }
      }
      reference_softmax(head, rewrite);
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t s = 0; s < T; ++s) result.probs[((b * NH + h) * T + t) * T + s] = head.at(head.probs, t, s);
        for (std::size_t i = 0; i < hs; ++i) {
          double y = 0;
          for (std::size_t s = 0; s < T; ++s) y += head.at(head.probs_used, t, s) * head.at(head.v, s, i);
          result.out[out_index(t, i)] = y;
        }
      }
      // dp = dout · vᵀ; ds = p ⊙ (dp − rowsum(dp ⊙ p)); dq = ds · k / √hs; dk = dsᵀ · q / √hs;
      // dv = probs_usedᵀ · dout.
      const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
      for (std::size_t t = 0; t < T; ++t) {
        std::vector<double> dp(T);
        double p_dp = 0;
        for (std::size_t s = 0; s < T; ++s) {
          for (std::size_t i = 0; i < hs; ++i) dp[s] += dout[out_index(t, i)] * head.at(head.v, s, i);
          p_dp += head.at(head.probs, t, s) * dp[s];
        }
        for (std::size_t s = 0; s < T; ++s) {
          const double ds = head.at(head.probs, t, s) * (dp[s] - p_dp) * scale;
          for (std::size_t i = 0; i < hs; ++i) {
            result.dqkv[qkv_index(t, 0, i)] += ds * head.at(head.k, s, i);
            result.dqkv[qkv_index(s, 1, i)] += ds * head.at(head.q, t, i);
            result.dqkv[qkv_index(s, 2, i)] += head.at(head.probs_used, t, s) * dout[out_index(t, i)];
          }
        }
      }
    }
  }
  return result;
}

}  // namespace altgrad::ops_test
