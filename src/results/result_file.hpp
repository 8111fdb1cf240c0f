// HDF5 result files: one per invocation, written by rank 0 under a temporary name and renamed when
// complete; read back by hpcnn-summary and the tests. Schema in docs/RESULTS.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/record.hpp"
#include "results/status.hpp"

namespace hpcnn {

inline constexpr int kSchemaVersion = 1;

// Who ran what, where and with what: the file's self-describing preamble.
struct Provenance {
  std::string suite;              // "hpcnn-train"
  std::string command_line;       // as typed, quoted where needed
  std::string reproducer;         // a command line that reruns exactly this invocation
  std::string hpcnn_version;      // PACKAGE_VERSION
  std::string configure_options;  // as given to ./configure
  std::string start_time, end_time;  // ISO 8601 UTC
  std::string job_id;             // SLURM_JOB_ID / PBS_JOBID / LSB_JOBID, "" outside a scheduler
  std::vector<std::string> hosts;  // one per rank
  int mpi_size = 1;
  std::vector<std::pair<std::string, std::string>> libraries;  // name -> version
  std::vector<std::pair<std::string, std::string>> settings;   // option -> effective value(s)
  // Every run that contributed points (an interrupted run and its --resume): start times, comma
  // separated, and how many times the run was resumed. Optional in files written before them.
  std::string run_starts;
  int restarts = 0;
  // The machine rank 0 ran on: CPU model, logical CPUs and memory ("AMD EPYC 7B13, 2 CPUs, 23 GiB").
  // Optional in older files ("" when absent). Acceptance references must come from one machine.
  std::string machine;
  // The session the run belongs to (HPCNN_SESSION: an acceptance night, a blessed run): the result
  // files of one session are rounds of one run for hpcnn-summary --compare and --trend. Optional.
  std::string session;
  // The hpcnn-summary table that shows this run's points (analysis/table_presets.cpp), as the suite
  // declared it. Optional: files written before it get their suite's usual table.
  std::string default_table;
  // The test-only fault injections active in the run (base/fault_injection.hpp), "" when none.
  // A run with one is no measurement of the system: bless.sh refuses it, --compare names it.
  std::string fault_injection;
};

struct ResultPoint {
  Record record;
  std::vector<Array> arrays;
  // Stored as the fields `status` and `status_reason` when the point is written.
  PointStatus status = PointStatus::Ok;
  std::string status_reason;  // why the status is not ok
};

// Rank 0 only. The constructor creates DIR (if missing) and tries the temporary file
// DIR/.<suite>-<UTC stamp>-<pid>.h5.tmp, so an unwritable directory fails before any work
// (throws RuntimeError naming DIR). The points are kept until commit(), which writes the file
// whole: a run that dies before leaves no file (its journal keeps the points), one that dies
// during the commit at most the temporary file, which the next run of the same name removes.
class ResultWriter {
 public:
  ResultWriter(const std::string& dir, const std::string& suite);
  // With a name of the caller's: DIR/.<stem>.h5.tmp, committed to DIR/<stem>.h5 (a run id's file,
  // a journal entry). replace: commit replaces an existing DIR/<stem>.h5 (a resumed run's file);
  // otherwise the suffix rule applies.
  struct Named {
    std::string stem;
    bool replace = false;
  };
  ResultWriter(const std::string& dir, const Named& name);
  ~ResultWriter();
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  // Checked now, kept until commit(): nothing reaches the disk before (a run's points are durable
  // through its journal, journal.hpp).
  void add_point(const ResultPoint& point);
  // Builds the file in memory with the provenance, writes it into the temporary file in one piece
  // (a full disk is a RuntimeError naming it, and the temporary file is removed), makes it durable
  // (fsync of the file and its directory) and renames it to DIR/<suite>-<UTC stamp>-<pid>.h5 (or the Named stem). Returns
  // the final path.
  std::string commit(const Provenance& provenance);
  const std::string& temp_path() const { return temp_path_; }

 private:
  struct Impl;
  void probe();
  void create();
  void write_file_image(const std::string& block, const std::vector<char>& image);
  std::string dir_, temp_path_, final_path_;
  Impl* impl_ = nullptr;
  bool committed_ = false;
  bool replace_ = false;
};


struct ResultRun {
  std::string path;
  int schema_version = 0;
  Provenance provenance;
  std::vector<ResultPoint> points;
};

// Throws RuntimeError("FILE: reason") for a missing, truncated, corrupted or foreign file, or a
// schema version this build does not read.
ResultRun read_result_file(const std::string& path);

// Files named *.h5 under each path (directories recursively, sorted; names starting with "."
// skipped: temporary files and run journals), or the path itself.
std::vector<std::string> find_result_files(const std::vector<std::string>& paths);

}  // namespace hpcnn
