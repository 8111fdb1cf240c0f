#include "results/isolated_read.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <vector>
#include <stdexcept>

#include "base/errors.hpp"

namespace hpcnn {

namespace {

// ---------------------------------------------------------------------------------------------
// The reply: 'R' + an encoded ResultRun, or 'E' + the error message of a reader that failed
// cleanly.

class Encoder {
 public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void str(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Decoder {
 public:
  Decoder(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    at_ += 8;
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() {
    std::uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  // A count of items each at least `min_bytes` long: never more than the reply can hold, so a bad
  // count cannot make us allocate.
  std::size_t count(std::size_t min_bytes) {
    const std::uint64_t n = u64();
    if (n > (bytes_.size() - at_) / std::max<std::size_t>(min_bytes, 1)) bad();
    return static_cast<std::size_t>(n);
  }
  bool done() const { return at_ == bytes_.size(); }
  [[noreturn]] void bad() const {
    throw RuntimeError(path_ + ": the reader process sent a malformed reply (" + std::to_string(bytes_.size()) +
                       " bytes)");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > bytes_.size() - at_) bad();
  }
  const std::string& bytes_;
  const std::string& path_;
  std::size_t at_ = 0;
};

void encode_pairs(Encoder& e, const std::vector<std::pair<std::string, std::string>>& pairs) {
  e.u64(pairs.size());
  for (const auto& [k, v] : pairs) {
    e.str(k);
    e.str(v);
  }
}

std::vector<std::pair<std::string, std::string>> decode_pairs(Decoder& d) {
  std::vector<std::pair<std::string, std::string>> pairs(d.count(16));
  for (auto& [k, v] : pairs) {
    k = d.str();
    v = d.str();
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// The child

// The address space the process has now (VmSize), 0 when unknown: the memory limit is counted
// from here, so that a process that reserved much (AddressSanitizer's shadow) still has the budget.
std::size_t address_space_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long pages = 0;
  const bool ok = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  const long page = sysconf(_SC_PAGESIZE);
  return ok && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

// How a child ends without a reply (the parent names these).
constexpr int kExitWriteFailed = 3, kExitOrphaned = 4, kExitFailedUnsaid = 70;  // 70: sysexits.h EX_SOFTWARE

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(kExitWriteFailed);
    done += static_cast<std::size_t>(n);
  }
}

// The child: nothing it throws may leave this function (it would unwind into the parent's code,
// in the child's copy of the parent), and a reply about memory must not need memory.
[[noreturn]] void child_main(int fd, const std::function<std::string()>& work, const IsolationLimits& limits,
                             const std::string& label, pid_t parent) noexcept {
  // Die with the parent, so a killed summary leaves no reader behind.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kExitOrphaned);
  const rlim_t cpu = static_cast<rlim_t>(std::ceil(limits.cpu_seconds > 0 ? limits.cpu_seconds : limits.seconds)) + 1;
  const rlimit cpu_limit{cpu, cpu + 1};
  setrlimit(RLIMIT_CPU, &cpu_limit);
  try {
    // Made before the limit applies: written as it is when the reader runs out of memory.
    const std::string out_of_memory = "E" + label + ": reading it needs more than the limit of " +
                                      std::to_string(limits.memory_bytes >> 20) +
                                      " MiB of memory (a damaged or hostile file)";
    if (const std::size_t now = address_space_bytes(); now > 0) {
      const rlimit as_limit{now + limits.memory_bytes, now + limits.memory_bytes};
      setrlimit(RLIMIT_AS, &as_limit);
    }
    try {
      write_all(fd, "R" + work());
    } catch (const RuntimeError& e) {
      write_all(fd, std::string("E") + e.what());
    } catch (const std::bad_alloc&) {
      write_all(fd, out_of_memory);
    } catch (const std::exception& e) {
      write_all(fd, "E" + label + ": internal: " + e.what());
    }
  } catch (...) {  // not an exception class, or a reply that could not be made: no reply at all
    _exit(kExitFailedUnsaid);
  }
  ::close(fd);
  _exit(0);  // no atexit handlers, no stdio flush: the parent's buffers are not ours to write
}

// ---------------------------------------------------------------------------------------------
// The parent

std::string signal_text(int sig) {
  const char* name = strsignal(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(", ") + name : std::string());
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

// One reader process on its way: where its reply comes from and until when it may take.
struct Child {
  std::size_t job = 0;
  pid_t pid = -1;
  int fd = -1;
  std::chrono::steady_clock::time_point deadline;
  std::string reply;
  bool replied = false;  // EOF on the pipe: the child wrote all it will write
};

// Starts jobs[i]'s child. The child closes the read ends of its running siblings' pipes (it
// inherits them: O_CLOEXEC acts on exec only), so each pipe has one reader and one writer. No
// child when the system has no process to spare (a per-user limit) while siblings run: the job
// waits for one of them to end.
std::optional<Child> start_child(const IsolatedJob& job, std::size_t i, const std::vector<Child>& running) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw RuntimeError(job.label + ": cannot create a pipe: " + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered is written twice, whatever the child does
  const pid_t parent = ::getpid();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    if ((err == EAGAIN || err == ENOMEM) && !running.empty()) return std::nullopt;
    throw RuntimeError(job.label + ": cannot start the reader process: " + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const Child& sibling : running) ::close(sibling.fd);
    child_main(fds[1], job.work, job.limits, job.label, parent);
  }
  ::close(fds[1]);
  Child c;
  c.job = i;
  c.pid = pid;
  c.fd = fds[0];
  c.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(job.limits.seconds));
  return c;
}

// Reaps a child that replied or ran out of time, and says what came of it: its reply, or the
// RuntimeError naming what happened to it.
std::string finish_child(Child& c, const IsolatedJob& job) {
  ::close(c.fd);
  c.fd = -1;
  if (!c.replied) ::kill(c.pid, SIGKILL);
  const int status = wait_for(c.pid);
  c.pid = -1;  // reaped: the pid may be another process's from now on
  const IsolationLimits& limits = job.limits;
  const std::string& label = job.label;
  if (!c.replied)
    throw RuntimeError(label + ": the reader did not finish within " + seconds_text(limits.seconds) +
                       " s and was stopped (a damaged or hostile file)");
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGXCPU)
      throw RuntimeError(label + ": the reader used more than " +
                         seconds_text(limits.cpu_seconds > 0 ? limits.cpu_seconds : limits.seconds) +
                         " s of CPU time and was stopped (a damaged or hostile file)");
    if (sig == SIGKILL)
      throw RuntimeError(label + ": the reader was killed (" + signal_text(sig) + "; out of memory?)");
    throw RuntimeError(label + ": the reader crashed (" + signal_text(sig) + "): a damaged or hostile file");
  }
  const std::string& reply = c.reply;
  if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == kExitFailedUnsaid)
    throw RuntimeError(label + ": the reader failed without saying why (out of memory, or an unknown error)");
  if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty())
    throw RuntimeError(label + ": the reader process ended without a reply (exit status " +
                       std::to_string(status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  if (reply[0] == 'E') throw RuntimeError(reply.substr(1));
  if (reply[0] != 'R') throw RuntimeError(label + ": the reader process sent a malformed reply");
  return reply.substr(1);
}

// Takes what the ready pipes hold; a pipe at EOF marks its child as replied.
void collect_replies(std::vector<Child>& running) {
  const auto now = std::chrono::steady_clock::now();
  auto wait = std::chrono::milliseconds(1000);
  for (const Child& c : running)
    wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now) +
                              std::chrono::milliseconds(1));
  std::vector<pollfd> fds;
  for (const Child& c : running) fds.push_back(pollfd{c.fd, POLLIN, 0});
  const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait.count(), 0)));
  if (rc < 0 && errno != EINTR) throw RuntimeError(std::string("poll: ") + std::strerror(errno));
  if (rc <= 0) return;
  char buf[1 << 16];
  for (std::size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    const ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw RuntimeError(std::string("read: ") + std::strerror(errno));
    if (n == 0) running[k].replied = true;
    else running[k].reply.append(buf, static_cast<std::size_t>(n));
  }
}

