#include "base/rng.hpp"

#include <cmath>

namespace hpcnn {

float Rng::normal() {
  // Box-Muller; u1 is kept away from 0 so log() stays finite.
  const float u1 = (static_cast<float>(next() >> 40) + 1.0f) * (1.0f / 16777217.0f);
  const float u2 = uniform();
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853071795864f * u2);
}

}  // namespace hpcnn
