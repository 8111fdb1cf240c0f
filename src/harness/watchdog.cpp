#include "harness/watchdog.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/activity.hpp"

namespace hpcnn {

namespace {

std::string request_path(const std::string& board) { return board + "/request"; }
std::string answer_path(const std::string& board, int rank) { return board + "/rank-" + std::to_string(rank) + ".txt"; }

double tick_seconds(double timeout) { return std::clamp(timeout / 10, 0.05, 1.0); }
// How often a rank looks for a question on the board, a folder every rank sees (a parallel file
// system's, on a cluster): every tick, but never more than kBoardLooksPerSecond looks a second
// over the whole job, so that the metadata server's load does not grow with the rank count.
constexpr double kBoardLooksPerSecond = 100;
double board_interval(double timeout, int ranks) { return std::max(tick_seconds(timeout), ranks / kBoardLooksPerSecond); }
// How long the rank that asked waits for the answers: long enough for every watchdog thread to
// look (twice its interval), short against the timeout.
double grace_seconds(double timeout, int ranks) {
  return std::max(std::clamp(timeout / 2, 1.0, 10.0), 2 * board_interval(timeout, ranks) + 1);
}

// Answers on the board: one listing of the folder, not a look per rank.
int count_answers(const std::string& board) {
  int answers = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(board, ec)) {
    const std::string name = entry.path().filename().string();
    answers += name.rfind("rank-", 0) == 0 && name.ends_with(".txt");
  }
  return answers;
}

// "rank 3" or "ranks 3-7": consecutive ranks that say the same share one mention.
std::string rank_span(int first, int last) {
  return first == last ? "rank " + std::to_string(first) : "ranks " + std::to_string(first) + "-" + std::to_string(last);
}
void append_grouped(std::string& list, const std::vector<std::pair<int, std::string>>& items) {
  for (std::size_t i = 0; i < items.size();) {
    std::size_t j = i;
    while (j + 1 < items.size() && items[j + 1].first == items[j].first + 1 && items[j + 1].second == items[i].second) ++j;
    list.append(list.empty() ? "" : ", ").append(rank_span(items[i].first, items[j].first)).append(items[i].second);
    i = j + 1;
  }
}

void sleep_seconds(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// One rank's answer, as its file holds it (tab-separated, one line).
struct Answer {
  bool present = false, waiting = false;
  std::string operation, call, phase, host;
  int bucket = -1, peer = -1;
  double wait_seconds = 0, phase_seconds = 0;
  long iteration = -1;
};

std::string encode(const activity::Snapshot& s, double wait_seconds, double phase_seconds, const std::string& host) {
  std::ostringstream out;
  out << (s.waiting ? 1 : 0) << '\t' << s.operation << '\t' << s.call << '\t' << s.bucket << '\t' << s.peer << '\t'
      << wait_seconds << '\t' << s.phase << '\t' << phase_seconds << '\t' << s.iteration << '\t' << host << '\n';
  return out.str();
}

Answer read_answer(const std::string& path) {
  Answer a;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return a;
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string item; std::getline(ss, item, '\t');) f.push_back(item);
  if (f.size() != 10) return a;
  try {
    a.waiting = f[0] == "1";
    a.operation = f[1];
    a.call = f[2];
    a.bucket = std::stoi(f[3]);
    a.peer = std::stoi(f[4]);
    a.wait_seconds = std::stod(f[5]);
    a.phase = f[6];
    a.phase_seconds = std::stod(f[7]);
    a.iteration = std::stol(f[8]);
    a.host = f[9];
    a.present = true;
  } catch (const std::exception&) {  // half an answer counts as none
  }
  return a;
}

// Written whole under a temporary name and renamed, so the asking rank never reads half a line.
void write_answer(const std::string& board, int rank, const std::string& text) {
  const std::string path = answer_path(board, rank), tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return;
  }
  std::rename(tmp.c_str(), path.c_str());
}

// "in 'allreduce step' (MPI_Waitall, bucket 3, waiting for rank 1)"
std::string describe_wait(const std::string& operation, const std::string& call, int bucket, int peer) {
  std::string s = "in '" + (operation.empty() ? call : operation) + "'";
  std::string detail = operation.empty() ? "" : call;
  if (bucket >= 0) detail.append(detail.empty() ? "" : ", ").append("bucket " + std::to_string(bucket));
  if (peer >= 0) detail.append(detail.empty() ? "" : ", ").append("waiting for rank " + std::to_string(peer));
  if (!detail.empty()) s.append(" (").append(detail).append(")");
  return s;
}

}  // namespace