// Kills and reaps whatever is still running when the loop leaves by an exception.
struct ChildrenGuard {
  std::vector<Child>& running;
  ~ChildrenGuard() {
    for (Child& c : running) {
      if (c.fd >= 0) ::close(c.fd);
      if (c.pid <= 0) continue;
      ::kill(c.pid, SIGKILL);
      wait_for(c.pid);
    }
  }
};

// SIGCHLD at its default while the children run: where it is ignored (inherited from a launcher
// that ignored it), the kernel reaps the children itself and waitpid has no status to give.
class DefaultChildSignal {
 public:
  DefaultChildSignal() {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    restore_ = ::sigaction(SIGCHLD, &dfl, &old_) == 0;
  }
  ~DefaultChildSignal() {
    if (restore_) ::sigaction(SIGCHLD, &old_, nullptr);
  }
  DefaultChildSignal(const DefaultChildSignal&) = delete;
  DefaultChildSignal& operator=(const DefaultChildSignal&) = delete;

 private:
  struct sigaction old_ {};
  bool restore_ = false;
};

}  // namespace

IsolationLimits reader_limits(std::size_t file_bytes) {
  IsolationLimits limits;
  // What a good file of this size needs, with room for a busy machine: a small file parses in
  // milliseconds, a large one at well over 10 MB/s. A hang is stopped as soon as that is past.
  limits.cpu_seconds = 5 + static_cast<double>(file_bytes) / 10e6;
  limits.seconds = 12 * limits.cpu_seconds;
  limits.memory_bytes = (std::size_t{2} << 30) + 16 * file_bytes;
  return limits;
}

