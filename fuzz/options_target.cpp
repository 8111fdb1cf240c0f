// Fuzz target: the option parser (parse_options, src/harness/options.hpp) and the sweep built from
// what it accepts (sweep_points). Input: the arguments after the program name, each ended by a
// NUL byte (a command line cannot hold NUL bytes). The table below has every kind of spec the
// suites use: typed lists with defaults, bounded numbers, threads, choices, flags, a repeatable
// option and positional arguments.
// Expected outcomes: options, or UsageError naming the bad option or value.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "fuzz/fuzz_input.hpp"
#include "harness/options.hpp"
#include "harness/sweep.hpp"

namespace {

using hpcnn::OptionSpec;
using hpcnn::OptType;

const std::vector<OptionSpec>& table() {
  static const std::vector<OptionSpec> specs = {
      {"model", OptType::String, true, "lenet5", "LIST", "models"},
      {"dataset", OptType::Choice, true, "cifar10", "LIST", "data set shape", "mnist|cifar10|imagenet"},
      {"batch", OptType::Int, true, "64", "LIST", "images per iteration", {}, 1, 1 << 20},
      {"threads", OptType::Threads, true, "default", "LIST", "threads"},
      {"lr", OptType::Float, true, "0.01", "LIST", "learning rate", {}, 0, 1e6},
      {"momentum", OptType::Float, false, "0.9", "X", "SGD momentum", {}, 0, 1},
      {"iters", OptType::Int, false, "100", "N", "timed iterations", {}, 1, 1e9},
      {"seed", OptType::Int, false, "1", "N", "seed", {}, 0, 9.0e18},
      {"layout", OptType::Choice, false, "auto", "NAME", "layout", "auto|nchw|nhwc"},
      {"where", OptType::String, false, "", "F=V,...", "filter", {}, -1e300, 1e300, true},
      {"output", OptType::String, false, "results", "DIR", "directory of the result file"},
      {"quiet", OptType::Flag, false, "", "", "print nothing but errors"},
      {"files", OptType::String, false, "", "FILE|DIR", "result files", {}, -1e300, 1e300, false, true},
  };
  return specs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"hpcnn-fuzz"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != 0) {
      current += static_cast<char>(data[i]);
      continue;
    }
    args.push_back(current);
    current.clear();
  }
  if (!current.empty()) args.push_back(current);  // an unterminated last argument still counts
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    const hpcnn::Options options = hpcnn::parse_options(table(), static_cast<int>(argv.size()), argv.data());
    (void)options.effective();
    (void)options.command_line();
    const std::vector<hpcnn::SweepPoint> points = hpcnn::sweep_points(options, table());
    hpcnn::fuzz::expect(!points.empty(), "a sweep has a point");
    for (const hpcnn::SweepPoint& p : points) (void)hpcnn::PointSettings(options, p).integer("batch");
  } catch (const hpcnn::UsageError&) {
  }
  return 0;
}
