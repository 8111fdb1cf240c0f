// Reading result files that nobody vouches for (hpcnn-summary's arguments): HDF5 warns that it is
// not safe on untrusted files, and a damaged or hostile file can hang it (a loop in a global-heap
// read) or crash it even when its checksum was recomputed. So the parse runs in a forked child
// process with a wall-clock, CPU-time and address-space limit, and the parsed run comes back over
// a pipe; a hang, crash or exhausted memory becomes one RuntimeError naming the file, and the
// caller goes on with the next file.
//
// fork() is safe here because the callers have not started MPI (hpcnn-summary never calls
// MPI_Init) or any thread of their own, and several files are read by several children started
// and watched from that one thread: a lock that another thread held at the fork (a static's
// initialisation guard, a stdio lock) would stay held in the child for ever and hang it. The
// child runs only the reader and leaves with _exit.
// Processes that run under MPI (the journal of --resume, --baseline-file) read files they or an
// earlier hpcnn wrote, with read_result_file's checksum check only.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "results/result_file.hpp"

namespace hpcnn {

struct IsolationLimits {
  double seconds = 60;  // wall-clock time of the child
  double cpu_seconds = 0;  // CPU time of the child (0: as `seconds`)
  std::size_t memory_bytes = std::size_t{2} << 30;  // how far the child's address space may grow
};

// Limits for a file of this size: what a good file needs with room to spare (5 s of CPU, and a
// second per 10 MB: a good file parses far faster), so a reader that spins is stopped at once; a
// wall-clock limit of 12 times that, so a reader on a machine busy with other work is not taken
// for a hung one; at most 8 doubles per stored byte of memory (arrays are checked against the
// file's size before they are allocated).
IsolationLimits reader_limits(std::size_t file_bytes);

// Runs work() in a child process under the limits and returns the bytes it returned. Throws
// RuntimeError: work's own RuntimeError message as is; otherwise "LABEL: what happened" (crashed
// with a signal, did not finish in time, ran out of memory, died without a reply).
std::string run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits,
                         const std::string& label);

// One piece of work for a child process, and what came of it: the bytes work() returned, or the
// RuntimeError message (work's own, or "LABEL: what happened").
struct IsolatedJob {
  std::function<std::string()> work;
  IsolationLimits limits;
  std::string label;
};
struct IsolatedResult {
  bool ok = false;
  std::string reply;
  std::string error;
};

// Runs each job in its own child process under its limits, at most `parallel` children at a time,
// all started and watched from the calling thread (call it with no other thread running). The
// results are in the jobs' order; one job's hang costs its own time limit only.
std::vector<IsolatedResult> run_isolated_all(const std::vector<IsolatedJob>& jobs, std::size_t parallel);

// read_result_file(path) in a child process (limits from the file's size unless given).
ResultRun read_result_file_isolated(const std::string& path);
ResultRun read_result_file_isolated(const std::string& path, const IsolationLimits& limits);

// Every file read as above, up to `parallel` at a time; each read is the run or the error that
// names the file, in the order of `paths`.
struct IsolatedRead {
  std::optional<ResultRun> run;
  std::string error;
};
std::vector<IsolatedRead> read_result_files_isolated(const std::vector<std::string>& paths, std::size_t parallel);

// The reply's encoding (exposed for the tests): length-prefixed little-endian fields. Decoding
// checks every length against what is left and throws RuntimeError("PATH: ...") on a bad reply.
std::string encode_run(const ResultRun& run);
ResultRun decode_run(const std::string& bytes, const std::string& path);

}  // namespace hpcnn
