#include "harness/provenance.hpp"

#include <hdf5.h>
#include <sys/resource.h>

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "config.h"
#include "base/fault_injection.hpp"

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

// The thread level the MPI library granted (harness/main_wrapper.cpp asks for FUNNELED).
std::string mpi_thread_level() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return std::to_string(level);
  }
}

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace

std::string machine_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model, vector_isa;
  while (std::getline(cpuinfo, line) && (model.empty() || vector_isa.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (model.empty() && (key == "model name" || key == "Processor" || key == "cpu model")) model = value;
    if (vector_isa.empty() && key == "flags") {
      // The widest vector ISA decides which kernels the libraries run: part of what "the same machine" means.
      const std::string flags = " " + value + " ";
      vector_isa = flags.find(" avx512f ") != std::string::npos ? "avx512"
                   : flags.find(" avx2 ") != std::string::npos  ? "avx2"
                                                                : "no avx2";
    }
  }
  if (model.empty()) model = "unknown CPU";
  std::ostringstream out;
  out << model;
  if (!vector_isa.empty()) out << " (" << vector_isa << ")";
  out << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs";
  return out.str();
}

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
  p.machine = machine_description();
  if (const char* session = std::getenv("HPCNN_SESSION")) p.session = session;
  p.fault_injection = active_fault_injections();
  for (int r = 0; r < size; ++r)
    p.hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  p.libraries = {{"MPI", mpi_library_version()},
                 {"MPI_thread_level", mpi_thread_level()},
                 {"HDF5", hdf5_version()},
                 {"compiler", __VERSION__}};
  for (const auto& lib : libraries) {
    bool seen = false;
    for (const auto& have : p.libraries) seen = seen || have.first == lib.first;
    if (!seen) p.libraries.push_back(lib);
  }
  p.settings = options.effective();
  return p;
}

}  // namespace hpcnn
