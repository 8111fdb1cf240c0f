#include "suites/simulate_suite.hpp"

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/errors.hpp"
#include "base/program_path.hpp"
#include "collectives/exchange.hpp"
#include "collectives/float_rates.hpp"
#include "engine/buckets.hpp"
#include "engine/models.hpp"
#include "harness/resources.hpp"
#include "harness/signals.hpp"
#include "harness/suite_runner.hpp"
#include "harness/sweep.hpp"
#include "harness/synthetic_data.hpp"
#include "results/result_file.hpp"
#include "simulate/analytic.hpp"
#include "simulate/platform.hpp"
#include "suites/suite_options.hpp"

namespace hpcnn {

namespace {

namespace fs = std::filesystem;

// configure's smpirun (HPCNN_SMPIRUN), else the first on PATH.
const char* configured_smpirun() {
#ifdef HPCNN_SMPIRUN
  return HPCNN_SMPIRUN;
#else
  return "smpirun";
#endif
}

const char* const kProgram = "hpcnn-simulate";

// ---- options ---------------------------------------------------------------------------------

std::vector<OptionSpec> simulate_options() {
  std::vector<OptionSpec> specs = {
      {"compute", OptType::String, false, "", "FILE",
       "a measured hpcnn-train or hpcnn-scale result file of the node to simulate: its point of --model and --batch "
       "gives the forward, backward and update times of a step (required)"},
      {"model", OptType::String, true, "lenet5", "LIST", "model (its graph gives the gradient buckets)"},
      {"batch", OptType::Int, true, "64", "LIST", "mini-batch per worker (the measured point's)", {}, 1, 1e6},
      {"exchange", OptType::String, true, "ring", "LIST", "exchange schemes (see --list)"},
      {"ps-servers", OptType::Int, true, "1", "LIST", "parameter-server ranks (ps-sync, ps-async)", {}, 1, 1e6},
      {"bucket-mb", OptType::Float, true, "4", "LIST", "gradient bucket size in MiB (0: one bucket), as hpcnn-scale's",
       {}, 0, 1e6},
      {"nodes", OptType::Int, true, "1,2,4,8,16,32,64", "LIST", "simulated nodes", {}, 1, 65536},
      {"ranks-per-node", OptType::Int, true, "1", "LIST", "ranks (workers and servers) per node", {}, 1, 1024},
      {"topology", OptType::Choice, true, "fat-tree", "LIST",
       "network: fat-tree (two levels, full bisection), dragonfly, torus (3-D) or flat (one switch)",
       "fat-tree|dragonfly|torus|flat"},
      {"link-gbps", OptType::Float, true, "25", "LIST", "link bandwidth per direction, Gb/s", {}, 1e-3, 1e6},
      {"latency-us", OptType::Float, true, "1", "LIST", "link latency per hop, microseconds", {}, 0, 1e6},
      {"loopback-gbps", OptType::Float, false, "200", "X", "bandwidth between the ranks of one node, Gb/s", {}, 1e-3, 1e7},
      {"fit-link", OptType::String, false, "", "FILE",
       "an hpcnn-allreduce result of the user's network (--exchange ring at 2 ranks on 2 hosts, several --sizes): the "
       "link's latency and bandwidth are fitted from it instead of --link-gbps and --latency-us"},
      {"platform", OptType::String, false, "", "FILE",
       "a SimGrid platform file of the user's own (instead of --topology and the link options): its hosts in order"},
      {"network-model", OptType::Choice, true, "ideal", "LIST",
       "ideal: a message takes latency + size / bandwidth (SimGrid's CM02: max-min sharing of links, no TCP "
       "window bound, no acknowledgement traffic); smpi: with "
       "SimGrid's SMPI correction factors (fitted on another cluster)",
       "ideal|smpi"},
      {"steps", OptType::Int, false, "2", "N", "timed steps", {}, 1, 1000},
      {"warmup", OptType::Int, false, "1", "N", "untimed steps first", {}, 0, 1000},
      {"add-gbps", OptType::Float, false, "0", "X",
       "rate the node sums gradients at, GB/s of floats summed (0: the rate the --compute or --fit-link file "
       "recorded for the measured node, else measured on this machine at the start)", {}, 0, 1e6},
      {"copy-gbps", OptType::Float, false, "0", "X",
       "rate the node copies gradients at, GB/s of floats copied; also the memory rate of the backward pass's "
       "split over the layers (0: as for --add-gbps)", {}, 0, 1e6},
      {"smpirun", OptType::String, false, configured_smpirun(), "PATH",
       "SimGrid's smpirun: that of the SimGrid the rank program was built against (another version's cannot load it)"},
      {"sim-timeout", OptType::Float, false, "3600", "S", "a simulation running longer than this fails its point", {}, 1, 1e7},
      {"exchange-alone", OptType::Choice, false, "yes", "yes|no",
       "after the steps, also simulate one step's exchange alone, without the backward pass (comm_s, and the "
       "overlap figure from it); no halves the wall time of a point whose exchange dominates it (the parameter "
       "servers and --allreduce-sizes have none either way)",
       "yes|no"},
      {"allreduce-sizes", OptType::String, true, "", "LIST",
       "instead of training steps, hpcnn-allreduce's timed call (a barrier, then one blocking allreduce) of these "
       "message sizes (K, M: binary): the points a measured hpcnn-allreduce is checked against"},
  };
  const std::vector<OptionSpec> output = output_options();
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

// The rank program next to this executable: the build tree's simulate/, or PREFIX/lib/hpcnn.
std::string rank_program() {
  if (const char* env = std::getenv("HPCNN_SIMULATE_RANK"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (const fs::path& candidate : {exe.parent_path() / "simulate" / "hpcnn-simulate-rank.so",
                                    exe.parent_path() / ".." / "lib" / "hpcnn" / "hpcnn-simulate-rank.so"})
    if (fs::exists(candidate, ec)) return candidate.string();
  return {};
}

// The CPU-clock interposer beside the rank program (simulate/sim_cpu_clock.cpp says why smpirun
// gets it), or "" where the build has none: a simulation then runs the same, only slower.
std::string cpu_clock_library() {
  const std::string rank = rank_program();
  std::error_code ec;
  const fs::path library = fs::path(rank).parent_path() / "hpcnn-simulate-cpuclock.so";
  if (rank.empty() || !fs::exists(library, ec)) return {};
  // LD_PRELOAD splits its list at spaces and colons: such a path cannot be preloaded.
  const std::string path = fs::absolute(library).string();
  return path.find_first_of(" :") == std::string::npos ? path : std::string();
}

// This process's environment for smpirun, with the CPU-clock interposer preloaded first.
std::vector<std::string> smpirun_environment() {
  std::vector<std::string> env;
  std::string preload = cpu_clock_library();
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (var.rfind("LD_PRELOAD=", 0) != 0) env.push_back(var);
    else if (var.size() > 11) preload += (preload.empty() ? "" : ":") + var.substr(11);
  }
  if (!preload.empty()) env.push_back("LD_PRELOAD=" + preload);
  return env;
}

bool on_path(const std::string& program) { return !program_path(program).empty(); }

// Whether the SimGrid of this smpirun was built by packaging/build_simgrid.sh with hpcnn's fixes to
// its kernel (simgrid_fixes.py): the script leaves PREFIX/share/hpcnn/simgrid-fixes behind.
bool simgrid_has_hpcnn_fixes(const std::string& smpirun) {
  const std::string path = program_path(smpirun);
  std::error_code ec;
  return !path.empty() && fs::exists(fs::path(path).parent_path().parent_path() / "share/hpcnn/simgrid-fixes", ec);
}

// ---- the measured node -----------------------------------------------------------------------

struct NodeCompute {
  std::string file, model, backend, dataset;
  int batch = 0, image = 32, channels = 3, classes = 10;
  double forward_s = 0, backward_s = 0, update_s = 0;
  double before_s = 0;   // the rest of a measured step (loading the batch, the loop's bookkeeping): load_s
  double img_per_s = 0;  // of one rank alone: the efficiency's baseline
  // An hpcnn-scale allreduce point's update_s holds the averaging of the gradients (a scale by
  // 1 / workers), which the simulated exchange charges itself: run_training_point takes it out.
  bool update_holds_averaging = false;
};

// The order in which a compute file's points are taken: a training run's own (pure compute), then
// hpcnn-scale's allreduce points, then a parameter server's (refused: no optimizer on its workers);
// fewest ranks first.
// Whether a record's scheme runs parameter servers, by the registry (a scheme this build lacks,
// nccl without CUDA, is an allreduce).
bool parameter_server_point(const Record& r) {
  for (const ExchangeInfo& e : exchanges())
    if (e.name == r.text("exchange")) return e.parameter_server;
  return false;
}

std::tuple<int, int, double> compute_preference(const Record& r) {
  const bool scale = r.text("suite") == "hpcnn-scale";
  return {scale, scale && parameter_server_point(r), r.number("ranks").value_or(1e9)};
}

// An hpcnn-scale point's phases hold exchange work besides the node's compute: the exchange's calls
// during backward (bucket starts, progress and their sums), taken out by backward_compute_s, and
// the averaging in update_s (NodeCompute::update_holds_averaging). A parameter server's workers
// run no optimizer at all (the servers do): nothing in the point is the node's update.
void split_scale_compute(const Record& r, NodeCompute& c, const std::string& what) {
  if (parameter_server_point(r))
    throw UsageError("--compute " + what + " is " + r.text("exchange") + "'s, whose workers apply no optimizer (the servers do): "
                     "give an hpcnn-train point or an allreduce point of hpcnn-scale");
  const std::optional<double> backward = r.number("backward_compute_s");
  if (!backward)
    throw UsageError("--compute " + what + " has no backward_compute_s, so its backward_s cannot be told from the "
                     "exchange's work during it: give an hpcnn-train point or an hpcnn-scale point that records it");
  c.backward_s = *backward;
  c.update_holds_averaging = true;
}

NodeCompute node_compute(const std::string& file, const std::string& model, int batch) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw UsageError("--compute: no result file '" + file + "'");
  const ResultRun run = read_result_file(file);  // RuntimeError for a damaged file
  const Record* best = nullptr;
  for (const ResultPoint& p : run.points) {
    const Record& r = p.record;
    const std::string suite = r.text("suite");
    if ((suite != "hpcnn-train" && suite != "hpcnn-scale") || r.text("model") != model ||
        r.number("batch").value_or(0) != batch || r.get("epochs") || r.text("status") != "ok")
      continue;
    if (!best || compute_preference(r) < compute_preference(*best)) best = &r;
  }
  if (!best)
    throw UsageError("--compute " + file + ": no training point of " + model + " at batch " + std::to_string(batch) +
                     " with status ok (hpcnn-train or hpcnn-scale on synthetic data)");
  NodeCompute c;
  c.file = file, c.model = model, c.batch = batch;
  c.backend = best->text("backend");
  c.dataset = best->text("dataset");
  for (const char* field : {"forward_s", "backward_s", "update_s", "img_per_s"})
    if (!best->number(field))
      throw UsageError("--compute " + file + ": the point of " + model + " at batch " + std::to_string(batch) + " has no " +
                       field + ": a simulation needs the phases of a training step");
  c.forward_s = *best->number("forward_s"), c.backward_s = *best->number("backward_s"), c.update_s = *best->number("update_s");
  if (best->text("suite") == "hpcnn-scale") split_scale_compute(*best, c, file + ": the point of " + model + " at batch " + std::to_string(batch));
  c.before_s = best->number("load_s").value_or(0) + std::max(0.0, best->number("other_s").value_or(0));
  const DatasetShape shape = dataset_shape(c.dataset);  // UsageError for a real data set's name
  c.channels = shape.sample.c, c.classes = shape.classes;
  c.image = static_cast<int>(best->number("image_size").value_or(shape.sample.h));
  // One rank's rate: the point's own when it ran alone, else its recorded baseline, else its phases.
  // At the median pace where the file has it: the phases simulated are medians too, so the
  // efficiency compares like with like.
  const double ranks = best->number("ranks").value_or(1);
  c.img_per_s = ranks == 1 ? best->number("img_per_s_median").value_or(*best->number("img_per_s"))
                           : best->number("baseline_img_per_s").value_or(batch / (c.forward_s + c.backward_s + c.update_s));
  return c;
}

// Seconds per float of the simulated node's add and copy, and whose rates they are.
struct NodeRates {
  double add_s = 0, copy_s = 0;
  std::string from;
};

// The rates a result file's points recorded (the first point that has them; 0 where none does).
FloatRates recorded_rates(const std::string& path) {
  FloatRates r;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return r;
  for (const ResultPoint& p : read_result_file(path).points) {
    if (r.add_gbps <= 0) r.add_gbps = p.record.number("node_add_gbps").value_or(0);
    if (r.copy_gbps <= 0) r.copy_gbps = p.record.number("node_copy_gbps").value_or(0);
  }
  return r;
}

// The node's add and copy rates: the options', else the measured node's own (its --compute file,
// or the --fit-link file, records them), else this machine's, measured now. A projection charges
// the rates of the node that was measured, not those of the machine that runs the simulation.
NodeRates node_rates(const Options& o) {
  double add = o.real("add-gbps"), copy = o.real("copy-gbps");
  std::string add_from = add > 0 ? "options" : "", copy_from = copy > 0 ? "options" : "";
  for (const char* option : {"compute", "fit-link"}) {
    if (!o.has(option) || o.str(option).empty() || (add > 0 && copy > 0)) continue;
    const FloatRates r = recorded_rates(o.str(option));
    const std::string from = std::string("--") + option + " " + o.str(option);
    if (add <= 0 && r.add_gbps > 0) add = r.add_gbps, add_from = from;
    if (copy <= 0 && r.copy_gbps > 0) copy = r.copy_gbps, copy_from = from;
  }
  if (add <= 0 || copy <= 0) {
    const FloatRates here = measure_float_rates();
    if (add <= 0) add = here.add_gbps, add_from = "this machine";
    if (copy <= 0) copy = here.copy_gbps, copy_from = "this machine";
  }
  NodeRates rates;
  rates.add_s = sizeof(float) / (add * 1e9);
  rates.copy_s = sizeof(float) / (copy * 1e9);
  rates.from = add_from == copy_from ? add_from : "add: " + add_from + "; copy: " + copy_from;
  return rates;
}

// ---- one simulation --------------------------------------------------------------------------

struct SimPoint {
  NodeCompute node;
  std::string exchange;
  bool parameter_server = false;
  int servers = 0, nodes = 1, ranks_per_node = 1, ranks = 1, workers = 1;
  double bucket_mb = 4;
  PlatformSpec spec;
  std::string platform_file;  // the user's, or "" for a generated one
  std::optional<double> link_fit_error;  // with --fit-link: the fitted line's worst relative error
  std::string network_model;
  int steps = 2, warmup = 1;
  NodeRates rates;
  std::string smpirun;
  double timeout_s = 3600;
  bool exchange_alone = true;  // also simulate the exchange without the backward pass (comm_s)
  LibraryVersions* libraries = nullptr;  // the run's provenance: gets the SimGrid that ran the point
};

// What the simulation needs beyond its shared buffers: per rank a stack, SimGrid's bookkeeping and
// the scheme's requests (measured at 0.1-0.4 MiB per rank: 1.3-1.6 GB at 4096 ranks, docs/SIMULATION.md's
// cost table); shared, a few copies of the parameters. An overestimate: a point it lets start fits.
double estimated_bytes(const SimPoint& s, std::size_t params) {
  constexpr double kPerRank = 512.0 * 1024, kStack = 256.0 * 1024;
  return s.ranks * (kPerRank + kStack) + 8.0 * static_cast<double>(params) * sizeof(float) + 256.0 * 1024 * 1024;
}

std::string shell_arg(const std::string& key, const std::string& value) { return key + "=" + value; }
std::string number_arg(const std::string& key, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return key + "=" + buf;
}

// The process group's proportional set size (shared buffers counted once), MiB.
double group_pss_mib(pid_t group) {
  double kib = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (getpgid(pid) != group) continue;
    std::ifstream in(entry.path() / "smaps_rollup");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Pss:", 0) == 0) kib += std::stod(line.substr(4));
  }
  return kib / 1024.0;
}

struct SimRun {
  std::map<std::string, std::string> report;
  double wall_s = 0, pss_mib = 0;
};

// The kernel's limit on a process's memory maps (vm.max_map_count), or "unknown".
std::string max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::string value;
  return in >> value ? value : "unknown";
}

// What a failed smpirun said: SimGrid's first error or critical message (a platform it cannot
// parse, say) without its "[time] file:line: [category/ERROR]" prefix, else the log's last line.
// Each simulated rank maps the shared buffers itself (ResNet-50 with 4 MiB buckets: about 21 maps
// per rank), so from a few thousand ranks on the process can run out of maps: that gets the fix.
std::string smpirun_complaint(const std::string& log_path) {
  std::ifstream log(log_path);
  std::string line, last, first_error;
  bool out_of_maps = false;
  while (std::getline(log, line)) {
    for (const char* tag : {"/ERROR] ", "/CRITICAL] "}) {
      const auto at = line.find(tag);
      if (first_error.empty() && at != std::string::npos) first_error = line.substr(at + std::strlen(tag));
    }
    if (line.find("amount of mappings allowed") != std::string::npos) out_of_maps = true;
    if (!line.empty()) last = line;
  }
  if (out_of_maps)
    return first_error + ": its ranks' buffers need more memory maps than vm.max_map_count (" + max_map_count() +
           ") allows a process; raise it (sysctl -w vm.max_map_count=262144, as root)";
  if (!first_error.empty()) return first_error;
  return last.empty() ? "nothing in its log" : last;
}

// smpirun ARGS in `dir`, stderr to dir/smpirun.log, killed after timeout_s. Its report, or a
// RuntimeError with the reason (the report's error line, or smpirun's last words).
SimRun run_smpirun(const std::vector<std::string>& args, const std::string& dir, const std::string& report, double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  // The child runs in `dir`: a relative --smpirun must be resolved here.
  std::vector<std::string> command = args;
  if (command[0].find('/') != std::string::npos) command[0] = fs::absolute(command[0]).string();
  // Everything the child needs is built before the fork: between fork and exec it only makes
  // system calls.
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> environment = smpirun_environment();
  std::vector<char*> envp;
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string log_path = dir + "/smpirun.log";
  std::fflush(nullptr);  // the child must not write this process's buffered output again
  const pid_t child = fork();
  if (child < 0) throw RuntimeError("cannot start smpirun");
  if (child == 0) {
    setpgid(0, 0);
    // One descriptor for both streams, so that the log keeps their order.
    const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (log < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) _exit(127);
    if (chdir(dir.c_str()) != 0) _exit(127);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  setpgid(child, child);
  SimRun run;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    run.pss_mib = std::max(run.pss_mib, group_pss_mib(child));
    // A stop signal (Ctrl-C, a batch system's time limit) ends the simulation now, not when the
    // point is done (it can take an hour): smpirun's process group is its own, so the terminal's
    // Ctrl-C does not reach it. The point is simulated again on --resume.
    if (const int sig = stop_signal()) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      throw PointFailure(PointStatus::Interrupted, "signal " + std::to_string(sig) + " stopped the simulation");
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
      kill(-child, SIGKILL);
      waitpid(child, &status, 0);
      throw RuntimeError("the simulation ran longer than --sim-timeout " + std::to_string(static_cast<long>(timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream in(report);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) run.report[line.substr(0, eq)] = line.substr(eq + 1);
    else if (line == "end") run.report["end"] = "1";
  }
  if (run.report.count("error")) throw RuntimeError("simulated rank: " + run.report["error"]);
  if (!run.report.count("end")) {
    throw RuntimeError("smpirun exited " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                       " without a report: " + smpirun_complaint(dir + "/smpirun.log"));
  }
  return run;
}

// A scratch folder for one simulation's platform, hostfile and report, removed however it ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "hpcnn-simulate-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw RuntimeError("cannot create a scratch folder in " + fs::temp_directory_path().string());
    path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<std::string> smpirun_args(const SimPoint& s, const std::string& platform, const std::string& hostfile,
                                      const std::string& report) {
  std::vector<std::string> a = {s.smpirun, "-np", std::to_string(s.ranks), "-platform", platform, "-hostfile", hostfile,
                                // the ranks share their globals (the exchange code keeps none that matter):
                                // one copy of the program instead of one per rank
                                "-no-privatize",
                                "--log=root.thresh:warning", "--cfg=smpi/simulate-computation:no",
                                "--cfg=smpi/shared-malloc:local", "--cfg=smpi/test:0", "--cfg=smpi/iprobe:0",
                                "--cfg=smpi/grow-injected-times:no", "--cfg=contexts/stack-size:256",
                                "--cfg=smpi/send-is-detached-thresh:0"};
  // MPI_Allreduce (hpcnn-allreduce's mpi call) picks its algorithm by size as Open MPI's tuned
  // component does (SimGrid's default is a reduce, then a broadcast of the whole buffer). Only the
  // allreduce: with every collective Open MPI's (smpi/coll-selector:ompi), the set-up's collectives
  // made a 256-node simulation 15x slower, and one rank failed (a send to a rank that does not exist).
  a.push_back("--cfg=smpi/allreduce:ompi");
  // ideal: latency + size / bandwidth, links shared max-min fairly (SimGrid's CM02 model instead of
  // smpirun's SMPI model, whose sharing weighs each flow by its route's latency plus 8775 bytes over
  // the links' bandwidth), no TCP window bound on a flow (network/TCP-gamma: 4 MiB / (2 x its
  // latency) by default), and no share of the opposite direction for acknowledgements (SimGrid's
  // cross-traffic takes 5% of it): a link's bandwidth is what messages get, as measured with both
  // directions loaded (--fit-link) or as a fabric's data rate is quoted.
  if (s.network_model == "ideal")
    a.insert(a.end(), {"--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0", "--cfg=smpi/lat-factor:0:1",
                       "--cfg=smpi/bw-factor:0:1", "--cfg=network/crosstraffic:0"});
  a.push_back(rank_program());
  a.push_back(shell_arg("report", report));
  return a;
}

// The hosts of the user's platform, in order (a probe run of one rank).
std::vector<std::string> platform_hosts(const std::string& smpirun, const std::string& platform) {
  ScratchDir dir;
  const std::string report = dir.path + "/report";
  SimPoint probe;
  probe.smpirun = smpirun;
  probe.ranks = 1;
  probe.network_model = "smpi";
  std::vector<std::string> args = {smpirun, "-np", "1", "-platform", fs::absolute(platform).string(),
                                   "--log=root.thresh:error", rank_program(), shell_arg("report", report), "probe=1"};
  SimRun run;
  try {
    run = run_smpirun(args, dir.path, report, 120);
  } catch (const PointFailure&) {
    throw;
  } catch (const RuntimeError& e) {
    throw UsageError("--platform " + platform + ": SimGrid cannot load it (" + e.what() + ")");
  }
  std::vector<std::string> hosts;
  std::ifstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("host=", 0) == 0) hosts.push_back(line.substr(5));
  return hosts;
}

// ---- the point -------------------------------------------------------------------------------

AnalyticNetwork analytic_network(const SimPoint& s) {
  AnalyticNetwork net;
  net.latency_s = s.spec.link.latency_s * route_hops(s.spec.topology, s.nodes);
  net.seconds_per_byte = 1.0 / s.spec.link.bandwidth_bps;
  net.add_s_per_float = s.rates.add_s;
  return net;
}

// Where and how a point was simulated, and what the simulation cost.
void set_platform_fields(Record& r, const SimPoint& s, const SimRun& run, const Platform* generated) {
  r.set("nodes", std::int64_t{s.nodes});
  r.set("ranks_per_node", std::int64_t{s.ranks_per_node});
  r.set("topology", s.platform_file.empty() ? std::string(topology_name(s.spec.topology)) : std::string("file"));
  r.set("link_gbps", s.spec.link.bandwidth_bps * 8e-9);
  r.set("link_latency_us", s.spec.link.latency_s * 1e6);
  if (s.link_fit_error) r.set("link_fit_error", 100.0 * *s.link_fit_error);
  r.set("network_model", s.network_model);
  r.set("simulated_platform", generated ? generated->name : s.platform_file);
  if (!s.node.file.empty()) r.set("simulated_from", s.node.file);
  r.set("node_add_gbps", sizeof(float) / s.rates.add_s * 1e-9);
  r.set("node_copy_gbps", sizeof(float) / s.rates.copy_s * 1e-9);
  r.set("node_rates_from", s.rates.from);
  r.set("sim_wall_s", run.wall_s);
  r.set("sim_pss_mib", run.pss_mib);
  if (const auto it = run.report.find("cpu_clock_interposed"); it != run.report.end())
    r.set("sim_cpu_clock_interposed", std::int64_t{it->second == "1"});
}

void set_record(Record& r, const SimPoint& s, const SimRun& run, const Platform* generated, std::size_t params,
                const std::vector<double>& bucket_bytes) {
  const std::size_t buckets = bucket_bytes.size();
  auto fig = [&run](const char* key) { return std::stod(run.report.at(key)); };
  const double iter = fig("iter_median_s");
  const int global_batch = s.node.batch * s.workers;
  r.set("suite", std::string(kProgram));
  r.set("model", s.node.model);
  r.set("backend", s.node.backend);
  r.set("dataset", s.node.dataset);
  r.set("mode", std::string("train"));
  r.set("batch", std::int64_t{s.node.batch});
  r.set("image_size", std::int64_t{s.node.image});
  r.set("ranks", std::int64_t{s.ranks});
  r.set("workers", std::int64_t{s.workers});
  r.set("ps_servers", std::int64_t{s.servers});
  r.set("exchange", s.exchange);
  r.set("exchange_memory", std::string("host"));
  r.set("scaling", std::string("weak"));
  r.set("global_batch", std::int64_t{global_batch});
  r.set("bucket_mb", s.bucket_mb);
  r.set("buckets", static_cast<std::int64_t>(buckets));
  r.set("params", static_cast<std::int64_t>(params));
  r.set("iters", std::int64_t{s.steps});
  r.set("warmup", std::int64_t{s.warmup});
  r.set("img_per_s", iter > 0 ? global_batch / iter : 0.0);
  r.set("iter_median_s", iter);
  r.set("iter_min_s", fig("iter_min_s"));
  r.set("iter_max_s", fig("iter_max_s"));
  for (const char* phase : {"load_s", "forward_s", "backward_s", "comm_wait_s", "update_s"}) r.set(phase, fig(phase));
  if (const double comm = fig("comm_s"); comm > 0) {
    r.set("comm_s", comm);
    r.set("overlap", std::clamp((comm - fig("comm_wait_s")) / comm, 0.0, 1.0));
  }
  r.set("bytes_sent", static_cast<std::int64_t>(fig("bytes_sent")));
  r.set("bytes_received", static_cast<std::int64_t>(fig("bytes_received")));
  r.set("baseline_img_per_s", s.node.img_per_s);
  r.set("linear_img_per_s", s.node.img_per_s * s.workers);
  if (iter > 0) r.set("efficiency", global_batch / iter / (s.node.img_per_s * s.workers));
  set_platform_fields(r, s, run, generated);
  const AnalyticNetwork net = analytic_network(s);
  r.set("analytic_comm_s", analytic_exchange_seconds(s.exchange, s.workers, s.servers, bucket_bytes, net));
}

// ---- checks before any simulation -----------------------------------------------------------

int most(const Options& o, const char* option) {
  int m = 0;
  for (const std::string& v : o.values(option)) m = std::max(m, std::stoi(v));
  return m;
}

void check_exchanges(const Options& o, bool allreduce) {
  for (const std::string& e : o.values("exchange")) {
    const ExchangeInfo& scheme = find_exchange(e);  // UsageError for unknown names
    if (!scheme.simulated)
      throw UsageError("--exchange " + e + ": not simulated (the simulated schemes: " + simulated_exchange_names() + ")");
    if (allreduce && !scheme.make_allreduce)
      throw UsageError("--allreduce-sizes with --exchange " + e + ": a parameter server is not an allreduce");
  }
}

std::vector<std::string> checked_platform_hosts(const Options& o, int nodes) {
  std::error_code ec;
  if (!fs::is_regular_file(o.str("platform"), ec)) throw UsageError("--platform: no file '" + o.str("platform") + "'");
  std::vector<std::string> hosts = platform_hosts(o.str("smpirun"), o.str("platform"));
  if (static_cast<int>(hosts.size()) < nodes)
    throw UsageError("--platform " + o.str("platform") + " has " + std::to_string(hosts.size()) + " hosts, --nodes " +
                     std::to_string(nodes) + " asked for");
  return hosts;
}

// The largest simulation of the run must fit in this machine's memory.
void check_memory(int ranks, std::size_t floats, const std::string& what) {
  SimPoint largest;
  largest.ranks = ranks;
  const double need = estimated_bytes(largest, floats), have = available_memory_bytes();
  if (have > 0 && need > 0.8 * have)
    throw UsageError(std::to_string(ranks) + " simulated ranks of " + what + " need about " +
                     std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB, more than the " +
                     std::to_string(static_cast<long long>(0.8 * have / (1 << 20))) +
                     " MiB this machine can give (80% of MemAvailable)");
}

// The settings every simulated point has: scheme, ranks, network, run.
SimPoint sim_point(const Options& o, const PointSettings& ps, const NodeRates& rates, const std::optional<FittedLink>& fitted) {
  SimPoint s;
  s.exchange = ps.str("exchange");
  s.parameter_server = find_exchange(s.exchange).parameter_server;
  s.servers = s.parameter_server ? static_cast<int>(ps.integer("ps-servers")) : 0;
  s.nodes = static_cast<int>(ps.integer("nodes"));
  s.ranks_per_node = static_cast<int>(ps.integer("ranks-per-node"));
  s.ranks = s.nodes * s.ranks_per_node;
  s.workers = s.ranks - s.servers;
  if (s.workers < 1)  // a node count of the sweep too small for the servers: this point only
    throw PointFailure(PointStatus::Skipped, std::to_string(s.servers) + " parameter server(s) leave no worker among " +
                                                 std::to_string(s.ranks) + " ranks");
  s.bucket_mb = ps.real("bucket-mb");
  s.spec.topology = parse_topology(ps.str("topology"));
  s.spec.nodes = s.nodes;
  s.spec.ranks_per_node = s.ranks_per_node;
  s.spec.link = fitted ? link_over_route(*fitted, route_hops(s.spec.topology, s.nodes))
                       : Link{ps.real("latency-us") * 1e-6, ps.real("link-gbps") * 1e9 / 8};
  if (fitted) s.link_fit_error = fitted->worst_fit_error;
  s.spec.loopback_bandwidth_bps = o.real("loopback-gbps") * 1e9 / 8;
  s.platform_file = o.str("platform");
  s.network_model = ps.str("network-model");
  s.steps = static_cast<int>(o.integer("steps"));
  s.warmup = static_cast<int>(o.integer("warmup"));
  s.rates = rates;
  s.smpirun = o.str("smpirun");
  s.timeout_s = o.real("sim-timeout");
  s.exchange_alone = o.str("exchange-alone") == "yes";
  return s;
}

// SimGrid's version, as the rank program reported it, whether build_simgrid.sh fixed its kernel,
// and the smpirun that ran it, in the run's provenance (which keeps a library's first entry).
void record_simgrid(const SimPoint& s, const SimRun& run) {
  const auto version = run.report.find("simgrid_version");
  if (s.libraries && version != run.report.end())
    s.libraries->push_back({"SimGrid", version->second + (simgrid_has_hpcnn_fixes(s.smpirun) ? " with hpcnn's fixes" : "") +
                                            " (" + s.smpirun + ")"});
}

// One smpirun of the rank program with `program_args`, on the point's platform.
SimRun simulate(const SimPoint& s, const std::vector<std::string>& user_hosts, const std::vector<std::string>& program_args,
                std::optional<Platform>& generated) {
  ScratchDir dir;
  std::string platform = dir.path + "/platform.xml", hostfile = dir.path + "/hosts";
  if (s.platform_file.empty()) {
    generated = make_platform(s.spec);
    std::ofstream(platform) << generated->xml;
    std::ofstream(hostfile) << generated->hostfile;
  } else {
    platform = fs::absolute(s.platform_file).string();
    std::ofstream(hostfile) << hostfile_for(user_hosts, s.nodes, s.ranks_per_node);
  }
  const std::string report = dir.path + "/report";
  std::vector<std::string> args = smpirun_args(s, platform, hostfile, report);
  args.insert(args.end(), program_args.begin(), program_args.end());
  args.push_back(number_arg("add_s", s.rates.add_s));
  args.push_back(number_arg("copy_s", s.rates.copy_s));
  try {
    SimRun run = run_smpirun(args, dir.path, report, s.timeout_s);
    record_simgrid(s, run);
    return run;
  } catch (const PointFailure&) {
    throw;
  } catch (const RuntimeError& e) {
    throw PointFailure(PointStatus::Failed, e.what());
  }
}

ResultPoint run_training_point(const Options& o, const PointSettings& ps, SimPoint s, const std::vector<std::string>& user_hosts) {
  s.node = node_compute(o.str("compute"), ps.str("model"), static_cast<int>(ps.integer("batch")));
  ModelConfig mc;
  mc.input = {1, s.node.channels, s.node.image, s.node.image};
  mc.classes = s.node.classes;
  const Graph graph = build_model(s.node.model, mc);
  const GradientBuckets buckets(graph, s.bucket_mb * 1024.0 * 1024.0);
  std::vector<double> bucket_bytes;
  for (const Bucket& b : buckets.buckets()) bucket_bytes.push_back(static_cast<double>(b.count * sizeof(float)));
  // The simulated update scales every gradient by 1 / workers at the add rate (SimBackend::scale).
  if (s.node.update_holds_averaging)
    s.node.update_s = std::max(0.0, s.node.update_s - static_cast<double>(graph.param_count()) * s.rates.add_s);
  std::optional<Platform> generated;
  const SimRun run = simulate(s, user_hosts,
                              {shell_arg("model", s.node.model), number_arg("image", s.node.image),
                               number_arg("channels", s.node.channels), number_arg("classes", s.node.classes),
                               number_arg("batch", s.node.batch), shell_arg("exchange", s.exchange),
                               number_arg("servers", s.servers), number_arg("bucket_mb", s.bucket_mb),
                               shell_arg("optimizer", "sgd"), number_arg("warmup", s.warmup), number_arg("steps", s.steps),
                               number_arg("load_s", s.node.before_s), number_arg("forward_s", s.node.forward_s),
                               number_arg("backward_s", s.node.backward_s), number_arg("update_s", s.node.update_s),
                               number_arg("alone", s.exchange_alone ? 1 : 0)},
                              generated);
  ResultPoint out;
  set_record(out.record, s, run, generated ? &*generated : nullptr, graph.param_count(), bucket_bytes);
  return out;
}

// hpcnn-allreduce's point (--allreduce-sizes): one blocking allreduce of the message, as it times it.
ResultPoint run_allreduce_point(const PointSettings& ps, SimPoint s, const std::vector<std::string>& user_hosts) {
  const std::int64_t bytes = parse_bytes(ps.str("allreduce-sizes"));
  std::optional<Platform> generated;
  const SimRun run = simulate(s, user_hosts,
                              {number_arg("allreduce", static_cast<double>(bytes)), shell_arg("exchange", s.exchange),
                               number_arg("warmup", s.warmup), number_arg("steps", s.steps)},
                              generated);
  const double t = std::stod(run.report.at("iter_median_s"));
  ResultPoint out;
  Record& r = out.record;
  r.set("suite", std::string(kProgram));
  r.set("exchange", s.exchange);
  r.set("exchange_memory", std::string("host"));
  r.set("placement", std::string("in"));
  r.set("datatype", std::string("float32-sum"));
  r.set("ranks", std::int64_t{s.ranks});
  r.set("size_bytes", bytes);
  r.set("iters", std::int64_t{s.steps});
  r.set("warmup", std::int64_t{s.warmup});
  r.set("iter_median_s", t);
  r.set("time_avg_us", t * 1e6);
  const double algbw = t > 0 ? static_cast<double>(bytes) / t * 1e-9 : 0.0;
  r.set("algbw_gbs", algbw);
  r.set("busbw_gbs", algbw * 2.0 * (s.ranks - 1) / s.ranks);
  r.set("bytes_sent", static_cast<std::int64_t>(std::stod(run.report.at("bytes_sent"))));
  set_platform_fields(r, s, run, generated ? &*generated : nullptr);
  // A blocking MPI_Allreduce is the better of ring and recursive halving-doubling for its size, as a
  // tuned MPI chooses; the other schemes their own cost.
  const AnalyticNetwork net = analytic_network(s);
  const std::vector<double> one = {static_cast<double>(bytes)};
  r.set("analytic_comm_s", s.exchange == "mpi" ? std::min(analytic_exchange_seconds("ring", s.ranks, 0, one, net),
                                                          analytic_exchange_seconds("rhd", s.ranks, 0, one, net))
                                               : analytic_exchange_seconds(s.exchange, s.ranks, 0, one, net));
  return out;
}

ResultPoint run_point(const Options& o, const SweepPoint& p, const NodeRates& rates, const std::optional<FittedLink>& fitted,
                      const std::vector<std::string>& user_hosts, LibraryVersions& libraries) {
  const PointSettings ps(o, p);
  SimPoint s = sim_point(o, ps, rates, fitted);
  s.libraries = &libraries;
  return ps.str("allreduce-sizes").empty() ? run_training_point(o, ps, s, user_hosts) : run_allreduce_point(ps, s, user_hosts);
}

}  // namespace

int run_simulate_suite(int argc, char** argv) {
  static const std::vector<OptionSpec> options = simulate_options();
  SuiteDef def;
  def.program = kProgram;
  def.summary =
      "Data-parallel training of a measured node simulated on a network of any size (SimGrid SMPI): every rank of\n"
      "the simulated platform runs the exchange scheme's own code (--list names them) on the real\n"
      "gradient buckets of the model, with the node's forward, backward and update times from a measured result\n"
      "file (--compute). One point per model, exchange, node count and network; the records carry hpcnn-scale's\n"
      "figures (images/s, efficiency against the node, phases, bytes, overlap) and the alpha-beta estimate of the\n"
      "exchange (analytic_comm_s), so hpcnn-summary --table scaling shows them beside measured points.\n"
      "hpcnn-simulate --compute results/hpcnn-train-node.h5 --model resnet50 --batch 64 --exchange ring,rhd \\\n"
      "    --nodes 1,4,16,64,256,1024,4096 --topology fat-tree --link-gbps 100\n";
  def.options = options;
  def.live_columns = {"model", "exchange", "topology", "nodes", "ranks", "link_gbps", "img_per_s", "efficiency",
                      "comm_wait_s", "comm_s", "analytic_comm_s", "sim_wall_s"};
  NodeRates rates;
  std::optional<FittedLink> fitted;
  std::vector<std::string> user_hosts;  // --platform's hosts, in order
  def.print_list = [] {
    const std::string so = rank_program();
    std::printf("simulated exchange schemes: %s (mpi as Open MPI's libnbc runs an in-place MPI_Iallreduce: binomial "
                "reduce and broadcast)\n", simulated_exchange_names().c_str());
    std::printf("topologies: fat-tree, dragonfly, torus, flat\n");
    std::printf("rank program: %s\n", so.empty() ? "none (this build has no SimGrid: configure --with-simgrid)" : so.c_str());
    if (!so.empty()) {
      const std::string clock = cpu_clock_library();
      std::printf("CPU-clock interposer preloaded into smpirun: %s\n",
                  clock.empty() ? "none beside the rank program (simulations run slower, with the same figures)" : clock.c_str());
    }
  };
  def.default_table = [](const Options& o) {
    return std::string(o.has("allreduce-sizes") ? "simulated-allreduce" : "simulation");
  };
  def.validate = [&rates, &fitted, &user_hosts](const Options& o) {
    const bool allreduce = o.has("allreduce-sizes");
    if (!allreduce && !o.has("compute"))
      throw UsageError("--compute FILE is required: a measured result file of the node to simulate");
    if (rank_program().empty())
      throw UsageError("this build has no simulator: configure found no SimGrid (Debian: libsimgrid-dev; --with-simgrid)");
    if (!on_path(o.str("smpirun"))) throw UsageError("--smpirun: '" + o.str("smpirun") + "' is not an executable (Debian: libsimgrid-dev)");
    check_exchanges(o, allreduce);
    if (o.has("platform") && o.has("fit-link")) throw UsageError("--platform and --fit-link: the platform file has its own links");
    const int ranks = most(o, "nodes") * most(o, "ranks-per-node");
    if (o.has("platform")) user_hosts = checked_platform_hosts(o, most(o, "nodes"));
    if (allreduce) {
      std::int64_t largest = 0;
      for (const std::string& size : o.values("allreduce-sizes")) {
        const std::int64_t bytes = parse_bytes(size);
        if (bytes % static_cast<std::int64_t>(sizeof(float)) != 0)
          throw UsageError("--allreduce-sizes: " + size + " is not a whole number of floats");
        largest = std::max(largest, bytes);
      }
      check_memory(ranks, static_cast<std::size_t>(largest) / sizeof(float), "an allreduce of " + std::to_string(largest) + " B");
    } else {
      // Every model and batch must be in the compute file, and the largest simulation must fit in
      // this machine's memory, before any simulation.
      for (const std::string& m : o.values("model")) {
        find_model(m);
        for (const std::string& b : o.values("batch")) {
          const NodeCompute c = node_compute(o.str("compute"), m, std::stoi(b));
          ModelConfig mc;
          mc.input = {1, c.channels, c.image, c.image};
          mc.classes = c.classes;
          check_memory(ranks, build_model(m, mc).param_count(), m);
        }
      }
    }
    rates = node_rates(o);
    if (o.has("fit-link")) {
      const ResultRun run = read_result_file(o.str("fit-link"));
      std::vector<Record> rows;
      for (const ResultPoint& p : run.points) rows.push_back(p.record);
      // The measured calls' adds ran at the rate of the nodes that made them, when they recorded it.
      const double measured_add_gbps = recorded_rates(o.str("fit-link")).add_gbps;
      fitted = fit_link(rows, measured_add_gbps > 0 ? sizeof(float) / (measured_add_gbps * 1e9) : rates.add_s,
                        "--fit-link " + o.str("fit-link"));
    }
  };
  def.run_point = [&rates, &fitted, &user_hosts](const Options& o, const SweepPoint& p, MPI_Comm, LibraryVersions& libraries,
                                                 const PointPlace&) {
    return run_point(o, p, rates, fitted, user_hosts, libraries);
  };
  return run_suite(def, argc, argv);
}

}  // namespace hpcnn