Watchdog::Watchdog(const WatchdogSettings& settings, MPI_Comm world) : settings_(settings) {
  MPI_Comm_rank(world, &rank_);
  MPI_Comm_size(world, &size_);
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  host_ = name;
  if (settings_.timeout_s > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::clear_board(const std::string& board) {
  std::error_code ec;
  std::filesystem::remove_all(board, ec);
}

double Watchdog::Tracker::observe(bool now_active, std::uint64_t now_number) {
  const auto now = std::chrono::steady_clock::now();
  if (!now_active) {
    active = false;
    return 0;
  }
  if (!active || number != now_number) {
    active = true;
    number = now_number;
    since = now;
  }
  return std::chrono::duration<double>(now - since).count();
}

void Watchdog::watch() {
  const auto tick = std::chrono::duration<double>(tick_seconds(settings_.timeout_s));
  const auto look_every = std::chrono::duration<double>(board_interval(settings_.timeout_s, size_));
  // The ranks look at the board at staggered moments, not all in the same tick.
  auto next_look = std::chrono::steady_clock::now() + look_every * ((rank_ % 97) / 97.0);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const activity::Snapshot s = activity::snapshot();
    const double waited = wait_.observe(s.waiting, s.wait_number);
    phase_.observe(true, s.phase_number);
    if (waited > settings_.timeout_s) {
      lock.unlock();
      fire(waited);  // does not return
    }
    if (answered_ || settings_.board.empty() || std::chrono::steady_clock::now() < next_look) continue;
    next_look += std::chrono::duration_cast<std::chrono::steady_clock::duration>(look_every);
    if (access(request_path(settings_.board).c_str(), F_OK) == 0) answer();
  }
}

void Watchdog::answer() {
  const activity::Snapshot s = activity::snapshot();
  const double waited = wait_.observe(s.waiting, s.wait_number), in_phase = phase_.observe(true, s.phase_number);
  write_answer(settings_.board, rank_, encode(s, waited, in_phase, host_));
  answered_ = true;
}

void Watchdog::fire(double waited) {
  bool asker = true;
  if (!settings_.board.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(settings_.board, ec);
    if (!answered_) answer();
    // The first rank to ask collects the answers and speaks for the job; the others wait for the
    // launcher to end the job when it exits, and end themselves only if that never comes.
    const int fd = open(request_path(settings_.board).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    asker = fd >= 0;
    if (fd >= 0) close(fd);
  }
  const double grace = grace_seconds(settings_.timeout_s, size_);
  if (asker) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace);
    while (std::chrono::steady_clock::now() < deadline && !settings_.board.empty()) {
      if (count_answers(settings_.board) >= size_) break;
      sleep_seconds(std::max(0.1, size_ / kBoardLooksPerSecond / 10));
    }
  } else {
    sleep_seconds(2 * grace + 5);
  }
  const std::string line = compose_line(waited + (asker ? grace : 0));
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  // No MPI from this thread (the library grants MPI_THREAD_FUNNELED: main thread only). A rank
  // that exits without MPI_Finalize ends the job under mpirun, mpiexec (hydra) and srun alike;
  // where a launcher lets the others run on, each ends itself when its own watchdog fires.
  _exit(1);
}

std::string Watchdog::compose_line(double waited) {
  const activity::Snapshot me = activity::snapshot();
  std::string line = settings_.program + ": watchdog: rank " + std::to_string(rank_) + " (" + host_ + ") waited over " +
                     fixed1(waited) + " s " + describe_wait(me.operation, me.call, me.bucket, me.peer);
  if (me.iteration >= 0) line += " at iteration " + std::to_string(me.iteration);
  line += ", longer than --timeout " + fixed1(settings_.timeout_s) + " s";
  // What every other rank answered; ranks that say the same are named together ("ranks 3-7 (...)").
  std::vector<std::pair<int, std::string>> missing_items, waiting_items;
  for (int r = 0; r < size_ && !settings_.board.empty(); ++r) {
    if (r == rank_) continue;
    const Answer a = read_answer(answer_path(settings_.board, r));
    if (!a.present) {
      missing_items.emplace_back(r, " (no answer: stopped, dead or cut off)");
    } else if (!a.waiting) {
      std::string what = " (" + a.host + ": in " + (a.phase.empty() ? "set-up" : a.phase) + " for " +
                         fixed1(a.phase_seconds) + " s";
      if (a.iteration >= 0) what += " at iteration " + std::to_string(a.iteration);
      missing_items.emplace_back(r, what + ")");
    } else {
      std::string what;
      if (a.operation != me.operation || a.call != me.call || a.bucket != me.bucket)
        what = " (" + a.host + ": " + describe_wait(a.operation, a.call, a.bucket, a.peer) + ")";
      waiting_items.emplace_back(r, what);
    }
  }
  std::string missing, waiting;
  append_grouped(missing, missing_items);
  append_grouped(waiting, waiting_items);
  if (settings_.board.empty()) line += "; the other ranks were not asked (no run folder)";
  if (!missing.empty()) line += "; not arrived: " + missing;
  else if (size_ > 1 && !settings_.board.empty()) line += "; every rank is waiting (a deadlock or a lost message)";
  if (!waiting.empty()) line += "; waiting too: " + waiting;
  return line + "; ending the job";
}

}  // namespace hpcnn
