// What the result file's writer and reader share besides HDF5 (results/result_file.hpp): the
// format name and the provenance's scalar string attributes. docs/RESULTS.md is the schema.
#pragma once

#include <string>

#include "results/result_file.hpp"

namespace hpcnn {

constexpr const char* kFormat = "hpcnn-result";

// The scalar string members of Provenance, in the order they are written (one table for the writer
// and the reader).
struct ProvenanceString {
  const char* name;
  std::string Provenance::*member;
};
inline const ProvenanceString kProvenanceStrings[] = {
    {"suite", &Provenance::suite},
    {"command_line", &Provenance::command_line},
    {"reproducer", &Provenance::reproducer},
    {"hpcnn_version", &Provenance::hpcnn_version},
    {"configure_options", &Provenance::configure_options},
    {"start_time", &Provenance::start_time},
    {"end_time", &Provenance::end_time},
    {"job_id", &Provenance::job_id},
};

}  // namespace hpcnn