std::vector<IsolatedResult> run_isolated_all(const std::vector<IsolatedJob>& jobs, std::size_t parallel) {
  parallel = std::clamp<std::size_t>(parallel, 1, std::max<std::size_t>(jobs.size(), 1));
  std::vector<IsolatedResult> results(jobs.size());
  const DefaultChildSignal child_signal;
  std::vector<Child> running;
  running.reserve(parallel);  // no allocation between a fork and the guard knowing its child
  ChildrenGuard guard{running};
  std::size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    for (; next < jobs.size() && running.size() < parallel; ++next) {
      try {
        std::optional<Child> child = start_child(jobs[next], next, running);
        if (!child) {
          parallel = running.size();  // as many as the system allows now; the job waits its turn
          break;
        }
        running.push_back(std::move(*child));
      } catch (const RuntimeError& e) {
        results[next].error = e.what();
      }
    }
    if (running.empty()) continue;
    collect_replies(running);
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t k = 0; k < running.size();) {
      Child& c = running[k];
      if (!c.replied && now < c.deadline) {
        ++k;
        continue;
      }
      IsolatedResult& r = results[c.job];
      try {
        r.reply = finish_child(c, jobs[c.job]);
        r.ok = true;
      } catch (const RuntimeError& e) {
        r.error = e.what();
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return results;
}

std::string run_isolated(const std::function<std::string()>& work, const IsolationLimits& limits,
                         const std::string& label) {
  IsolatedResult r = std::move(run_isolated_all({IsolatedJob{work, limits, label}}, 1).front());
  if (!r.ok) throw RuntimeError(r.error);
  return std::move(r.reply);
}

std::string encode_run(const ResultRun& run) {
  Encoder e;
  e.str(run.path);
  e.i64(run.schema_version);
  const Provenance& p = run.provenance;
  for (const std::string* s : {&p.suite, &p.command_line, &p.reproducer, &p.hpcnn_version, &p.configure_options,
                               &p.start_time, &p.end_time, &p.job_id, &p.run_starts, &p.machine, &p.session, &p.default_table, &p.fault_injection})
    e.str(*s);
  e.i64(p.mpi_size);
  e.i64(p.restarts);
  e.u64(p.hosts.size());
  for (const std::string& h : p.hosts) e.str(h);
  encode_pairs(e, p.libraries);
  encode_pairs(e, p.settings);
  e.u64(run.points.size());
  for (const ResultPoint& point : run.points) {
    e.u64(point.record.items().size());
    for (const auto& [name, value] : point.record.items()) {
      e.str(name);
      e.u64(value.index());
      if (const auto* i = std::get_if<std::int64_t>(&value)) e.i64(*i);
      else if (const auto* d = std::get_if<double>(&value)) e.f64(*d);
      else e.str(std::get<std::string>(value));
    }
    e.u64(point.arrays.size());
    for (const Array& a : point.arrays) {
      e.str(a.name);
      e.str(a.unit);
      e.u64(a.dims.size());
      for (std::size_t dim : a.dims) e.u64(dim);
      e.u64(a.data.size());
      for (double v : a.data) e.f64(v);
    }
    e.u64(static_cast<std::uint64_t>(point.status));
    e.str(point.status_reason);
  }
  return e.take();
}

ResultRun decode_run(const std::string& bytes, const std::string& path) {
  Decoder d(bytes, path);
  ResultRun run;
  run.path = d.str();
  run.schema_version = static_cast<int>(d.i64());
  Provenance& p = run.provenance;
  for (std::string* s : {&p.suite, &p.command_line, &p.reproducer, &p.hpcnn_version, &p.configure_options,
                         &p.start_time, &p.end_time, &p.job_id, &p.run_starts, &p.machine, &p.session, &p.default_table, &p.fault_injection})
    *s = d.str();
  p.mpi_size = static_cast<int>(d.i64());
  p.restarts = static_cast<int>(d.i64());
  p.hosts.resize(d.count(8));
  for (std::string& h : p.hosts) h = d.str();
  p.libraries = decode_pairs(d);
  p.settings = decode_pairs(d);
  run.points.resize(d.count(32));
  for (ResultPoint& point : run.points) {
    const std::size_t fields = d.count(24);
    for (std::size_t i = 0; i < fields; ++i) {
      std::string name = d.str();
      Value value;
      switch (d.u64()) {
        case 0: value = d.i64(); break;
        case 1: value = d.f64(); break;
        case 2: value = d.str(); break;
        default: d.bad();
      }
      try {
        point.record.set(name, std::move(value));
      } catch (const std::logic_error&) {
        d.bad();  // the child reads known fields only
      }
    }
    point.arrays.resize(d.count(32));
    for (Array& a : point.arrays) {
      a.name = d.str();
      a.unit = d.str();
      a.dims.resize(d.count(8));
      for (std::size_t& dim : a.dims) dim = static_cast<std::size_t>(d.u64());
      a.data.resize(d.count(8));
      for (double& v : a.data) v = d.f64();
    }
    const std::uint64_t status = d.u64();
    if (status > static_cast<std::uint64_t>(PointStatus::Interrupted)) d.bad();
    point.status = static_cast<PointStatus>(status);
    point.status_reason = d.str();
  }
  if (!d.done()) d.bad();
  return run;
}

namespace {

IsolationLimits limits_for(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return reader_limits(ec ? 0 : static_cast<std::size_t>(size));
}

}  // namespace

ResultRun read_result_file_isolated(const std::string& path) {
  return read_result_file_isolated(path, limits_for(path));
}

std::vector<IsolatedRead> read_result_files_isolated(const std::vector<std::string>& paths, std::size_t parallel) {
  std::vector<IsolatedJob> jobs;
  for (const std::string& path : paths)
    jobs.push_back(IsolatedJob{[&path] { return encode_run(read_result_file(path)); }, limits_for(path), path});
  std::vector<IsolatedResult> replies = run_isolated_all(jobs, parallel);
  std::vector<IsolatedRead> reads(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!replies[i].ok) {
      reads[i].error = std::move(replies[i].error);
      continue;
    }
    try {
      reads[i].run = decode_run(replies[i].reply, paths[i]);
    } catch (const RuntimeError& e) {
      reads[i].error = e.what();
    }
  }
  return reads;
}

ResultRun read_result_file_isolated(const std::string& path, const IsolationLimits& limits) {
  const std::string reply = run_isolated([&path] { return encode_run(read_result_file(path)); }, limits, path);
  return decode_run(reply, path);
}

}  // namespace hpcnn
