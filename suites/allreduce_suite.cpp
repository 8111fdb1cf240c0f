#include "suites/allreduce_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/activity.hpp"
#include "collectives/check_data.hpp"
#include "collectives/exchange.hpp"
#include "collectives/float_rates.hpp"
#include "collectives/message_buffer.hpp"
#include "collectives/mpi_cuda.hpp"
#include "base/errors.hpp"
#include "base/fault_injection.hpp"
#include "harness/main_wrapper.hpp"
#include "suites/link_suite.hpp"
#include "suites/suite_options.hpp"
#include "harness/rank_series.hpp"
#include "harness/resources.hpp"
#include "harness/suite_runner.hpp"
#include "harness/timed_count.hpp"

namespace hpcnn {

namespace {

// The timing protocol, printed above the table and stored per point (placement, datatype,
// iter_sync, warmup, iters), so that the figures can be set beside OSU's and nccl-tests'.
const char* const kProtocol =
    "protocol: float32 sum (MPI_FLOAT, MPI_SUM); placement in = MPI_IN_PLACE (input restored before each call, "
    "untimed), out = send and receive buffers (OSU's osu_allreduce form); an MPI_Barrier before each call, untimed; "
    "warm-up calls untimed; time_avg = mean per rank over the timed calls, averaged over ranks (min/max over ranks). "
    "OSU 7's osu_allreduce defaults to MPI_CHAR out of place: compare with -T mpi_float and --placement out";

const char* const kBusBwRule =
    "algbw = size / time_avg; busbw = algbw * 2(P-1)/P (the bytes each rank must send and receive in any "
    "allreduce, so busbw is comparable across rank counts and with link bandwidth; P = ranks)";

std::vector<OptionSpec> allreduce_options() {
  std::vector<OptionSpec> specs = {
      {"sizes", OptType::String, true, "4,1K,64K,1M,4M,16M", "LIST",
       "message sizes in bytes (multiples of 4; K, M, G = binary multiples)"},
      {"exchange", OptType::String, true, "mpi,ring,rhd", "LIST", "allreduce schemes (see --list)"},
      {"memory", OptType::Choice, true, "auto", "LIST",
       "where the message lives: host, device (GPU memory: nccl, or mpi with a CUDA-aware MPI), or auto "
       "(device for nccl, host for the rest)",
       "auto|host|device"},
      {"placement", OptType::Choice, true, "in", "LIST",
       "in: MPI_IN_PLACE, the message summed where it is (as hpcnn-scale's exchanges do; its input restored before "
       "each call, untimed); out: a send and a receive buffer, the form of OSU's osu_allreduce (host memory)",
       "in|out"},
      {"no-check", OptType::Flag, false, "", "", "skip the element-by-element check after the timed loop"},
      {"links", OptType::Flag, false, "", "",
       "run the link test instead: every pair of ranks in P-1 rounds, a latency and bandwidth matrix (its own "
       "options: hpcnn-allreduce --links --help)"},
  };
  std::vector<OptionSpec> timing = timing_options(), output = output_options();
  for (OptionSpec& t : timing)
    if (t.name == "iters") t.default_value = "50";
    else if (t.name == "warmup") t.default_value = "5";
  specs.insert(specs.end(), timing.begin(), timing.end());
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

const char* access_name(BufferAccess a) {
  switch (a) {
    case BufferAccess::Host: return "host";
    case BufferAccess::HostOrCudaAwareMpi: return "host, device if CUDA-aware MPI";
    case BufferAccess::Device: return "device";
  }
  return "?";
}

void print_list() {
  std::printf("allreduce schemes (--exchange), with the --memory they take:\n");
  for (const ExchangeInfo& e : exchanges())
    if (e.make_allreduce) std::printf("  %-10s [%s] %s\n", e.name.c_str(), access_name(e.access), e.description.c_str());
  std::printf("%s\n", kBusBwRule);
  // Machine-readable for scripts (tests/gpu_options.sh): what --memory device can do here.
  const MpiCudaSupport mpi = mpi_cuda_support();
  std::printf("device memory: %s\n", device_memory_built() ? "built" : "not built (no CUDA)");
  std::printf("CUDA-aware MPI: %s (%s)\n", mpi.run_time ? "yes" : "no", mpi.detail.c_str());
}

// --memory auto: where the scheme's own kind of memory is.
bool on_device(const std::string& memory, const ExchangeInfo& scheme) {
  return memory == "device" || (memory == "auto" && scheme.access == BufferAccess::Device);
}

// Every --exchange x --memory combination must be runnable; the MPI is asked only when needed.
void validate_memory(const ExchangeInfo& scheme, const std::string& memory) {
  const std::string what = std::string("--exchange ").append(scheme.name).append(" --memory ").append(memory);
  const bool device = on_device(memory, scheme);
  if (device && !device_memory_built())
    throw UsageError(std::string(what).append(": this build has no CUDA, so no device memory (use --memory host)"));
  if (!device && scheme.access == BufferAccess::Device)
    throw UsageError(std::string(what).append(": ").append(scheme.name).append(" sums GPU memory only (use --memory device or auto)"));
  if (device && scheme.access == BufferAccess::Host)
    throw UsageError(std::string(what).append(": ").append(scheme.name)
                         .append(" adds on the CPU and needs host memory (GPU memory: nccl, or mpi with a CUDA-aware MPI)"));
  if (device && scheme.access == BufferAccess::HostOrCudaAwareMpi) {
    const MpiCudaSupport mpi = mpi_cuda_support();
    if (!mpi.run_time)
      throw UsageError(std::string(what).append(": this MPI is not CUDA-aware (").append(mpi.detail)
                           .append("): use --exchange nccl or --memory host"));
  }
}

void validate(const Options& o) {
  for (const std::string& name : o.values("exchange"))
    if (!find_exchange(name).make_allreduce)
      throw UsageError("--exchange: '" + name + "' is not an allreduce scheme (hpcnn-scale runs it)");
  for (const std::string& name : o.values("exchange"))
    for (const std::string& memory : o.values("memory")) {
      validate_memory(find_exchange(name), memory);
      for (const std::string& placement : o.values("placement"))
        if (placement == "out" && on_device(memory, find_exchange(name)))
          throw UsageError("--placement out --exchange " + name + " --memory " + memory +
                           ": out of place is measured in host memory only (use --memory host or --placement in)");
    }
  const double available = available_memory_bytes();
  for (const std::string& s : o.values("sizes")) {
    const std::int64_t bytes = parse_bytes(s);
    if (bytes % 4 != 0) throw UsageError("--sizes: '" + s + "' is not a multiple of 4 bytes (floats are summed)");
    // The message, its input and the checked result: three copies per rank, before any allocation.
    const double need = 3.0 * static_cast<double>(bytes);
    if (available > 0 && need > available) {
      char text[160];
      std::snprintf(text, sizeof text, "a rank needs %.1f GiB (the message, its input and the result), this node has %.1f GiB available",
                    need / (1 << 30), available / (1 << 30));
      throw UsageError("--sizes: '" + s + "': " + text);
    }
  }
}

// A point of hpcnn-allreduce, in types.
struct AllreducePoint {
  const ExchangeInfo* scheme = nullptr;
  std::int64_t bytes = 0;
  std::size_t count = 0;  // floats
  bool device = false;    // the message lives in GPU memory
  bool out_of_place = false;  // --placement out: separate send and receive buffers
  std::uint64_t seed = 1;
  int warmup = 0, iters = 0;
  double min_time = 0;  // --min-time: iters grows until the timed calls add up to this
  bool check = true;
};

AllreducePoint allreduce_point(const PointSettings& s) {
  AllreducePoint ap;
  ap.scheme = &find_exchange(s.str("exchange"));
  ap.bytes = parse_bytes(s.str("sizes"));
  ap.count = static_cast<std::size_t>(ap.bytes) / sizeof(float);
  ap.device = on_device(s.str("memory"), *ap.scheme);
  ap.out_of_place = s.str("placement") == "out";
  ap.seed = static_cast<std::uint64_t>(s.integer("seed"));
  ap.warmup = static_cast<int>(s.integer("warmup"));
  ap.iters = static_cast<int>(s.integer("iters"));
  ap.min_time = s.real("min-time");
  ap.check = !s.flag("no-check");
  return ap;
}

// Times of the timed runs (--iters of them, more under --min-time: the count is decided from the
// warm-up calls, or the first timed one without warm-up); `data` gets the last run's result and,
// out of place, `sent` the send buffer as the runs left it (it must still be the input). Set-up
// failures (no GPU, NCCL refusing the placement) fail the point on every rank alike.
std::vector<double> time_allreduce(const AllreducePoint& ap, const std::vector<float>& input, std::vector<float>& data,
                                   std::vector<float>& sent, MPI_Comm comm) {
  std::unique_ptr<MessageBuffer> buffer, send;
  std::unique_ptr<Allreduce> allreduce;
  PointError error;
  try {
    allreduce = ap.scheme->make_allreduce(comm);  // collective: nccl names the rank without a GPU
  } catch (const std::exception& e) {
    error = PointError::from(e);
  }
  agree_on_failure(comm, error);
  try {
    buffer = make_message_buffer(ap.device, ap.count);
    if (ap.out_of_place) send = make_message_buffer(ap.device, ap.count);
  } catch (const std::exception& e) {
    error = PointError::from(e);
  }
  agree_on_failure(comm, error);
  std::vector<double> times, early;  // early: every call until the count is decided
  if (send) send->fill(input);  // out of place: the input stays where it is for every run
  int count = ap.iters;
  for (int k = 0; k < ap.warmup + count; ++k) {
    // In place: restore the input before every run (untimed), so the last run's output is checkable.
    if (!send) buffer->fill(input);
    activity::set_phase("allreduce", k + 1);
    {
      const activity::WaitScope waiting("barrier before an allreduce");
      MPI_Barrier(comm);
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (send)
      allreduce->run_out_of_place(send->data(), buffer->data(), ap.count);
    else
      allreduce->run(buffer->data(), ap.count);  // complete on return, on the device too
    const auto t1 = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    if (k >= ap.warmup) times.push_back(seconds);
    if (k + 1 == std::max(ap.warmup, 1) && ap.min_time > 0) {
      early.push_back(seconds);
      // The first call pays for set-up (connections, registration): left out when there are more.
      const auto from = early.size() > 1 ? early.begin() + 1 : early.begin();
      double sum = 0;
      for (auto it = from; it != early.end(); ++it) sum += *it;
      count = timed_count(ap.iters, ap.min_time, sum / static_cast<double>(early.end() - from), comm);
    } else if (k + 1 < ap.warmup) {
      early.push_back(seconds);
    }
  }
  allreduce.reset();
  buffer->read(data);  // device memory: copied back for the check
  if (send) {
    sent.resize(ap.count);
    send->read(sent);
  }
  return times;
}

// Elements of `data` that differ from the exact sum, plus (out of place) elements of the send
// buffer that differ from the input, over all ranks; the largest difference on this rank.
std::int64_t count_wrong(const AllreducePoint& ap, std::vector<float>& data, const std::vector<float>& sent,
                         const std::vector<float>& input, MPI_Comm comm, double& worst) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Test-only: HPCNN_TEST_CORRUPT_ELEMENT and _SEND (base/fault_injection.hpp) damage an element
  // of the result, or of the send buffer, on the last rank, so the tests can see the checks below
  // fail (tests/scale_suite.sh, tests/allreduce_protocol.sh).
  if (const long i = injected_corruption("ELEMENT"); i >= 0 && rank == size - 1 && static_cast<std::size_t>(i) < ap.count)
    data[static_cast<std::size_t>(i)] += 1.0f;
  std::vector<float> send_after = sent;
  if (const long i = injected_corruption("SEND"); i >= 0 && rank == size - 1 && static_cast<std::size_t>(i) < send_after.size())
    send_after[static_cast<std::size_t>(i)] += 1.0f;
  // Validation, outside the timed loop: every element against the locally computed exact sum.
  std::int64_t wrong = 0;
  worst = 0;
  if (ap.check) {
    for (std::size_t i = 0; i < ap.count; ++i) {
      const float want = allreduce_expected(ap.seed, size, i);
      if (data[i] != want) {
        ++wrong;
        worst = std::max(worst, static_cast<double>(std::abs(data[i] - want)));
      }
    }
    for (std::size_t i = 0; i < send_after.size(); ++i) wrong += send_after[i] != input[i];  // nobody may write it
  }
  std::int64_t wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_INT64_T, MPI_SUM, comm);
  return wrong_all;
}

ResultPoint run_point(const AllreducePoint& ap, MPI_Comm comm, std::int64_t& wrong_total) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) node_float_rates();  // measured once, before the first timed call (recorded below)
  std::vector<float> input(ap.count), data(ap.count);
  for (std::size_t i = 0; i < ap.count; ++i) input[i] = allreduce_input(ap.seed, rank, i);
  std::vector<float> sent;
  const std::vector<double> times = time_allreduce(ap, input, data, sent, comm);
  double worst = 0;
  const std::int64_t wrong_all = count_wrong(ap, data, sent, input, comm, worst);
  wrong_total += wrong_all;
  double mean = 0;
  for (double t : times) mean += t;
  mean /= static_cast<double>(std::max<std::size_t>(times.size(), 1));
  double tmin = 0, tmax = 0, tsum = 0;
  MPI_Reduce(&mean, &tmin, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(&mean, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&mean, &tsum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);

  ResultPoint out;
  out.arrays.push_back(gather_series("iter_time_s", times, comm));
  if (rank != 0) return out;
  // The call's time per iteration is its slowest rank's (every call starts after a barrier): the
  // distribution acceptance verdicts read (iter_p5_s), beside OSU's average below.
  set_slowest_rank_fields(out.record, out.arrays.back());
  const double avg = tsum / size;
  const double algbw = avg > 0 ? static_cast<double>(ap.bytes) / avg * 1e-9 : 0.0;
  Record& r = out.record;
  r.set("suite", std::string("hpcnn-allreduce"));
  r.set("exchange", ap.scheme->name);
  r.set("exchange_memory", std::string(ap.device ? "device" : "host"));
  r.set("placement", std::string(ap.out_of_place ? "out" : "in"));
  r.set("datatype", std::string("float32-sum"));
  r.set("iter_sync", std::string("barrier"));
  r.set("ranks", std::int64_t{size});
  r.set("size_bytes", ap.bytes);
  r.set("node_add_gbps", node_float_rates().add_gbps);
  r.set("node_copy_gbps", node_float_rates().copy_gbps);
  r.set("iters", static_cast<std::int64_t>(times.size()));
  r.set("warmup", std::int64_t{ap.warmup});
  r.set("min_time_s", ap.min_time);
  r.set("seed", static_cast<std::int64_t>(ap.seed));
  r.set("time_avg_us", avg * 1e6);
  r.set("time_min_us", tmin * 1e6);
  r.set("time_max_us", tmax * 1e6);
  r.set("algbw_gbs", algbw);
  r.set("busbw_gbs", algbw * 2.0 * (size - 1) / size);
  if (!ap.check) {
    out.status_reason = "not checked (--no-check)";
  } else {
    r.set("wrong", wrong_all);
    if (wrong_all) {
      out.status = PointStatus::Failed;
      out.status_reason = std::to_string(wrong_all) + " elements differ from the exact sum (rank 0's worst: " +
                          std::to_string(worst) + ")";
    }
  }
  return out;
}

}  // namespace


