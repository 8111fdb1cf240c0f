// What several suites' option tables and values share, so that no suite includes another for
// them: the timing options every measuring suite has, the measurement options of the
// model-running suites, and byte sizes as users write them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/options.hpp"

namespace hpcnn {

// iters, warmup, min-time, seed.
std::vector<OptionSpec> timing_options();

// repeat, profile (hpcnn-train/-infer, hpcnn-blas --sweep model; docs/RESULTS.md describes what
// they store).
std::vector<OptionSpec> measurement_options();

// "4", "1K", "64KiB", "16M", "1G" (binary multiples) -> bytes; UsageError naming the value otherwise.
std::int64_t parse_bytes(const std::string& text);

}  // namespace hpcnn
