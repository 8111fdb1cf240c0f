// Collects the self-describing preamble of a result file: command line, hosts of every rank,
// versions of hpcnn, MPI, HDF5 and the compiler, scheduler job id, times. Collective over comm.
#pragma once

#include <mpi.h>

#include <string>

#include "engine/backend.hpp"
#include "harness/options.hpp"
#include "results/result_file.hpp"

namespace hpcnn {

// Every rank must call (gathers host names). `libraries` are added to the built-in list (MPI,
// HDF5, compiler): pass the versions reported by the backends the run used.
Provenance collect_provenance(const std::string& suite, const Options& options, MPI_Comm comm,
                              const LibraryVersions& libraries, const std::string& start_time);

std::string utc_now_iso8601();
// This machine as acceptance references tell machines apart: "AMD EPYC 7B13 (avx2), 2 CPUs" (the CPU
// model from /proc/cpuinfo, its widest vector ISA, the online CPUs).
std::string machine_description();
// SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID or COBALT_JOBID; "" when none is set.
std::string scheduler_job_id();
// Peak resident set size of this process in MiB (getrusage).
double peak_rss_mib();

}  // namespace hpcnn
