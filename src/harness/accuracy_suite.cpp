// Real-data training with accuracy (issue 5). One sweep point = one training run of `epochs`
// epochs: the training set is sharded over the ranks and reshuffled every epoch (data/sampler.hpp),
// batches come from the background loader (data/batch_loader.hpp), gradients of several ranks are
// averaged (weighted by their batch sizes, so a short last batch counts right), and after every
// epoch the whole test set is evaluated in inference mode by a separate Mode::Infer network given
// the training network's parameters and buffers (batch-norm running statistics), as PyTorch's
// model.eval() evaluates. A NaN or Inf loss ends the point with
// status "diverged"; the sweep goes on.
#include "harness/accuracy_suite.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>

#include "config.h"
#include "data/batch_loader.hpp"
#include "data/dataset.hpp"
#include "data/sampler.hpp"
#include "engine/errors.hpp"
#include "engine/models.hpp"
#include "engine/network.hpp"
#include "harness/main_wrapper.hpp"
#include "harness/model_suite.hpp"
#include "harness/optimizer.hpp"
#include "harness/provenance.hpp"
#include "harness/stats.hpp"
#include "harness/suite_runner.hpp"

namespace hpcnn {

const std::vector<AccuracyPreset>& accuracy_presets() {
  // Paper 004, Tables II and III (optimizer, base learning rate, batch size, iterations) and IV-V
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

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

std::vector<OptionSpec> accuracy_options() {
  std::vector<OptionSpec> specs;
  for (const OptionSpec& s : model_options(Mode::Train))
    if (s.name != "dataset") specs.push_back(s);  // the data set is --data here
  const std::vector<OptionSpec> mine = {
      {"epochs", OptType::Int, true, "1", "LIST", "training epochs (each value a sweep point)", {}, 1, 1e7},
      {"seed", OptType::Int, true, "1", "LIST", "seeds of initialization, shuffling and augmentation (each a point)", {}, 0, 9.0e18},
      {"repeat", OptType::Int, false, "1", "N", "run every point with N seeds: --seed S becomes S,S+1,...,S+N-1", {}, 1, 1000},
      {"data", OptType::String, false, "fashion-mnist", "DIR|NAME",
       "real data set: a directory of MNIST-style idx files (gzipped or not) or CIFAR-10/100 binary files, or a name "
       "(mnist|fashion-mnist|cifar10|cifar100) looked up in $HPCNN_DATA/NAME and /usr/share/datasets/NAME"},
      {"preset", OptType::String, false, "", "NAME", "framework default settings of paper 004 (see --list); options given win"},
      {"eval-every", OptType::Int, false, "0", "N", "also evaluate the test set every N optimizer steps (0: after each epoch only)", {}, 0, 1e12},
      {"lr-schedule", OptType::Choice, false, "constant", "NAME",
       "constant; step: x0.1 every --lr-step epochs; cosine: half cosine to 0 over all steps", "constant|step|cosine"},
      {"lr-step", OptType::Int, false, "30", "N", "epochs between the x0.1 steps of --lr-schedule step", {}, 1, 1e7},
      {"augment", OptType::Flag, false, "", "", "random crop (padding 4) and horizontal flip of training images (CIFAR)"},
      {"no-shuffle", OptType::Flag, false, "", "", "keep the files' order instead of reshuffling every epoch"},
      {"cache", OptType::Flag, false, "", "", "keep every decoded sample in memory after its first use"},
      {"prefetch", OptType::Int, false, "2", "N", "batches the background loader decodes ahead (0: decode in the training loop)", {}, 0, 64},
      {"test-batch", OptType::Int, false, "", "N", "images per evaluation batch (default: --batch)", {}, 1, 1 << 20},
      {"train-limit", OptType::Int, false, "", "N", "use only the first N training images", {}, 1, 1e12},
      {"test-limit", OptType::Int, false, "", "N", "evaluate only the first N test images", {}, 1, 1e12},
  };
  specs.insert(specs.end(), mine.begin(), mine.end());
  const std::vector<OptionSpec> output = output_options();
  specs.insert(specs.end(), output.begin(), output.end());
  return specs;
}

void print_list() {
  print_model_list();
  std::printf("real data sets (--data NAME, or --data DIR):\n");
  for (const char* name : {"mnist", "fashion-mnist", "cifar10", "cifar100"}) {
    std::string where;
    try {
      where = data::locate_dataset(name).dir;
    } catch (const std::exception&) {
      where = "not found (" + data::dataset_search_dirs(name).front() + ", ...)";
    }
    std::printf("  %-16s %s\n", name, where.c_str());
  }
  std::printf("presets (--preset NAME; paper 004 Tables II-V; options given on the command line win):\n");
  for (const AccuracyPreset& p : accuracy_presets()) {
    std::string settings;
    for (const auto& [k, v] : p.settings) settings.append(" --").append(k).append(" ").append(v);
    std::printf("  %-20s%s\n  %-20s %s\n", p.name, settings.c_str(), "", p.source);
  }
}

// The data set, read once per run (every point of a sweep shares it).
struct LoadedData {
  data::DataSet set;
  data::Normalization norm;
  double load_s = 0;
};

// Networks of one kind for every batch size met (the full batch and the short last one), sharing
// one graph and backend. Parameters and buffers are copied in before use.
class NetworkSet {
 public:
  NetworkSet(Backend& backend, const Graph& graph, Mode mode, std::uint64_t seed, bool fuse_relu)
      : backend_(backend), graph_(graph), mode_(mode), seed_(seed), fuse_relu_(fuse_relu) {}
  Network& get(int batch) {
    std::unique_ptr<Network>& net = nets_[batch];
    if (!net) {
      NetworkOptions no;
      no.batch = batch;
      no.mode = mode_;
      no.seed = seed_;
      no.fuse_relu = fuse_relu_;
      net = std::make_unique<Network>(backend_, graph_, no);
    }
    return *net;
  }

 private:
  Backend& backend_;
  const Graph& graph_;
  Mode mode_;
  std::uint64_t seed_;
  bool fuse_relu_;
  std::map<int, std::unique_ptr<Network>> nets_;
};

struct Evaluation {
  double loss = 0, acc = 0, seconds = 0;
};

// Test-set evaluation, sharded over the ranks like training (without shuffling). Collective.
class Evaluator {
 public:
  Evaluator(Backend& backend, const Graph& graph, const data::ImageSet& test, const data::Normalization& norm,
            const data::PipelineOptions& pipeline, int batch, std::uint64_t seed, bool fuse_relu, MPI_Comm comm)
      : backend_(backend),
        nets_(backend, graph, Mode::Infer, seed, fuse_relu),
        loader_(test, norm, pipeline),
        comm_(comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    batches_ = data::rank_batches(data::epoch_order(test.size(), seed, 0, false), batch, rank, size);
    count_ = test.size();
  }
  // Batch-norm models normalize with the running statistics in `buffers` (Network::get_buffers of
  // the training network). Every rank's come from its own shard of the training batches: all ranks
  // evaluate with rank 0's, as PyTorch's DistributedDataParallel broadcasts rank 0's buffers.
  Evaluation run(const std::vector<float>& params, std::vector<float> buffers) {
    const auto t0 = Clock::now();
    if (!buffers.empty()) MPI_Bcast(buffers.data(), static_cast<int>(buffers.size()), MPI_FLOAT, 0, comm_);
    loader_.start_epoch(0, batches_);
    double sums[2] = {0, 0};  // loss x images, correct
    std::map<int, bool> loaded;
    for (std::size_t k = 0; k < batches_.size(); ++k) {
      const data::Batch b = loader_.next(nullptr);
      if (b.size == 0) continue;
      Network& net = nets_.get(b.size);
      if (!loaded[b.size]) {
        net.set_params(params);
        net.set_buffers(buffers);
        loaded[b.size] = true;
      }
      net.set_input(b.images.data(), b.labels.data());
      const float loss = net.forward();
      sums[0] += double(loss) * b.size;
      sums[1] += static_cast<double>(net.correct());
    }
    backend_.synchronize();
    double seconds = since(t0);
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm_);
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm_);
    Evaluation e;
    e.loss = sums[0] / double(count_);
    e.acc = 100.0 * sums[1] / double(count_);
    e.seconds = seconds;
    return e;
  }

