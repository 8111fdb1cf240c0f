#include "suites/link_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "base/activity.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "collectives/pair_schedule.hpp"
#include "harness/main_wrapper.hpp"
#include "harness/rank_series.hpp"
#include "harness/resources.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"
#include "harness/timed_count.hpp"
#include "analysis/link_matrix.hpp"
#include "suites/suite_options.hpp"

namespace hpcnn {

namespace {

const char* const kLinkProtocol =
    "protocol: every pair of ranks in P-1 rounds (P rounds for odd P) of P/2 disjoint pairs measured at once "
    "(the round-robin schedule of JSC's LinkTest); a pair exchanges its message both ways at once (MPI_Sendrecv); "
    "an MPI_Barrier before each round; --randomize draws the ranks' places from --seed; warm-up exchanges untimed; a pair's time is the larger of its two ranks' "
    "median exchange times; bandwidth = size / time, each way";

std::vector<OptionSpec> link_options() {
  std::vector<OptionSpec> specs = {
      {"links", OptType::Flag, false, "", "", "measure every link: the link test (this option table)"},
      {"sizes", OptType::String, true, "8,4M", "LIST",
       "message sizes in bytes (K, M, G = binary multiples): a small one for latency, a gradient-sized one for "
       "bandwidth"},
      {"rounds", OptType::Int, false, "0", "N",
       "run N of the P-1 rounds, spread evenly over them (0: all). A sample sees only the pairs of its rounds: a "
       "slow link outside them goes unseen, a slow node is still seen (it is in every round)",
       {}, 0, 1e9},
      {"randomize", OptType::Flag, false, "", "",
       "place the ranks in the schedule in an order drawn from --seed instead of rank order: a test repeated with "
       "other seeds measures every pair beside other pairs (and a --rounds sample sees other pairs)"},
  };
  std::vector<OptionSpec> timing = timing_options(), output = output_options();
  for (OptionSpec& t : timing)
    if (t.name == "seed") {
      t.help = "seed of the messages' bytes and, with --randomize, of the ranks' order in the schedule";
    } else if (t.name == "iters") {
      t.default_value = "20";
      t.help = "timed exchanges of every pair in its round";
    } else if (t.name == "warmup") {
      t.default_value = "3";
      t.help = "untimed warm-up exchanges of every pair in its round";
    } else if (t.name == "min-time")
      t.help = "time every round for at least S seconds: more timed exchanges than --iters where they add up to less "
               "(the count is the slowest pair's, agreed by every rank; 0: exactly --iters)";
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void validate(const Options& o) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) throw UsageError("--links: 1 rank has no link to measure (start one rank per node, 2 or more)");
  const double available = available_memory_bytes();
  for (const std::string& s : o.values("sizes")) {
    const std::int64_t bytes = parse_bytes(s);
    if (bytes < 1) throw UsageError("--sizes: '" + s + "': a link is measured with at least 1 byte");
    if (bytes > std::numeric_limits<int>::max())
      throw UsageError("--sizes: '" + s + "': a link is measured with at most 2 GiB - 1 bytes (one MPI message)");
    // The message sent and the one received, per rank, before any allocation.
    if (available > 0 && 2.0 * static_cast<double>(bytes) > available)
      throw UsageError("--sizes: '" + s + "': a rank needs twice that (the message sent and the one received), more than "
                       "this node has available");
  }
}

void print_list() {
  std::printf("the link test (--links): every pair of ranks in P-1 rounds of P/2 pairs, both ways at once "
              "(MPI_Sendrecv of bytes); start one rank per node\n");
}

// The byte a rank puts at `i` of its message: rank, seed and position mixed, so a message from the
// wrong rank or a shifted one shows in the check.
unsigned char link_byte(std::uint64_t seed, int rank, std::size_t i) {
  const std::uint64_t x = (seed * 0x9E3779B97F4A7C15ULL) ^ (static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ULL) ^ (i * 0x94D049BB133111EBULL);
  return static_cast<unsigned char>((x >> 29) ^ (x >> 47) ^ i);
}

struct LinkPoint {
  std::int64_t bytes = 0;
  std::uint64_t seed = 1;
  int warmup = 0, iters = 0, rounds = 0;
  double min_time = 0;
  bool randomize = false;  // the ranks' places in the schedule drawn from the seed
};

// What one rank measured in one round: its partner (-1: it sat out) and its median exchange time.
struct RoundTime {
  int partner = -1;
  double median_s = 0;
};

// One round: the pairs exchange their messages; the rank's median exchange time. Collective over
// MPI_COMM_WORLD (the count of timed exchanges is agreed by every rank). Counts wrong bytes.
RoundTime time_round(const LinkPoint& lp, const std::vector<int>& order, int round, std::vector<unsigned char>& send,
                     std::vector<unsigned char>& recv, std::int64_t& wrong) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  RoundTime out;
  out.partner = ordered_partner(order, round, rank);
  const int count = static_cast<int>(lp.bytes);
  auto exchange = [&]() {
    const auto t0 = std::chrono::steady_clock::now();
    MPI_Sendrecv(send.data(), count, MPI_BYTE, out.partner, 7, recv.data(), count, MPI_BYTE, out.partner, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  {
    const activity::WaitScope waiting("barrier before a round of the link test");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  activity::set_phase("link round", round + 1);
  double warm = 0;
  if (out.partner >= 0)
    for (int k = 0; k < lp.warmup; ++k) warm += exchange();
  // Ranks that sit out ask for no more than --iters; the others from their warm-up's pace.
  const double per_call = out.partner >= 0 && lp.warmup > 0 ? warm / lp.warmup : std::numeric_limits<double>::infinity();
  const int timed = timed_count(lp.iters, lp.min_time, per_call, MPI_COMM_WORLD);
  if (out.partner < 0) return out;
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(timed));
  for (int k = 0; k < timed; ++k) times.push_back(exchange());
  out.median_s = compute_stats(times).median;
  // Validation, outside the timed loop: every byte is the partner's.
  for (std::size_t i = 0; i < recv.size(); ++i) wrong += recv[i] != link_byte(lp.seed, out.partner, i);
  return out;
}

ResultPoint run_point(const LinkPoint& lp, std::int64_t& wrong_total) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<unsigned char> send(static_cast<std::size_t>(lp.bytes)), recv(send.size());
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = link_byte(lp.seed, rank, i);
  if (const long i = injected_corruption("ELEMENT"); i >= 0 && rank == size - 1 && static_cast<std::size_t>(i) < send.size())
    send[static_cast<std::size_t>(i)] ^= 1;  // test-only (base/fault_injection.hpp): the check must see it
  const std::vector<int> rounds = sampled_rounds(pair_rounds(size), lp.rounds);
  std::vector<double> mine;  // per round: partner, median seconds
  std::int64_t wrong = 0;
  const std::vector<int> order = schedule_order(size, lp.randomize ? lp.seed : 0);
  for (int round : rounds) {
    const RoundTime t = time_round(lp, order, round, send, recv, wrong);
    mine.push_back(t.partner);
    mine.push_back(t.median_s);
  }
  std::int64_t wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  wrong_total += wrong_all;
  const std::vector<double> all = gather_all(mine, MPI_COMM_WORLD);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  const std::vector<std::vector<std::string>> hosts = gather_strings({std::string(host, static_cast<std::size_t>(length))}, MPI_COMM_WORLD);

  ResultPoint out;
  if (rank != 0) return out;
  // The pair's time: the slower of its two ranks' medians (a link is as fast as its slower end).
  const auto n = static_cast<std::size_t>(size);
  std::vector<double> time_s(n * n, 0.0);
  const std::size_t per_rank = 2 * rounds.size();
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < rounds.size(); ++k) {
      const int partner = static_cast<int>(all[r * per_rank + 2 * k]);
      if (partner < 0) continue;
      double& t = time_s[r * n + static_cast<std::size_t>(partner)];
      t = std::max(t, all[r * per_rank + 2 * k + 1]);
      time_s[static_cast<std::size_t>(partner) * n + r] = t;
    }
  std::vector<double> time_us(n * n), bw_gbs(n * n);
  for (std::size_t k = 0; k < n * n; ++k) {
    time_us[k] = time_s[k] * 1e6;
    bw_gbs[k] = time_s[k] > 0 ? static_cast<double>(lp.bytes) / time_s[k] * 1e-9 : 0.0;
  }
  std::vector<std::string> host_names;
  for (const auto& h : hosts) host_names.push_back(h.empty() ? std::string("?") : h.front());
  const LinkSummary s = summarize_links(bw_gbs, time_us, rank_names(host_names));

