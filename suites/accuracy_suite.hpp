// hpcnn-train on real data (--data): epoch-based training with train and test loss and accuracy
// per epoch, epoch and test time, sweeps over batch, lr, epochs, optimizer and seeds (--repeat),
// divergence recorded per point, and --preset for the framework defaults of ref. [5]
// (docs/EXPERIMENTS.md; Tables II-V). suites/hpcnn-train.cpp dispatches here when the command
// line asks for real data.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hpcnn {

// True when argv holds --data, --preset or --epochs (real-data training).
bool wants_accuracy_suite(int argc, char** argv);

// Collective over MPI_COMM_WORLD; call inside suite_main(). Returns the exit status.
int run_accuracy_suite(const char* program, int argc, char** argv);

// A framework's default MNIST or CIFAR-10 training settings (ref. [5] Tables II-V), mapped onto
// the model zoo: option -> value pairs added to the command line unless given there.
struct AccuracyPreset {
  const char* name;    // "caffe-mnist"
  const char* source;  // what the paper says and how it maps here
  std::vector<std::pair<std::string, std::string>> settings;
};
const std::vector<AccuracyPreset>& accuracy_presets();

// The command line with --preset and --repeat expanded (exposed for tests): preset settings are
// appended unless the option is given; --repeat N becomes --seed S,S+1,...,S+N-1. UsageError for
// an unknown preset or --repeat together with a --seed list.
std::vector<std::string> expand_accuracy_args(const std::vector<std::string>& args);

// True when the command line asks for the list of presets (--preset list).
bool preset_list_requested(const std::vector<std::string>& args);

// Learning rate of optimizer step `step` (0-based) of `total_steps`, `steps_per_epoch` per epoch.
float scheduled_lr(const std::string& schedule, float base, long step, long steps_per_epoch, long total_steps,
                   long step_epochs);

}  // namespace hpcnn