 private:
  Backend& backend_;
  NetworkSet nets_;
  data::BatchLoader loader_;
  MPI_Comm comm_;
  std::vector<std::vector<std::uint32_t>> batches_;
  std::size_t count_ = 0;
};

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Array make_array(const char* name, const char* unit, const std::vector<double>& values) {
  Array a;
  a.name = name;
  a.unit = unit;
  a.dims = {values.size()};
  a.data = values;
  return a;
}

ResultPoint run_point(const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libraries,
                      const LoadedData& data) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const data::ImageSet& train = data.set.train;
  const data::ImageSet& test = data.set.test;
  const auto seed = static_cast<std::uint64_t>(p.integer("seed"));
  const int epochs = static_cast<int>(p.integer("epochs"));

  ModelPoint mp;
  mp.model = p.str("model");
  mp.backend = p.str("backend");
  mp.dataset = data.set.name;
  const int image_size = o.has("image-size") ? static_cast<int>(o.integer("image-size")) : train.height;
  mp.sample = {1, train.channels, image_size, image_size};
  mp.classes = train.classes;
  mp.batch = static_cast<int>(p.integer("batch"));
  mp.threads = static_cast<int>(p.integer("threads"));
  set_point_settings(mp, o, p);
  const int test_batch = o.has("test-batch") ? static_cast<int>(o.integer("test-batch")) : mp.batch;
  const Graph graph = build_point_graph(mp, p, true);
  std::unique_ptr<Backend> backend = make_point_backend(mp, libraries);

  data::PipelineOptions pipe;
  pipe.out_size = image_size;
  pipe.cache = o.flag("cache");
  pipe.prefetch = static_cast<int>(o.integer("prefetch"));
  pipe.seed = seed;
  data::PipelineOptions train_pipe = pipe;
  train_pipe.augment = o.flag("augment");
  data::BatchLoader loader(train, data.norm, train_pipe);
  Evaluator evaluator(*backend, graph, test, data.norm, pipe, test_batch, seed, mp.fuse_relu, comm);

  NetworkSet nets(*backend, graph, Mode::Train, seed, mp.fuse_relu);
  Network& main = nets.get(mp.batch);
  const std::size_t count = main.param_count();
  const OptimizerSettings settings = optimizer_settings(o, p);
  Optimizer optimizer(*backend, count, settings);
  const std::string schedule = o.str("lr-schedule");
  const long step_epochs = static_cast<long>(o.integer("lr-step"));
  const long steps_per_epoch = static_cast<long>(data::steps_per_epoch(train.size(), mp.batch, size));
  const long total_steps = steps_per_epoch * epochs;
  const long eval_every = static_cast<long>(o.integer("eval-every"));
  const bool shuffle = !o.flag("no-shuffle");

  std::vector<double> train_loss, train_acc, test_loss, test_acc, epoch_time, test_time, load_wait;
  std::vector<double> eval_step, eval_loss, eval_acc;
  long step = 0, diverged_step = -1;
  std::vector<float> host_grads;
  for (int epoch = 0; epoch < epochs && diverged_step < 0; ++epoch) {
    const auto t0 = Clock::now();
    double waited = 0, eval_seconds = 0;
    double epoch_sums[3] = {0, 0, 0};  // loss x images, correct, images (all ranks)
    loader.start_epoch(static_cast<std::uint64_t>(epoch),
                       data::rank_batches(data::epoch_order(train.size(), seed, epoch, shuffle), mp.batch, rank, size));
    for (long k = 0; k < steps_per_epoch; ++k) {
      double w = 0;
      const data::Batch b = loader.next(&w);
      waited += w;
      Network* net = &main;
      double local[3] = {0, 0, double(b.size)};
      if (b.size > 0) {
        net = &nets.get(b.size);
        if (net != &main) {  // the short last batch: main's parameters and running statistics
          net->set_params(main.get_params());
          net->set_buffers(main.get_buffers());
        }
        net->set_input(b.images.data(), b.labels.data());
        const float loss = net->forward();
        net->backward();
        if (net != &main) main.set_buffers(net->get_buffers());  // its statistics update counts too
        local[0] = double(loss) * b.size;
        local[1] = static_cast<double>(net->correct());
      }
      double global[3] = {local[0], local[1], local[2]};
      if (size > 1) MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, comm);
      ++step;
      if (!std::isfinite(global[0])) {
        diverged_step = step;
        break;
      }
      if (size > 1) {
        // Mean gradient of the global batch: each rank's batch-mean gradient weighted by its
        // share of the images (a rank without images this step contributes zero).
        if (b.size > 0) host_grads = net->get_grads();
        else host_grads.assign(count, 0.0f);
        const float weight = static_cast<float>(double(b.size) / global[2]);
        for (float& g : host_grads) g *= weight;
        MPI_Allreduce(MPI_IN_PLACE, host_grads.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
        backend->copy_to_device(net->grads(), host_grads.data(), count * sizeof(float));
      }
      optimizer.set_lr(scheduled_lr(schedule, settings.lr, step - 1, steps_per_epoch, total_steps, step_epochs));
      optimizer.step(main.params(), net->grads());
      for (int i = 0; i < 3; ++i) epoch_sums[i] += global[i];
      if (eval_every > 0 && step % eval_every == 0) {
        const Evaluation e = evaluator.run(main.get_params(), main.get_buffers());
        eval_seconds += e.seconds;
        eval_step.push_back(double(step));
        eval_loss.push_back(e.loss);
        eval_acc.push_back(e.acc);
      }
    }
    backend->synchronize();
    double seconds = since(t0) - eval_seconds;
    if (size > 1) MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    epoch_time.push_back(seconds);
    load_wait.push_back(waited);
    if (diverged_step >= 0) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      train_loss.push_back(nan);
      train_acc.push_back(epoch_sums[2] > 0 ? 100.0 * epoch_sums[1] / epoch_sums[2] : nan);
      test_loss.push_back(nan);
      test_acc.push_back(nan);
      test_time.push_back(0.0);
      break;
    }
    train_loss.push_back(epoch_sums[0] / epoch_sums[2]);
    train_acc.push_back(100.0 * epoch_sums[1] / epoch_sums[2]);
    const Evaluation e = evaluator.run(main.get_params(), main.get_buffers());
    test_loss.push_back(e.loss);
    test_acc.push_back(e.acc);
    test_time.push_back(e.seconds);
  }

  ResultPoint out;
  out.arrays.push_back(make_array("epoch_train_loss", "", train_loss));
  out.arrays.push_back(make_array("epoch_train_acc", "%", train_acc));
  out.arrays.push_back(make_array("epoch_test_loss", "", test_loss));
  out.arrays.push_back(make_array("epoch_test_acc", "%", test_acc));
  out.arrays.push_back(make_array("epoch_time_s", "s", epoch_time));
  out.arrays.push_back(make_array("epoch_test_time_s", "s", test_time));
  out.arrays.push_back(make_array("epoch_load_wait_s", "s", load_wait));
  if (eval_every > 0) {
    out.arrays.push_back(make_array("eval_step", "", eval_step));
    out.arrays.push_back(make_array("eval_test_loss", "", eval_loss));
    out.arrays.push_back(make_array("eval_test_acc", "%", eval_acc));
  }
  double rss = peak_rss_mib(), max_rss = 0;
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank != 0) return out;

  Record& r = out.record;
  const int done = diverged_step >= 0 ? static_cast<int>(epoch_time.size()) - 1 : static_cast<int>(epoch_time.size());
  double train_total = 0, wait_total = 0;
  for (double t : epoch_time) train_total += t;
  for (double t : load_wait) wait_total += t;
  r.set("suite", std::string("hpcnn-train"));
  r.set("model", mp.model);
  r.set("backend", mp.backend);
  r.set("dataset", mp.dataset);
  r.set("mode", std::string("train"));
  r.set("batch", std::int64_t{mp.batch});
  r.set("threads", std::int64_t{backend->threads()});
  r.set("ranks", std::int64_t{size});
  r.set("image_size", std::int64_t{image_size});
  r.set("classes", std::int64_t{mp.classes});
  r.set("params", static_cast<std::int64_t>(graph.param_count()));
  r.set("seed", static_cast<std::int64_t>(seed));
  set_settings_fields(r, mp);
  r.set("data_dir", data.set.dir);
  r.set("data_format", data.set.format);
  r.set("train_size", static_cast<std::int64_t>(train.size()));
  r.set("test_size", static_cast<std::int64_t>(test.size()));
  r.set("preset", o.has("preset") ? o.str("preset") : std::string());
  r.set("optimizer", settings.kind);
  r.set("lr", p.real("lr"));  // as given, not rounded to float
  r.set("momentum", double(settings.momentum));
  r.set("weight_decay", double(settings.weight_decay));
  r.set("lr_schedule", schedule);
  r.set("lr_step", static_cast<std::int64_t>(step_epochs));
  r.set("epochs", std::int64_t{epochs});
  r.set("epochs_done", std::int64_t{done});
  r.set("steps", static_cast<std::int64_t>(diverged_step >= 0 ? diverged_step - 1 : step));
  r.set("diverged_step", static_cast<std::int64_t>(diverged_step));
  r.set("augment", std::int64_t{o.flag("augment") ? 1 : 0});
  r.set("cache", std::int64_t{o.flag("cache") ? 1 : 0});
  r.set("prefetch", o.integer("prefetch"));
  r.set("test_batch", std::int64_t{test_batch});
  r.set("test_eval", std::string("inference"));  // batch-norm models too: running statistics
  r.set("train_loss", train_loss.back());
  r.set("train_acc", train_acc.back());
  r.set("test_loss", test_loss.back());
  r.set("test_acc", test_acc.back());
  r.set("epoch_s", median_of(epoch_time));
  r.set("test_s", test_time.back());
  r.set("train_time_s", train_total);
  r.set("load_wait_s", wait_total);
  r.set("data_load_s", data.load_s);
  r.set("img_per_s", train_total > 0 ? double(train.size()) * done / train_total : 0.0);
  r.set("peak_rss_mib", max_rss);
  if (diverged_step >= 0) {
    r.set("status", std::string("diverged"));
    r.set("status_reason", "diverged: loss NaN or Inf at step " + std::to_string(diverged_step) + " (epoch " +
                               std::to_string(epoch_time.size()) + ")");
  } else {
    r.set("status", std::string("ok"));
  }
  return out;
}

}  // namespace

