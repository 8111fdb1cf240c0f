// The executor: instantiates a Graph on a Backend for one batch size and mode, owns activations,
// gradients, the parameter/gradient buffers and the non-trainable buffers (BN running statistics), and runs forward and backward node by node.
// Backward reports each gradient bucket as soon as it is complete, so an exchange scheme can start
// communicating it while backward continues. Single-threaded use; one Network per sweep point.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend.hpp"
#include "engine/buckets.hpp"
#include "engine/graph.hpp"
#include "engine/memory_plan.hpp"

namespace hpcnn {

struct NetworkOptions {
  int batch = 1;
  Mode mode = Mode::Train;
  std::uint64_t seed = 1;    // parameter initialization and dropout masks
  bool input_grad = false;   // also compute d(loss)/d(input) (tests)
  bool profile_ops = false;  // time every op (synchronizing the device around each)
  // Let the backend fuse a ReLU into the Conv, BatchNorm, FullyConnected or Add that is its only
  // input and whose only consumer it is, and in inference a BatchNorm into the Conv before it
  // (Backend::make_fused_op). Outputs before the last fused node are then never materialized:
  // read_output/read_output_grad refuse them. In inference also a residual Add [-> ReLU] into the
  // Conv [-> BatchNorm] that produces one of its inputs, written over the other (Epilogue::add).
  bool fuse_relu = true;
  // Liveness-based memory plan (memory_plan.hpp): activations, gradients and gradient scratch
  // share one arena, a buffer's bytes reused once no later forward or backward reads its value
  // (Op::backward_reads). read_output/read_output_grad then refuse the values not kept to the end
  // of the step. false: every buffer on its own (the comparison and the tests' oracle).
  bool memory_plan = true;
};

// The bytes of the activations, gradients and gradient scratch the executor owns (the network
// input and its gradient aside; the ops' own workspaces aside).
struct ActivationMemory {
  std::size_t planned_bytes = 0;    // allocated: the plan's arena, or every buffer on its own
  std::size_t unplanned_bytes = 0;  // every buffer on its own (256-byte aligned)
  std::size_t bound_bytes = 0;      // the most bytes whose values are live at one step
};

// Time spent in one op over the calls since the last reset_profile().
struct OpProfile {
  int node = 0;
  std::string name;      // node name, e.g. "layer1.0.conv1"
  std::string kind;      // op_kind_name(), with "_backward" for the backward entry
  double seconds = 0.0;  // summed over calls
  std::int64_t calls = 0;
  std::vector<int> fused;  // nodes this op computes too (epilogue fusion: folded BN, ReLU)
};

class Network {
 public:
  Network(Backend& backend, const Graph& graph, const NetworkOptions& options);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const Graph& graph() const { return graph_; }
  Backend& backend() { return backend_; }
  int batch() const { return options_.batch; }

  // ---- parameters: plain device buffers laid out as Graph::params() ----
  std::size_t param_count() const { return graph_.param_count(); }
  float* params() { return params_.get(); }
  float* grads() { return grads_.get(); }
  // Deterministic host initialization from the seed (PyTorch's defaults: Kaiming-uniform
  // weights with a = sqrt(5), uniform(+-1/sqrt(fan_in)) biases, BN scale 1 and shift 0).
  void init_params(std::uint64_t seed);
  void set_params(const std::vector<float>& host);
  // Call after writing parameters through params() in an inference network: ops may hold
  // converted copies of the weights (a training network assumes a change before every forward).
  void params_changed() { ++params_version_; }  // set_buffers() calls it too
  std::vector<float> get_params();
  std::vector<float> get_grads();

  // ---- non-trainable buffers: batch-norm running statistics (Graph::buffer_count floats) ----
  // One device buffer laid out by the graph (Node::buffer_offset: per BatchNorm node mean[C], then
  // var[C], each 256-byte aligned; padding between them). A training forward updates them, an
  // inference forward reads them, so an inference network evaluates a trained model once it is
  // given the training network's parameters AND buffers. Initialized to mean 0, variance 1.
  std::size_t buffer_count() const { return graph_.buffer_count(); }
  float* buffers() { return buffers_.get(); }  // after writing through it: params_changed()
  void init_buffers();
  std::vector<float> get_buffers();  // host copy, padding included
  void set_buffers(const std::vector<float>& host);

