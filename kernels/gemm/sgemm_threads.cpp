// The one error of every SGEMM library's set_threads, in the library's own terms.
#include <string>

#include "base/errors.hpp"
#include "kernels/gemm/sgemm.hpp"

namespace hpcnn {

void throw_too_many_threads(const std::string& library, int requested, int max) {
  throw UsageError(library + ": " + std::to_string(requested) + " threads is above what the library allows (at most " +
                   std::to_string(max) + ")");
}

}  // namespace hpcnn