int run_allreduce_suite(int argc, char** argv) {
  for (int k = 1; k < argc; ++k)
    if (std::strcmp(argv[k], "--links") == 0) return run_link_suite(argc, argv);
  static const std::vector<OptionSpec> options = allreduce_options();
  std::int64_t wrong_total = 0;
  SuiteDef def;
  def.program = "hpcnn-allreduce";
  def.summary =
      "Allreduce micro-benchmark over the exchange schemes of hpcnn-scale: time (average over\n"
      "iterations; avg/min/max over ranks), algorithm and bus bandwidth per message size. Inputs are\n"
      "small integers from (seed, rank, index); every element of the result is compared with the\n"
      "exact sum after the timed loop, and any wrong element makes the run exit 1. --memory device\n"
      "puts the message in GPU memory (copied back for the check): nccl needs it; mpi takes it when\n"
      "the MPI library is CUDA-aware (asked at run time, see --list); ring and rhd need host memory.\n";
  def.options = options;
  def.live_columns = {"exchange", "exchange_memory", "placement", "ranks", "size_bytes", "time_avg_us", "time_min_us", "time_max_us",
                      "algbw_gbs", "busbw_gbs", "wrong"};
  def.table_preamble = std::string("# ") + kProtocol + "\n# " + kBusBwRule + "\n";
  def.print_list = print_list;
  def.default_table = [](const Options&) { return std::string("allreduce"); };
  def.validate = validate;
  def.run_point = [&](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions&, const PointPlace&) {
    return run_point(allreduce_point(PointSettings(o, p)), comm, wrong_total);
  };
  const int status = run_suite(def, argc, argv);
  if (wrong_total > 0) {
    if (is_root_rank())
      std::fprintf(stderr, "hpcnn-allreduce: error: %lld wrong elements (see the wrong column)\n",
                   static_cast<long long>(wrong_total));
    return 1;
  }
  return status;
}

}  // namespace hpcnn