  // ---- data ----
  // Upload one batch: images N x C x H x W plain, labels N (ignored without a loss node).
  void set_input(const float* host_images, const std::int32_t* host_labels);
  // Without a loss node (layer tests): gradient of some scalar w.r.t. the last node's output.
  void set_output_grad(const float* host_nchw);

  // ---- execution (asynchronous on a GPU: synchronize through the backend before timing) ----
  // Returns the batch-mean loss when the graph ends with a loss (0 otherwise); the loss value is
  // available after the call returns (it synchronizes on a GPU for that scalar only).
  float forward();
  std::int64_t correct() const { return correct_; }  // arg-max hits of the last forward
  // on_bucket(b) is called as soon as bucket b of `buckets` is final in grads().
  void backward(const GradientBuckets* buckets = nullptr,
                const std::function<void(int)>& on_bucket = {});

  // ---- inspection (tests, checks) ----
  std::vector<float> read_output(int node);      // plain NCHW
  std::vector<float> read_input_grad();          // needs input_grad
  std::vector<float> read_output_grad(int node);  // d(loss)/d(output of node), after backward
  std::uint64_t step() const { return step_; }   // forward passes so far
  // A restored training checkpoint continues the dropout masks where they were.
  void set_step(std::uint64_t step) { step_ = step; }
  // ReLU nodes the backend computes inside the op of their input (fuse_relu), in node order, and
  // BatchNorm nodes folded into the convolution before them (inference).
  const std::vector<int>& fused_relus() const { return fused_relus_; }
  const std::vector<int>& folded_batch_norms() const { return folded_bns_; }
  // Add nodes computed by the convolution that produces one of their inputs, onto the other input
  // in place (inference; Epilogue::add). That other input's output is then refused by read_output.
  const std::vector<int>& fused_adds() const { return fused_adds_; }

  const ActivationMemory& activation_memory() const { return memory_; }

  // ---- profiling (profile_ops) ----
  const std::vector<OpProfile>& profile() const { return profile_; }
  void reset_profile();

 private:
  struct Impl;
  struct Steps;
  struct PlannedBuffers;
  std::unique_ptr<Op> make_fused(int node);  // nullptr: nothing to fuse, or the backend does not
  std::pair<int, int> residual_of(int node, int last) const;  // {Add, shortcut} or {0, 0}
  void name_result(int last, Epilogue& e) const;  // Epilogue::result and readers
  std::unique_ptr<Op> make_residual(int node, int bn, int add, int shortcut);
  void record_fused(int node, int bn, int add, int relu);
  void route_gradients();   // which tensor each backward writes, which are summed (no memory yet)
  void allocate_tensors();  // the memory plan, or a buffer each
  void collect_activations(PlannedBuffers& b, const Steps& steps);
  void collect_gradients(PlannedBuffers& b, const Steps& steps);
  void place_buffers(PlannedBuffers& b);
  void mark_kept_values(const PlannedBuffers& b, const Steps& steps);
  void share_storage(const PlannedBuffers& b, const Steps& steps);
  BufferLifetime activation_lifetime(int node, const Steps& steps) const;
  BufferLifetime gradient_lifetime(int owner, const Steps& steps) const;
  BufferLifetime scratch_lifetime(int node, const Steps& steps) const;
  void refuse_hidden(int node, const char* what) const;
  void refuse_reused(int node, bool kept, const char* what) const;
  Backend& backend_;
  const Graph& graph_;
  NetworkOptions options_;
  std::shared_ptr<float> params_, grads_, buffers_;
  std::uint64_t step_ = 0;
  std::uint64_t params_version_ = 1;
  std::int64_t correct_ = 0;
  std::vector<OpProfile> profile_;
  std::vector<int> fused_relus_, folded_bns_, fused_adds_;
  ActivationMemory memory_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hpcnn
