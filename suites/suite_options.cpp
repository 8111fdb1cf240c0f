// What several suites' option tables and values share: the timing options, the measurement
// options of the model-running suites, and byte sizes as users write them.
#include "suites/suite_options.hpp"

#include <string>
#include <vector>

#include "base/errors.hpp"

namespace hpcnn {

std::vector<OptionSpec> timing_options() {
  return {
      {"iters", OptType::Int, false, "100", "N", "timed iterations per point", {}, 1, 1e9},
      {"warmup", OptType::Int, false, "10", "N", "untimed warm-up iterations per point", {}, 0, 1e9},
      {"min-time", OptType::Float, false, "0", "S",
       "time every point for at least S seconds: more timed iterations than --iters where they add up to less, at "
       "most 100000 (the count that ran is the point's iters; 0: exactly --iters)",
       {}, 0, 86400},
      {"seed", OptType::Int, false, "1", "N", "seed of initialization and synthetic data", {}, 0, 9.0e18},
  };
}

std::vector<OptionSpec> measurement_options() {
  return {
      {"repeat", OptType::Int, false, "1", "N",
       "run each point N times (fresh network each time) and store the spread of images/s", {}, 1, 1000},
      {"profile", OptType::Choice, false, "none", "WHAT",
       "ops: after the timed run, one more pass that times every operator (the figures above stay unprofiled)",
       "none|ops"},
  };
}

std::int64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  long long value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  std::string suffix = text.substr(used);
  std::int64_t scale = 1;
  if (suffix == "" || suffix == "B") scale = 1;
  else if (suffix == "K" || suffix == "KiB") scale = 1ll << 10;
  else if (suffix == "M" || suffix == "MiB") scale = 1ll << 20;
  else if (suffix == "G" || suffix == "GiB") scale = 1ll << 30;
  else used = 0;
  if (used == 0 || value < 0 || value > (1ll << 40) / scale)
    throw UsageError("--sizes: '" + text + "' is not a byte count (e.g. 4, 64K, 16M)");
  return value * scale;
}

}  // namespace hpcnn