float scheduled_lr(const std::string& schedule, float base, long step, long steps_per_epoch, long total_steps,
                   long step_epochs) {
  if (schedule == "step") {
    const long epoch = steps_per_epoch > 0 ? step / steps_per_epoch : 0;
    return static_cast<float>(base * std::pow(0.1, double(epoch / std::max(1L, step_epochs))));
  }
  if (schedule == "cosine" && total_steps > 0)
    return static_cast<float>(0.5 * base * (1.0 + std::cos(M_PI * double(step) / double(total_steps))));
  return base;
}

bool wants_accuracy_suite(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* name : {"--data", "--preset", "--epochs"})
      if (a == name || a.rfind(std::string(name) + "=", 0) == 0) return true;
  }
  return false;
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

int run_accuracy_suite(const char* program, int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::string preset;
  if (find_arg(args, "preset", &preset) >= 0 && preset == "list") {
    if (is_root_rank()) print_list();
    return 0;
  }
  args = expand_accuracy_args(args);
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);

  auto loaded = std::make_shared<std::unique_ptr<LoadedData>>();
  SuiteDef def;
  def.program = program;
  def.summary =
      "Training on a real data set (--data): per epoch the training loss and accuracy, the test loss and\n"
      "accuracy (inference mode, whole test set), the epoch time and the test time. Lists sweep (batch, lr,\n"
      "epochs, optimizer, seed); a point whose loss becomes NaN or Inf is recorded as diverged and the sweep\n"
      "goes on. Data sets: MNIST/Fashion-MNIST idx files (gzipped or not), CIFAR-10/100 binary files.";
  def.options = accuracy_options();
  def.live_columns = {"model", "backend", "dataset", "batch", "lr", "optimizer", "epochs", "seed",
                      "train_acc", "test_acc", "epoch_s", "test_s"};
  def.print_list = print_list;
  def.validate = [](const Options& o) {
    validate_model_names(o);
    data::locate_dataset(o.str("data"));  // a missing data set is a usage error, before any work
  };
  def.run_point = [loaded](const Options& o, const SweepPoint& p, MPI_Comm comm, LibraryVersions& libs) {
    if (!*loaded) {
      auto d = std::make_unique<LoadedData>();
      const auto t0 = Clock::now();
      d->set = data::load_dataset(o.str("data"));
      if (o.has("train-limit")) d->set.train.truncate(static_cast<std::size_t>(o.integer("train-limit")));
      if (o.has("test-limit")) d->set.test.truncate(static_cast<std::size_t>(o.integer("test-limit")));
      d->norm = data::channel_stats(d->set.train);
      d->load_s = since(t0);
      *loaded = std::move(d);
    }
    return run_point(o, p, comm, libs, **loaded);
  };
  return run_suite(def, static_cast<int>(args.size()), ptrs.data());
}

}  // namespace hpcnn
