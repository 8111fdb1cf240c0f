// What an SGEMM implementation in kernels/ needs beside the contract (engine/sgemm.hpp): the
// one wording of a thread count above the library's limit.
#pragma once

#include <string>

#include "engine/sgemm.hpp"

namespace hpcnn {

// The UsageError a library throws for a thread count above its limit (one wording for all).
[[noreturn]] void throw_too_many_threads(const std::string& library, int requested, int max);

}  // namespace hpcnn
