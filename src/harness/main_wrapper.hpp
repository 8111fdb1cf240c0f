// The one main() wrapper every MPI suite uses: MPI_Init/Finalize around the suite's body, and
// exceptions turned into a one-line "program: error: message" with exit status 2 (UsageError)
// or 1 (anything else). Usage errors arise identically on every rank (the command line is the
// same), so rank 0 prints them and every rank exits; a runtime error on one rank aborts the job
// so no rank hangs in a collective.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "base/errors.hpp"

namespace hpcnn {

// A component's SettingError said with the option that sets it: "--threads 3: backend 'openblas'
// accepts at most 2 threads" (the field table knows each setting's option).
std::string option_message(const SettingError& e);
// What the user is told of an error: option_message for a SettingError, what() otherwise.
std::string error_message(const std::exception& e);

int suite_main(int argc, char** argv, const char* program, const std::function<int(int, char**)>& body);

// True when this process is MPI rank 0 (or MPI is not initialized).
bool is_root_rank();

}  // namespace hpcnn