  Record& r = out.record;
  r.set("suite", std::string("hpcnn-allreduce"));
  r.set("exchange", std::string("links"));
  r.set("datatype", std::string("bytes-sendrecv"));
  r.set("iter_sync", std::string("barrier per round"));
  r.set("ranks", std::int64_t{size});
  r.set("size_bytes", lp.bytes);
  r.set("iters", std::int64_t{lp.iters});
  r.set("warmup", std::int64_t{lp.warmup});
  r.set("min_time_s", lp.min_time);
  r.set("seed", static_cast<std::int64_t>(lp.seed));
  r.set("link_rounds", static_cast<std::int64_t>(rounds.size()));
  r.set("link_order", std::string(lp.randomize ? "seeded" : "ranks"));
  r.set("link_pairs", static_cast<std::int64_t>(s.pairs));
  r.set("link_time_median_us", s.time_median_us);
  r.set("link_bw_median_gbs", s.bw_median_gbs);
  r.set("link_bw_min_gbs", s.bw_min_gbs);
  r.set("link_bw_min_ratio", s.bw_median_gbs > 0 ? s.bw_min_gbs / s.bw_median_gbs : 0.0);
  r.set("link_slowest", s.slowest);
  r.set("wrong", wrong_all);
  out.arrays.push_back(make_array("link_time_us", {n, n}, std::move(time_us)));
  out.arrays.push_back(make_array("link_bw_gbs", {n, n}, std::move(bw_gbs)));
  if (wrong_all) {
    out.status = PointStatus::Failed;
    out.status_reason = std::to_string(wrong_all) + " received bytes differ from what the partner sent";
  }
  return out;
}

}  // namespace

