#include "harness/suite_runner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "base/activity.hpp"
#include "base/fault_injection.hpp"
#include "config.h"
#include "harness/main_wrapper.hpp"
#include "harness/progress.hpp"
#include "harness/provenance.hpp"
#include "results/bounded_series.hpp"
#include "results/record.hpp"
#include "harness/signals.hpp"
#include "harness/watchdog.hpp"
#include "results/journal.hpp"
#include "results/table.hpp"

namespace hpcnn {

std::vector<OptionSpec> output_options() {
  return {
      {"output", OptType::String, false, "results", "DIR", "directory of the result file"},
      {"run-id", OptType::String, false, "", "ID",
       "name of this run: its result file is DIR/<program>-ID.h5 (default: the start time and process id); a job "
       "script passes its job id so that a requeued job finds its run"},
      {"resume", OptType::Flag, false, "", "",
       "continue the run --run-id names: its completed points (kept in DIR/.<program>-ID.journal as each "
       "completes) are not run again, the others are, and its result file ends up as an uninterrupted run's; "
       "a run that is complete is left as it is (exit 0)"},
      {"timeout", OptType::Float, false, "600", "S",
       "watchdog: a rank waiting longer than S seconds in one collective, exchange or parameter-server wait ends "
       "the job with one line naming the operation and the ranks that did not arrive (exit 1); 0: no watchdog",
       {}, 0, 1e9},
      {"quiet", OptType::Flag, false, "", "", "print nothing but errors"},
      {"list", OptType::Flag, false, "", "", "list models, backends and build features, then exit"},
      {"version", OptType::Flag, false, "", "", "print the version and exit"},
      {"help", OptType::Flag, false, "", "", "print this help and exit"},
  };
}

PointError PointError::from(const std::exception& e) {
  const auto* known = dynamic_cast<const StatusError*>(&e);
  return {known ? known->status : PointStatus::Failed, error_message(e)};
}

void agree_on_failure(MPI_Comm comm, const PointError& local) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int mine = local.none() ? size : rank;
  int first = size;
  const activity::WaitScope waiting("point-end agreement");
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  std::string reason = rank == first ? local.reason : std::string();
  int status = static_cast<int>(local.status);
  int len = static_cast<int>(reason.size());
  MPI_Bcast(&status, 1, MPI_INT, first, comm);
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  reason.resize(static_cast<std::size_t>(len));
  MPI_Bcast(reason.data(), len, MPI_CHAR, first, comm);
  if (size > 1) reason = "rank " + std::to_string(first) + ": " + reason;
  throw PointFailure(static_cast<PointStatus>(status), reason);
}

namespace {

// The record of a point that did not produce figures: the suite, the point's swept settings that
// are fields (an option "image-size" is the field "image_size"), the status and the reason.
Record failed_record(const char* program, const SweepPoint& p) {
  Record r;
  r.set("suite", std::string(program));
  for (const auto& [name, value] : p.items()) {
    const Field* f = field_of_option(name);
    if (!f) continue;
    const std::string field = f->name;
    try {
      if (f->type == FieldType::String) r.set(field, value);
      else if (f->type == FieldType::Int) r.set(field, static_cast<std::int64_t>(std::stoll(value)));
      else r.set(field, std::stod(value));
    } catch (const std::exception&) {  // "default" threads and the like: leave the cell empty
    }
  }
  return r;
}

// "hpcnn-train: point 2: diverged: loss nan ...": the status once, also when the reason already
// says it (after another rank's prefix: "rank 1: diverged: ...").
void report_point_failure(const char* program, std::size_t number, const PointFailure& e) {
  progress().clear();
  std::fflush(stdout);
  const std::string reason = e.what(), status = status_name(e.status);
  const bool says_status =
      reason.rfind(status + ":", 0) == 0 || reason.find(": " + status + ":") != std::string::npos;
  std::fprintf(stderr, "%s: point %zu: %s%s%s\n", program, number, says_status ? "" : status.c_str(),
               says_status ? "" : ": ", reason.c_str());
}

}  // namespace

// Options that say where and how a run reports, not what it measures: left out of reproducers
// and of the settings a resumed run must share.
static bool point_setting(const std::string& name) {
  for (const char* other : {"output", "quiet", "list", "version", "help", "run-id", "resume", "timeout"})
    if (name == other) return false;
  return true;
}

