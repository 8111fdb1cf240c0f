// hpcnn-train --preset: the framework defaults of ref. [5] (docs/EXPERIMENTS.md), and the command-line expansion of
// --preset and --repeat (accuracy_suite.hpp).
#include <cstdlib>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "suites/accuracy_suite.hpp"

namespace hpcnn {

const std::vector<AccuracyPreset>& accuracy_presets() {
  // Ref. [5], Tables II and III (optimizer, base learning rate, batch size, iterations) and IV-V
  // (the default nets, mapped onto the zoo's lenet5 with the activation the framework uses).
  // Epochs = iterations x batch / training images, rounded to whole epochs.
  static const std::vector<AccuracyPreset> list = {
      {"tensorflow-mnist",
       "Adam, lr 0.0001, batch 50, 20,000 iterations / 55,000 images = 18.18 epochs -> 18; conv-ReLU-pool x2, fc-ReLU, fc -> lenet5 relu",
       {{"data", "mnist"}, {"model", "lenet5"}, {"act", "relu"}, {"optimizer", "adam"}, {"lr", "0.0001"},
        {"batch", "50"}, {"epochs", "18"}, {"momentum", "0"}}},
      {"caffe-mnist",
       "SGD, lr 0.01, batch 64, 10,000 iterations = 10.67 epochs -> 11; momentum 0.9, weight decay 0.0005 (lenet_solver; its 'inv' decay not modelled) -> lenet5 relu",
       {{"data", "mnist"}, {"model", "lenet5"}, {"act", "relu"}, {"optimizer", "sgd"}, {"lr", "0.01"},
        {"batch", "64"}, {"epochs", "11"}, {"momentum", "0.9"}, {"weight-decay", "0.0005"}}},
      {"torch-mnist",
       "SGD, lr 0.05, batch 10, 72,000 iterations = 12 epochs, no momentum; Tanh layers -> lenet5 tanh",
       {{"data", "mnist"}, {"model", "lenet5"}, {"act", "tanh"}, {"optimizer", "sgd"}, {"lr", "0.05"},
        {"batch", "10"}, {"epochs", "12"}, {"momentum", "0"}}},
      {"theano-mnist",
       "SGD, lr 0.1, batch 500, 20,000 iterations / 50,000 images = 200 epochs, no momentum; LeNet tutorial (tanh) -> lenet5 tanh",
       {{"data", "mnist"}, {"model", "lenet5"}, {"act", "tanh"}, {"optimizer", "sgd"}, {"lr", "0.1"},
        {"batch", "500"}, {"epochs", "200"}, {"momentum", "0"}}},
      {"tensorflow-cifar10",
       "SGD, lr 0.1, batch 128, 1,000,000 iterations = 2560 epochs, no momentum; conv-ReLU-pool(-LRN) x2, fc-ReLU x2 -> lenet5 relu (no LRN)",
       {{"data", "cifar10"}, {"model", "lenet5"}, {"act", "relu"}, {"optimizer", "sgd"}, {"lr", "0.1"},
        {"batch", "128"}, {"epochs", "2560"}, {"momentum", "0"}}},
      {"caffe-cifar10",
       "SGD, lr 0.001, batch 100, 5,000 iterations = 8+2 epochs (lr x0.1 for the last 2); momentum 0.9, weight decay 0.004 (cifar10_quick) -> lenet5 relu",
       {{"data", "cifar10"}, {"model", "lenet5"}, {"act", "relu"}, {"optimizer", "sgd"}, {"lr", "0.001"},
        {"batch", "100"}, {"epochs", "10"}, {"momentum", "0.9"}, {"weight-decay", "0.004"},
        {"lr-schedule", "step"}, {"lr-step", "8"}}},
      {"torch-cifar10",
       "SGD, lr 0.01 (Table III with Section 4.4.3), batch 1, 2,250,000 iterations = 45 epochs, no momentum; Tanh -> lenet5 tanh",
       {{"data", "cifar10"}, {"model", "lenet5"}, {"act", "tanh"}, {"optimizer", "sgd"}, {"lr", "0.01"},
        {"batch", "1"}, {"epochs", "45"}, {"momentum", "0"}}},
      {"theano-cifar10",
       "SGD, batch 50, 50,000 iterations = 50 epochs, no momentum; Table III leaves its learning rate blank: 0.01 assumed; lenet5 tanh",
       {{"data", "cifar10"}, {"model", "lenet5"}, {"act", "tanh"}, {"optimizer", "sgd"}, {"lr", "0.01"},
        {"batch", "50"}, {"epochs", "50"}, {"momentum", "0"}}},
  };
  return list;
}

namespace {

// Value of --name in args ("--name V" or "--name=V"), its index, or -1.
int find_arg(const std::vector<std::string>& args, const std::string& name, std::string* value) {
  const std::string flag = "--" + name;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == flag) {
      if (value) *value = i + 1 < args.size() ? args[i + 1] : std::string();
      return static_cast<int>(i);
    }
    if (args[i].rfind(flag + "=", 0) == 0) {
      if (value) *value = args[i].substr(flag.size() + 1);
      return static_cast<int>(i);
    }
  }
  return -1;
}

const AccuracyPreset* find_preset(const std::string& name) {
  for (const AccuracyPreset& p : accuracy_presets())
    if (name == p.name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string names;
  for (const AccuracyPreset& p : accuracy_presets()) names.append(names.empty() ? "" : ", ").append(p.name);
  return names;
}

}  // namespace

bool preset_list_requested(const std::vector<std::string>& args) {
  std::string preset;
  return find_arg(args, "preset", &preset) >= 0 && preset == "list";
}

std::vector<std::string> expand_accuracy_args(const std::vector<std::string>& in) {
  std::vector<std::string> args = in;
  std::string value;
  if (find_arg(args, "preset", &value) >= 0) {
    const AccuracyPreset* preset = find_preset(value);
    if (!preset) throw UsageError("--preset: unknown preset '" + value + "' (" + preset_names() + ")");
    for (const auto& [name, v] : preset->settings)
      if (find_arg(args, name, nullptr) < 0) {
        args.push_back("--" + name);
        args.push_back(v);
      }
  }
  const int at = find_arg(args, "repeat", &value);
  if (at >= 0) {
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 1000)
      throw UsageError("--repeat: '" + value + "' is not an integer in [1, 1000]");
    args.erase(args.begin() + at, args.begin() + at + (args[static_cast<std::size_t>(at)] == "--repeat" ? 2 : 1));
    std::string seed = "1";
    const int seed_at = find_arg(args, "seed", &seed);
    if (seed.find(',') != std::string::npos) throw UsageError("--repeat: give one --seed (the first of the repeats), not a list");
    const long long first = std::strtoll(seed.c_str(), &end, 10);
    if (seed.empty() || *end != '\0' || first < 0) throw UsageError("--seed: '" + seed + "' is not a non-negative integer");
    std::string list;
    for (long k = 0; k < n; ++k) list.append(list.empty() ? "" : ",").append(std::to_string(first + k));
    if (seed_at >= 0) {
      args.erase(args.begin() + seed_at, args.begin() + seed_at + (args[static_cast<std::size_t>(seed_at)] == "--seed" ? 2 : 1));
    }
    args.push_back("--seed");
    args.push_back(list);
  }
  return args;
}

}  // namespace hpcnn