int run_link_suite(int argc, char** argv) {
  static const std::vector<OptionSpec> options = link_options();
  std::int64_t wrong_total = 0;
  SuiteDef def;
  def.program = "hpcnn-allreduce";
  def.summary =
      "hpcnn-allreduce --links: the link test. Every pair of ranks (start one rank per node) exchanges a\n"
      "message both ways at once, in P-1 rounds of P/2 disjoint pairs measured together, so every\n"
      "link of the allocation is loaded as training loads it and a round takes as long as its\n"
      "slowest pair. Per message size: the latency and bandwidth matrix of every pair\n"
      "(link_time_us, link_bw_gbs), the median pair and the slowest pair; every received byte is\n"
      "checked. hpcnn-summary --population names the pairs and nodes far below the median pair.\n";
  def.options = options;
  def.live_columns = {"exchange", "ranks", "size_bytes", "link_rounds", "link_pairs", "link_time_median_us",
                      "link_bw_median_gbs", "link_bw_min_gbs", "link_slowest", "wrong"};
  def.table_preamble = std::string("# ") + kLinkProtocol + "\n";
  def.default_table = [](const Options&) { return std::string("links"); };
  def.validate = validate;
  def.print_list = print_list;
  def.run_point = [&](const Options& o, const SweepPoint& p, MPI_Comm, LibraryVersions&, const PointPlace&) {
    const PointSettings s(o, p);
    LinkPoint lp;
    lp.bytes = parse_bytes(s.str("sizes"));
    lp.seed = static_cast<std::uint64_t>(s.integer("seed"));
    lp.warmup = static_cast<int>(s.integer("warmup"));
    lp.iters = static_cast<int>(s.integer("iters"));
    lp.min_time = s.real("min-time");
    lp.rounds = static_cast<int>(s.integer("rounds"));
    lp.randomize = o.flag("randomize");
    return run_point(lp, wrong_total);
  };
  const int status = run_suite(def, argc, argv);
  if (wrong_total > 0) {
    if (is_root_rank())
      std::fprintf(stderr, "hpcnn-allreduce: error: %lld received bytes differ from what the partner sent (see wrong)\n",
                   static_cast<long long>(wrong_total));
    return 1;
  }
  return status;
}

}  // namespace hpcnn