std::string point_reproducer(const char* program, const Options& options, const SweepPoint& point) {
  std::string cmd = program;
  for (const auto& [name, value] : options.effective()) {
    if (!point_setting(name)) continue;
    std::string v = value;
    for (const auto& [pn, pv] : point.items())
      if (pn == name) v = pv;
    cmd.append(" --").append(name).append(" ").append(shell_quote(v));
  }
  return cmd;
}


// The suite's columns, plus one for every other list option given more than one value (so that
// the rows of --precision fp32,bf16 or --fusion on,off can be told apart), after the settings.
static std::vector<std::string> live_columns(const SuiteDef& suite, const Options& o) {
  std::vector<std::string> columns = suite.live_columns;
  std::size_t at = 0;  // after the last column that is a setting
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const Field* f = find_field(columns[i]);
    if (f && f->role != FieldRole::Figure) at = i + 1;
  }
  for (const OptionSpec& spec : suite.options) {
    const Field* f = field_of_option(spec.name);
    if (!spec.list || o.values(spec.name).size() < 2 || !f ||
        std::find(columns.begin(), columns.end(), f->name) != columns.end())
      continue;
    columns.insert(columns.begin() + static_cast<long>(at++), f->name);
  }
  columns.push_back("status");
  return columns;
}

namespace {

// --help, --version, --list: answered on rank 0; true when one was given.
bool answer_info_options(const SuiteDef& suite, const Options& o, bool root) {
  if (o.flag("help")) {
    if (root) std::printf("%s", help_text(suite.program, suite.summary, suite.options).c_str());
  } else if (o.flag("version")) {
    if (root) std::printf("%s (hpcnn) %s\n", suite.program, PACKAGE_VERSION);
  } else if (o.flag("list")) {
    if (root && suite.print_list) suite.print_list();
  } else {
    return false;
  }
  return true;
}

// "20261124T125700Z-4711" from the start time and the process id, like the file names before run ids.
std::string default_run_id(const std::string& start) {
  std::string stamp;
  for (char c : start)
    if (c != '-' && c != ':') stamp.push_back(c);
  return stamp + "-" + std::to_string(getpid());
}

std::string checked_run_id(const Options& o, const std::string& start) {
  if (!o.has("run-id")) {
    if (o.flag("resume")) throw UsageError("--resume: give the --run-id of the run to continue");
    return default_run_id(start);
  }
  const std::string id = o.str("run-id");
  if (id.size() > 128 || id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
                             std::string::npos || id[0] == '.')
    throw UsageError("--run-id: '" + id + "' is not a name of letters, digits, '.', '_' and '-' (at most 128)");
  return id;
}

Settings run_settings(const Options& o) {
  Settings out;
  for (const auto& [name, value] : o.effective())
    if (point_setting(name)) out.emplace_back(name, value);
  return out;
}

// DIR/.<stem>.lock, held (flock) while a run of that id is in progress, so that a second process
// (a requeued job whose first instance still runs) cannot write the same files. Removed when the
// run ends.
class RunLock {
 public:
  RunLock() = default;
  RunLock(RunLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  RunLock& operator=(RunLock&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(path_, o.path_);
    return *this;
  }
  ~RunLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
  }
  void take(const std::string& path, const std::string& run_id) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw RuntimeError(path + ": cannot create the run's lock: " + std::strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      throw RuntimeError("run " + run_id + " is in progress in another process (" + path + " is locked)");
    }
    fd_ = fd;
    path_ = path;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// What a run writes (rank 0): its result file, the journal of its completed points, and the starts
// of every run that contributed (a resumed run's too).
struct RunFiles {
  RunFiles() = default;
  RunFiles(RunFiles&&) = default;
  RunFiles& operator=(RunFiles&&) = default;
  // A journal this run started and that holds nothing to resume (a usage error in the first
  // point, say) is not left behind; an interrupted run keeps its journal (keep_journal).
  ~RunFiles() {
    if (journal && started_journal && !keep_journal && journal->points() == 0) journal->remove();
  }
  std::string run_id, stem, final_path;
  std::unique_ptr<ResultWriter> writer;
  std::unique_ptr<Journal> journal;
  bool complete = false;  // --resume of a run that had finished: nothing to do
  bool started_journal = false, keep_journal = false;
  std::string journal_dir;  // every rank
  RunLock lock;
};

// The temporary result files of runs that died during their commit (SIGKILL, a node failure): a
// temporary file whose run lock nobody holds. Runs in progress hold theirs for their whole life.
void remove_dead_runs_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".h5.tmp";
    if (name.size() <= 1 + suffix.size() || name[0] != '.' || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string lock = dir + "/" + name.substr(0, name.size() - suffix.size()) + ".lock";
    const int fd = open(lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {  // alive
      close(fd);
      continue;
    }
    std::filesystem::remove(entry.path(), ec);
    if (fd >= 0) close(fd);
  }
}

// Where the ranks' watchdogs ask and answer: in the run's journal folder, which every rank sees.
std::string watchdog_board(const std::string& journal) { return journal.empty() ? journal : journal + "/watchdog"; }

// Rank 0: the result file is opened first so an unwritable directory fails before any work; an
// existing run of the same id is continued (--resume) or refused.
RunFiles open_run_files(const SuiteDef& suite, const Options& o, const std::string& run_id, const std::string& start) {
  RunFiles f;
  f.run_id = run_id;
  f.stem = std::string(suite.program) + "-" + run_id;
  const std::string dir = o.str("output");
  f.final_path = (dir.empty() ? std::string(".") : dir) + "/" + f.stem + ".h5";
  f.journal = std::make_unique<Journal>(dir, f.stem);
  std::error_code ec;
  std::filesystem::create_directories(dir.empty() ? std::string(".") : dir, ec);  // for the lock
  f.lock.take((dir.empty() ? std::string(".") : dir) + "/." + f.stem + ".lock", run_id);
  remove_dead_runs_temporaries(dir.empty() ? std::string(".") : dir);
  const bool resume = o.flag("resume"), journal = f.journal->exists(), done = access(f.final_path.c_str(), F_OK) == 0;
  if (resume && !journal && done) {
    f.complete = true;
    return f;
  }
  if (!resume && (journal || done))
    throw UsageError("--run-id " + run_id + ": " + (journal ? f.journal->path() : f.final_path) +
                     " exists: add --resume to continue that run, or choose another id");
  f.writer = std::make_unique<ResultWriter>(dir, ResultWriter::Named{f.stem, resume});
  if (resume && journal) {
    f.journal->resume(run_settings(o), start);
  } else {
    f.journal->start(run_settings(o), start);
    f.started_journal = true;
  }
  set_partial_file(f.writer->temp_path().c_str());
  Watchdog::clear_board(watchdog_board(f.journal->path()));
  return f;
}

// Every rank learns whether rank 0 opened the files (error_status: 0, or the exit status of its
// error), whether the run is complete, and which points the journal holds. Returns the exit status
// after printing rank 0's error, -1 to go on, 0 when the run is complete.
int share_run_state(const SuiteDef& suite, RunFiles& f, int error_status, const std::string& error,
                    std::vector<int>& done, MPI_Comm comm) {
  int state[3] = {error_status, f.complete ? 1 : 0, 0};
  const bool root = is_root_rank();
  if (root && f.journal && error_status == 0)
    for (const auto& [index, point] : f.journal->completed()) done.push_back(static_cast<int>(index));
  state[2] = static_cast<int>(done.size());
  MPI_Bcast(state, 3, MPI_INT, 0, comm);
  if (state[0] != 0) {
    if (root) std::fprintf(stderr, "%s: error: %s\n", suite.program, error.c_str());
    return state[0];
  }
  if (state[1]) {
    if (root) std::printf("run %s is complete: %s\n", f.run_id.c_str(), f.final_path.c_str());
    return 0;
  }
  done.resize(static_cast<std::size_t>(state[2]));
  MPI_Bcast(done.data(), state[2], MPI_INT, 0, comm);
  // The journal's folder, for the points' checkpoints (the default run id is rank 0's).
  std::string journal = root ? f.journal->path() : std::string();
  int length = static_cast<int>(journal.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  journal.resize(static_cast<std::size_t>(length));
  MPI_Bcast(journal.data(), length, MPI_CHAR, 0, comm);
  f.journal_dir = journal;
  return -1;
}

// Test-only: HPCNN_TEST_KILL_AFTER_POINTS (base/fault_injection.hpp), as the OOM killer or a node
// failure would.
void maybe_kill_for_test(std::size_t journaled) { inject_kill_after("POINTS", static_cast<long>(journaled)); }

// The sweep's state on rank 0.
struct SweepState {
  std::map<PointStatus, int> tally;
  std::size_t written = 0, total = 0;
  bool interrupted = false;  // by a stop signal, or by a point's data files (stop_reason)
  std::string stop_reason;   // the interrupted point's reason (rank 0)
};

// A point whose timed iterations include stalls (a paused rank, a throttled CPU) is kept, and its
// delivered figures include them, but not silently: a warning when they cost a noticeable share of
// the point's time (kStallWarning) and 0.5 s; the fields count every one, so a few descheduled
// milliseconds of a busy machine are recorded without a warning.
constexpr double kStallWarning = 0.1;
void warn_about_stalls(const char* program, std::size_t number, const Record& r) {
  const double outliers = r.number("outlier_iters").value_or(0), share = r.number("stall_share").value_or(0);
  const double timed = r.number("iters").value_or(0) * r.number("repeats").value_or(1) * r.number("iter_mean_s").value_or(0);
  if (outliers <= 0 || share < kStallWarning || share * timed < 0.5) return;
  progress().clear();
  std::fflush(stdout);
  std::fprintf(stderr,
               "%s: point %zu: %.0f timed iteration(s) far slower than the median %.4g s (slowest %.4g s) took %.0f%% "
               "of the timed time: a paused or descheduled rank, a throttled CPU? The delivered figures include "
               "them (outlier_iters, stall_share).\n",
               program, number, outliers, r.number("iter_median_s").value_or(0), r.number("iter_max_s").value_or(0),
               100.0 * share);
}

// Rank 0: the point's status as text, its reproducer; into the journal (durable) and the file.
void record_point(const SuiteDef& suite, const Options& o, const SweepPoint& p, std::size_t index, ResultPoint& point,
                  RunFiles& f, SweepState& st) {
  // The one place a status becomes text (the result file's `status` and `status_reason`).
  point.record.set("status", std::string(status_name(point.status)));
  if (!point.status_reason.empty()) point.record.set("status_reason", point.status_reason);
  point.record.set("reproducer", point_reproducer(suite.program, o, p));
  bound_series(point);  // its statistics are in the record: beyond a count, a histogram of the series
  f.journal->add(index, point);
  maybe_kill_for_test(f.journal->points());
  warn_about_stalls(suite.program, index + 1, point.record);
  f.writer->add_point(point);
  ++st.tally[point.status];
  ++st.written;
}

// Rank 0: a point the journal holds, checked against this sweep's point of the same place.
void restore_point(const SuiteDef& suite, const Options& o, const SweepPoint& p, std::size_t index, RunFiles& f,
                   SweepState& st) {
  const ResultPoint& point = f.journal->completed().at(index);
  const std::string want = point_reproducer(suite.program, o, p);
  if (point.record.text("reproducer") != want)
    throw UsageError("--resume: point " + std::to_string(index + 1) + " of " + f.journal->path() + " is '" +
                     point.record.text("reproducer") + "', this sweep's is '" + want + "'");
  f.writer->add_point(point);
  ++st.tally[status_from_name(point.record.text("status")).value_or(PointStatus::Failed)];
  ++st.written;
}

SweepState run_points(const SuiteDef& suite, const Options& o, RunFiles& f, const std::vector<int>& done,
                      LibraryVersions& libraries, MPI_Comm comm) {
  const bool root = is_root_rank(), quiet = o.flag("quiet");
  const TextTableStream live(live_columns(suite, o));
  if (root && !quiet) std::printf("%s%s", suite.table_preamble.c_str(), live.header().c_str());
  const std::vector<SweepPoint> points = sweep_points(o, suite.options);
  progress().start_run(root && !quiet && isatty(STDERR_FILENO), static_cast<int>(points.size()));
  SweepState st;
  st.total = points.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    if (stop_requested_anywhere(comm)) {  // collective: every rank stops before the same point
      st.interrupted = true;
      break;
    }
    const bool restored = std::find(done.begin(), done.end(), static_cast<int>(i)) != done.end();
    ResultPoint point;
    if (!restored) {
      progress().start_point(static_cast<int>(i));
      inject_fault("setup");
      try {
        char checkpoint[32];
        std::snprintf(checkpoint, sizeof checkpoint, "/ckpt-%06zu.bin", i);
        point = suite.run_point(o, p, comm, libraries, PointPlace{i, f.journal_dir + checkpoint});
      } catch (const PointFailure& e) {  // thrown on every rank together: record it, go on
        if (e.status == PointStatus::Interrupted) {
          st.interrupted = true;
          st.stop_reason = e.what();
          break;
        }
        point = ResultPoint{};
        point.record = failed_record(suite.program, p);
        point.status = e.status;
        point.status_reason = e.what();
        if (root) report_point_failure(suite.program, i + 1, e);
      }
    }
    if (!root) continue;
    progress().clear();
    if (restored) restore_point(suite, o, p, i, f, st);
    else record_point(suite, o, p, i, point, f, st);
    if (!quiet) {
      std::printf("%s", live.row(restored ? f.journal->completed().at(i).record : point.record).c_str());
      std::fflush(stdout);
    }
  }
  progress().clear();
  return st;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out.append(out.empty() ? "" : ",").append(s);
  return out;
}

// Commits the result file (complete, or with the points done so far when a signal stopped the
// run), removes the journal of a complete run, prints the tally. Returns the exit status.
int finish_run(const SuiteDef& suite, const Options& o, RunFiles& f, SweepState& st, LibraryVersions& libraries,
               const std::string& start, MPI_Comm comm) {
  const bool root = is_root_rank(), quiet = o.flag("quiet");
  Provenance prov = collect_provenance(suite.program, o, comm, libraries, start);
  if (suite.default_table) prov.default_table = suite.default_table(o);
  // The signal may have reached another rank than rank 0, which prints it.
  int signal = stop_signal();
  if (st.interrupted) MPI_Allreduce(MPI_IN_PLACE, &signal, 1, MPI_INT, MPI_MAX, comm);
  int failed = 0;
  if (root) {
    prov.run_starts = joined(f.journal->run_starts());
    prov.restarts = static_cast<int>(f.journal->run_starts().size()) - 1;
    const std::string path = f.writer->commit(prov);
    set_partial_file("");
    f.keep_journal = st.interrupted;
    if (!st.interrupted) f.journal->remove();
    failed = st.tally.count(PointStatus::Failed) ? st.tally.at(PointStatus::Failed) : 0;
    std::string line;
    for (PointStatus s : {PointStatus::Ok, PointStatus::Failed, PointStatus::Diverged, PointStatus::Skipped})
      if (st.tally.count(s)) line.append(line.empty() ? "" : ", ").append(std::to_string(st.tally[s])).append(" ").append(status_name(s));
    if (!quiet) std::printf("points: %s\nresults: %s\n", line.empty() ? "none" : line.c_str(), path.c_str());
    if (st.interrupted && signal != 0)
      std::fprintf(stderr,
                   "%s: interrupted by signal %d after %zu of %zu points: they are in %s; continue with --run-id %s "
                   "--resume (exit %d)\n",
                   suite.program, signal, st.written, st.total, path.c_str(), f.run_id.c_str(), kExitInterrupted);
    else if (st.interrupted)  // no signal: a point's data files failed (suites/epoch_driver.hpp)
      std::fprintf(stderr,
                   "%s: stopped: %s; the %zu of %zu points before it are in %s; continue with --run-id %s --resume "
                   "once the files are back (exit 1)\n",
                   suite.program, st.stop_reason.c_str(), st.written, st.total, path.c_str(), f.run_id.c_str());
  }
  int interrupted = st.interrupted ? 1 : 0;
  const activity::WaitScope waiting("result-file commit on rank 0");
  MPI_Bcast(&interrupted, 1, MPI_INT, 0, comm);
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (interrupted) return signal != 0 ? kExitInterrupted : 1;
  return failed > 0 ? 1 : 0;
}

}  // namespace

int run_suite(const SuiteDef& suite, int argc, char** argv) {
  const std::string start = utc_now_iso8601();
  const Options o = parse_options(suite.options, argc, argv);
  const bool root = is_root_rank();
  if (answer_info_options(suite, o, root)) return 0;
  if (suite.validate) suite.validate(o);
  check_sweep_size(o, suite.options);  // before any file is made
  MPI_Comm comm = MPI_COMM_WORLD;
  const std::string run_id = checked_run_id(o, start);
  RunFiles files;
  std::string error;
  int error_status = 0;
  if (root) {
    try {
      files = open_run_files(suite, o, run_id, start);
    } catch (const UsageError& e) {  // found by rank 0 alone (an existing run, other settings)
      error = e.what();
      error_status = 2;
    } catch (const std::exception& e) {
      error = e.what();
      error_status = 1;
    }
  }
  std::vector<int> done;
  if (const int status = share_run_state(suite, files, error_status, error, done, comm); status >= 0) return status;
  const Watchdog watchdog({o.real("timeout"), watchdog_board(files.journal_dir), suite.program}, comm);
  LibraryVersions libraries;
  SweepState st = run_points(suite, o, files, done, libraries, comm);
  return finish_run(suite, o, files, st, libraries, start, comm);
}

}  // namespace hpcnn
