// Error kinds that map to exit statuses: UsageError -> 2 (bad command line), RuntimeError -> 1.
// Thrown anywhere; caught once in suites' main (harness/main_wrapper.hpp), printed as one line.
#pragma once

#include <stdexcept>
#include <string>

namespace hpcnn {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace hpcnn
