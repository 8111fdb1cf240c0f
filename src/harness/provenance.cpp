#include "harness/provenance.hpp"

#include <hdf5.h>
#include <sys/resource.h>

#include <cstdlib>
#include <ctime>

#include "config.h"

namespace hpcnn {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string scheduler_job_id() {
  for (const char* var : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "COBALT_JOBID"})
    if (const char* v = std::getenv(var); v && *v) return std::string(var) + "=" + v;
  return {};
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

namespace {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, static_cast<std::size_t>(len));
  if (const auto cut = v.find_first_of(",\n"); cut != std::string::npos) v.resize(cut);
  return v;
}

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace

Provenance collect_provenance(const std::string& suite, const Options& options, MPI_Comm comm,
                              const LibraryVersions& libraries, const std::string& start_time) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);

  Provenance p;
  p.suite = suite;
  p.command_line = options.command_line();
  p.reproducer = p.command_line;
  p.hpcnn_version = PACKAGE_VERSION;
  p.configure_options = HPCNN_CONFIGURE_OPTIONS;
  p.start_time = start_time;
  p.end_time = utc_now_iso8601();
  p.job_id = scheduler_job_id();
  p.mpi_size = size;
  for (int r = 0; r < size; ++r)
    p.hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  p.libraries = {{"MPI", mpi_library_version()}, {"HDF5", hdf5_version()}, {"compiler", __VERSION__}};
  for (const auto& lib : libraries) {
    bool seen = false;
    for (const auto& have : p.libraries) seen = seen || have.first == lib.first;
    if (!seen) p.libraries.push_back(lib);
  }
  p.settings = options.effective();
  return p;
}

}  // namespace hpcnn
