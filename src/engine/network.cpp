// The executor. Forward runs nodes in topological order; backward runs them in reverse, sums the
// gradient contributions of nodes with several consumers, and reports completed gradient buckets.
#include "engine/network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "base/rng.hpp"
#include "engine/memory_plan.hpp"
#include "engine/op_kinds.hpp"

namespace hpcnn {

// Per-node run-time state, built once in the constructor so forward/backward only dispatch.
struct Network::Impl {
  std::vector<std::unique_ptr<Op>> ops;          // [node], null for the input
  std::vector<Tensor> acts;                      // [node] outputs
  std::vector<Tensor> diffs;                     // [node] d(loss)/d(output), training only
  std::vector<Tensor> scratch;                   // [node] extra gradient of multi-consumer nodes
  std::vector<std::vector<const Tensor*>> src;   // [node] input pointers
  std::vector<std::vector<Tensor*>> diff_src;    // [node] where backward writes input gradients
  std::vector<std::vector<int>> accumulate_into; // [node] inputs whose scratch is summed after
  std::vector<int> relu_of;     // [node] the ReLU this node's op also computes (fuse_relu), or 0
  std::vector<int> bn_of;       // [node] the BatchNorm folded into this Conv (inference), or 0
  std::vector<int> add_of;      // [node] the residual Add this Conv's op computes (inference), or 0
  std::vector<int> shortcut_of; // [node] for such a Conv: the Add's other input, written over in place
  std::vector<int> fused_into;  // [node] for such a ReLU, BatchNorm or Add: the node whose op computes it
  std::vector<bool> hidden;     // [node] output never materialized (before the last fused node),
                                //   or written over by a residual op (a shortcut)
  std::vector<bool> diff_shared;  // [node] its gradient buffer is another node's too
  std::vector<int> diff_owner;    // [node] the node whose gradient tensor is this node's, or -1
  std::shared_ptr<void> arena;    // the memory plan's block (NetworkOptions::memory_plan)
  std::vector<bool> act_kept, grad_kept;  // [node] output / gradient readable after a step
  std::shared_ptr<std::int32_t> labels;
  std::unique_ptr<Timer> timer;
  std::vector<std::size_t> profile_fwd, profile_bwd;  // [node] index into profile_, or npos
};

namespace {

// The only consumer of `id` when it is of `kind`, else 0.
int only_consumer(const Graph& g, int id, OpKind kind) {
  const std::vector<int> users = g.consumers(id);
  return users.size() == 1 && g.node(users[0]).kind == kind ? users[0] : 0;
}

// The ReLU that `id`'s op may compute too: its only consumer, when `id`'s kind takes a ReLU
// (op_kinds.cpp); else 0.
int fusable_relu(const Graph& g, int id) {
  return op_kind_facts(g.node(id).kind).takes_relu ? only_consumer(g, id, OpKind::Relu) : 0;
}

// "convolution_batch_norm_add_relu": the kinds a fused op runs.
std::string fused_kind_name(const Graph& g, int node, int bn, int add, int relu) {
  std::string k = op_kind_name(g.node(node).kind);
  if (bn) k.append("_").append(op_kind_name(OpKind::BatchNorm));
  if (add) k.append("_").append(op_kind_name(OpKind::Add));
  if (relu) k.append("_relu");
  return k;
}

// A BatchNorm node's running statistics in the network's buffer block (graph.hpp's layout).
void point_running_stats(OpContext& ctx, const Node& node, float* buffers) {
  if (node.kind != OpKind::BatchNorm) {
    ctx.running_mean = ctx.running_var = nullptr;
    return;
  }
  ctx.running_mean = buffers + node.buffer_offset;
  ctx.running_var = ctx.running_mean + buffer_stride(static_cast<std::size_t>(node.out.c));
}

// A Conv's folded BatchNorm (inference): that node's parameters and statistics, or none.
void point_folded_bn(OpContext& ctx, const Node* bn, const float* params, const float* buffers) {
  if (!bn) {
    ctx.bn_weights = ctx.bn_mean = ctx.bn_var = nullptr;
    return;
  }
  ctx.bn_weights = params + bn->param_offset;
  ctx.bn_mean = buffers + bn->buffer_offset;
  ctx.bn_var = ctx.bn_mean + buffer_stride(static_cast<std::size_t>(bn->out.c));
}

}  // namespace

Network::Network(Backend& backend, const Graph& graph, const NetworkOptions& options)
    : backend_(backend), graph_(graph), options_(options), impl_(std::make_unique<Impl>()) {
  if (options_.batch < 1) throw std::invalid_argument("batch must be at least 1");
  const auto& nodes = graph_.nodes();
  const std::size_t count = nodes.size();
  Impl& s = *impl_;
  s.ops.resize(count);
  s.acts.resize(count);
  s.src.resize(count);

  // The network input is written by set_input at any time: outside the plan, always allocated.
  Shape in = graph_.input_shape();
  in.n = options_.batch;
  s.acts[0].shape = in;
  backend_.allocate(s.acts[0]);
  s.relu_of.assign(count, 0);
  s.bn_of.assign(count, 0);
  s.add_of.assign(count, 0);
  s.shortcut_of.assign(count, 0);
  s.fused_into.assign(count, 0);
  s.hidden.assign(count, false);
  // Ops first (they choose shapes and layouts), memory afterwards, when every lifetime is known.
  for (std::size_t i = 1; i < count; ++i) {
    for (int j : nodes[i].inputs) s.src[i].push_back(&s.acts[static_cast<std::size_t>(j)]);
    if (s.fused_into[i]) {  // computed by an earlier node's op, into that op's output: the same
      s.acts[i] = s.acts[static_cast<std::size_t>(s.fused_into[i])];  // tensor (storage: later)
      continue;
    }
    if (options_.fuse_relu) s.ops[i] = make_fused(static_cast<int>(i));
    if (!s.ops[i]) s.ops[i] = backend_.make_op(nodes[i], s.src[i], options_.mode, s.acts[i]);
  }

  params_ = backend_.alloc_floats(std::max<std::size_t>(graph_.param_count(), 1));
  buffers_ = backend_.alloc_floats(std::max<std::size_t>(graph_.buffer_count(), 1));
  if (graph_.has_loss()) s.labels = backend_.alloc_ints(static_cast<std::size_t>(options_.batch));
  if (options_.mode == Mode::Train) {
    grads_ = backend_.alloc_floats(std::max<std::size_t>(graph_.param_count(), 1));
    route_gradients();
  }
  allocate_tensors();

  if (options_.profile_ops) {
    s.timer = backend_.make_timer();
    reset_profile();
  }
  init_params(options_.seed);
  init_buffers();
}

void Network::route_gradients() {
  Impl& s = *impl_;
  const auto& nodes = graph_.nodes();
  const std::size_t count = nodes.size();
  s.diffs.resize(count);
  s.scratch.resize(count);
  s.diff_src.resize(count);
  s.accumulate_into.resize(count);
  s.diff_shared.assign(count, false);
  s.diff_owner.assign(count, -1);
  std::vector<bool> written(count, false);
  auto own_gradient = [&](std::size_t i) {
    s.diff_owner[i] = static_cast<int>(i);
    s.diffs[i].shape = s.acts[i].shape;
    s.diffs[i].layout = s.acts[i].layout;
  };
  // Reverse order: the first consumer to run backward writes the gradient, later ones write to
  // scratch and are summed in.
  for (std::size_t i = count - 1; i >= 1; --i) {
    const Node& node = nodes[i];
    if (node.kind != OpKind::SoftmaxCrossEntropy || i != count - 1) {
      // An output read only by an Add has the Add's output gradient: share that buffer, so the
      // Add's backward has nothing to copy for this input (ops skip a copy onto itself).
      const std::vector<int> users = graph_.consumers(static_cast<int>(i));
      const auto k = users.size() == 1 ? static_cast<std::size_t>(users[0]) : 0;
      if (s.relu_of[i]) {
        // A fused op's output gradient is the one with respect to its ReLU's output.
        s.diff_owner[i] = s.diff_owner[static_cast<std::size_t>(s.relu_of[i])];
      } else if (k && nodes[k].kind == OpKind::Add && s.diff_owner[k] >= 0 &&
                 s.acts[k].layout == s.acts[i].layout && s.acts[k].shape == s.acts[i].shape) {
        s.diff_owner[i] = s.diff_owner[k];
        s.diff_shared[i] = s.diff_shared[k] = true;
      } else {
        own_gradient(i);
      }
    }
    if (s.fused_into[i]) continue;  // its backward is part of its input's op
    for (int j : node.inputs) {
      const auto ju = static_cast<std::size_t>(j);
      if (j == 0 && !options_.input_grad) {
        s.diff_src[i].push_back(nullptr);
        continue;
      }
      if (ju == 0 && s.diff_owner[0] < 0) own_gradient(0);
      if (!written[ju]) {
        written[ju] = true;
        s.diff_src[i].push_back(&s.diffs[ju]);
      } else {
        s.scratch[ju].shape = s.acts[ju].shape;
        s.scratch[ju].layout = s.acts[ju].layout;
        s.diff_src[i].push_back(&s.scratch[ju]);
        s.accumulate_into[i].push_back(j);
      }
    }
  }
}

Network::~Network() = default;

// The steps of one training step, in the order they run: forward of node i is step i, backward of
// node i is step 2 * count - 1 - i; `end` is after the last one (a value kept to `end` stays
// readable after the step: read_output, read_output_grad).
struct Network::Steps {
  int count;
  bool train;
  int fwd(int i) const { return i; }
  int bwd(int i) const { return 2 * count - 1 - i; }
  int end() const { return train ? 2 * count : count; }
};

// The node whose op computes `c` (itself, or the op a ReLU or BatchNorm is fused into).
static int op_node(const std::vector<int>& fused_into, int c) {
  return fused_into[static_cast<std::size_t>(c)] ? fused_into[static_cast<std::size_t>(c)] : c;
}

BufferLifetime Network::activation_lifetime(int i, const Steps& t) const {
  const Impl& s = *impl_;
  const auto iu = static_cast<std::size_t>(i);
  // The op's output is also the output of the nodes fused into it.
  std::vector<int> members = {i};
  for (int f : {s.bn_of[iu], s.add_of[iu], s.relu_of[iu]})
    if (f) members.push_back(f);
  BufferLifetime life{0, t.fwd(i), t.fwd(i)};
  bool read_at_end = false;
  for (int m : members) {
    const std::vector<int> users = graph_.consumers(m);
    if (users.empty()) read_at_end = true;  // the graph's output (or a dead end): keep it readable
    for (int c : users) {
      // The logits (a loss's input, N x classes floats) stay readable too (evaluation, tests).
      if (graph_.node(c).kind == OpKind::SoftmaxCrossEntropy) read_at_end = true;
      if (std::find(members.begin(), members.end(), c) != members.end()) continue;
      const int oc = op_node(s.fused_into, c);
      life.last = std::max(life.last, t.fwd(oc));
      if (t.train && s.ops[static_cast<std::size_t>(oc)]->backward_reads().src) life.last = std::max(life.last, t.bwd(oc));
    }
  }
  if (t.train && s.ops[iu]->backward_reads().dst) life.last = std::max(life.last, t.bwd(i));
  if (read_at_end) life.last = t.end();
  return life;
}

BufferLifetime Network::gradient_lifetime(int owner, const Steps& t) const {
  const Impl& s = *impl_;
  BufferLifetime life{0, t.end(), -1};
  auto use = [&](int step) {
    life.first = std::min(life.first, step);
    life.last = std::max(life.last, step);
  };
  const auto count = static_cast<int>(s.diff_owner.size());
  for (int m = 1; m < count; ++m) {
    if (s.diff_owner[static_cast<std::size_t>(m)] != owner) continue;
    if (m == count - 1 && !graph_.has_loss()) {  // set_output_grad writes it before backward
      use(0);
      use(t.end());
    }
    // Written by the backward of its consumers (those sharing this buffer write nothing)...
    for (int c : graph_.consumers(m))
      if (s.diff_owner[static_cast<std::size_t>(c)] != owner) use(t.bwd(op_node(s.fused_into, c)));
    // ... and read by its own op's backward.
    if (s.ops[static_cast<std::size_t>(m)]) use(t.bwd(m));
  }
  if (life.last < life.first) life.first = life.last = t.bwd(owner);  // nobody uses it
  return life;
}

BufferLifetime Network::scratch_lifetime(int j, const Steps& t) const {
  const Impl& s = *impl_;
  BufferLifetime life{0, t.end(), -1};
  for (std::size_t i = 1; i < s.accumulate_into.size(); ++i)
    for (int k : s.accumulate_into[i])
      if (k == j) {  // written by node i's backward and summed into the gradient right after it
        life.first = std::min(life.first, t.bwd(static_cast<int>(i)));
        life.last = std::max(life.last, t.bwd(static_cast<int>(i)));
      }
  return life;
}

// Every buffer the executor owns besides the network input and its gradient (always allocated:
// set_input and read_input_grad use them at any time), with its lifetime.
struct Network::PlannedBuffers {
  std::vector<Tensor*> tensors;
  std::vector<BufferLifetime> lives;
  // A residual op writes over its shortcut's buffer: one buffer (`storage_of` the op that
  // allocated it) then carries the values of both, and lives as long as either.
  std::vector<int> storage_of;
  std::vector<std::size_t> slot;  // the index in tensors of the node's own activation buffer
  void add(Tensor& t, BufferLifetime life, const Backend& backend) {
    life.bytes = backend.storage_bytes(t);
    tensors.push_back(&t);
    lives.push_back(life);
  }
};

void Network::allocate_tensors() {
  const std::size_t count = graph_.nodes().size();
  const Steps steps{static_cast<int>(count), options_.mode == Mode::Train};
  PlannedBuffers b;
  b.storage_of.assign(count, 0);
  b.slot.assign(count, 0);
  collect_activations(b, steps);
  if (steps.train) collect_gradients(b, steps);
  place_buffers(b);
  mark_kept_values(b, steps);
  share_storage(b, steps);
}

void Network::collect_activations(PlannedBuffers& b, const Steps& steps) {
  Impl& s = *impl_;
  for (std::size_t i = 1; i < b.storage_of.size(); ++i) {
    if (!s.ops[i]) continue;
    const BufferLifetime life = activation_lifetime(static_cast<int>(i), steps);
    if (!s.shortcut_of[i]) {
      b.storage_of[i] = static_cast<int>(i);
      b.slot[i] = b.tensors.size();
      b.add(s.acts[i], life, backend_);
      continue;
    }
    b.storage_of[i] = b.storage_of[static_cast<std::size_t>(op_node(s.fused_into, s.shortcut_of[i]))];
    BufferLifetime& shared = b.lives[b.slot[static_cast<std::size_t>(b.storage_of[i])]];
    if (backend_.storage_bytes(s.acts[i]) != shared.bytes)
      throw std::logic_error("residual fusion: node '" + graph_.node(static_cast<int>(i)).name +
                             "' writes over a shortcut of another size");
    shared.first = std::min(shared.first, life.first);
    shared.last = std::max(shared.last, life.last);
  }
}

void Network::collect_gradients(PlannedBuffers& b, const Steps& steps) {
  Impl& s = *impl_;
  const std::size_t count = b.storage_of.size();
  for (std::size_t i = 1; i < count; ++i)
    if (s.diff_owner[i] == static_cast<int>(i)) b.add(s.diffs[i], gradient_lifetime(static_cast<int>(i), steps), backend_);
  auto accumulates_into = [&](int j) {
    return std::any_of(s.accumulate_into.begin(), s.accumulate_into.end(),
                       [j](const std::vector<int>& v) { return std::find(v.begin(), v.end(), j) != v.end(); });
  };
  for (std::size_t j = 0; j < count; ++j)
    if (s.scratch[j].shape.count() && accumulates_into(static_cast<int>(j)))
      b.add(s.scratch[j], scratch_lifetime(static_cast<int>(j), steps), backend_);
  if (s.diff_owner[0] == 0) backend_.allocate(s.diffs[0]);
}

// One arena laid out by the memory plan, or a buffer each.
void Network::place_buffers(PlannedBuffers& b) {
  Impl& s = *impl_;
  const MemoryPlan plan = plan_memory(b.lives);
  memory_.unplanned_bytes = plan.unplanned_bytes;
  memory_.bound_bytes = live_bytes_bound(b.lives);
  if (!options_.memory_plan) {
    for (Tensor* t : b.tensors) backend_.allocate(*t);
    memory_.planned_bytes = plan.unplanned_bytes;
    return;
  }
  if (const std::string bad = check_plan(b.lives, plan); !bad.empty()) throw std::logic_error("memory plan: " + bad);
  s.arena = backend_.alloc_bytes(std::max<std::size_t>(plan.arena_bytes, 1));
  for (std::size_t k = 0; k < b.tensors.size(); ++k) {
    b.tensors[k]->bytes = b.lives[k].bytes;
    b.tensors[k]->storage = s.arena;
    b.tensors[k]->data = reinterpret_cast<float*>(static_cast<char*>(s.arena.get()) + plan.offsets[k]);
  }
  memory_.planned_bytes = plan.arena_bytes;
}

// What is readable after a step: with the plan, only the values it keeps to the end.
void Network::mark_kept_values(const PlannedBuffers& b, const Steps& steps) {
  Impl& s = *impl_;
  const std::size_t count = b.storage_of.size();
  s.act_kept.assign(count, true);
  s.grad_kept.assign(count, true);
  for (std::size_t k = 0; k < b.tensors.size(); ++k) {
    if (!options_.memory_plan || b.lives[k].last >= steps.end()) continue;
    const Tensor* t = b.tensors[k];
    if (t >= s.acts.data() && t < s.acts.data() + count) s.act_kept[static_cast<std::size_t>(t - s.acts.data())] = false;
    if (steps.train && t >= s.diffs.data() && t < s.diffs.data() + count)
      s.grad_kept[static_cast<std::size_t>(t - s.diffs.data())] = false;
  }
  for (std::size_t i = 1; i < count; ++i) {
    if (s.shortcut_of[i]) s.act_kept[i] = s.act_kept[static_cast<std::size_t>(b.storage_of[i])];
    if (s.fused_into[i]) s.act_kept[i] = s.act_kept[static_cast<std::size_t>(s.fused_into[i])];
    if (steps.train && s.diff_owner[i] >= 0) s.grad_kept[i] = s.grad_kept[static_cast<std::size_t>(s.diff_owner[i])];
  }
}

// The nodes that share another's tensor get its storage now: residual ops their shortcut's (in
// node order, so a chain of them ends at the op that allocated it), then the fused nodes.
void Network::share_storage(const PlannedBuffers& b, const Steps& steps) {
  Impl& s = *impl_;
  const std::size_t count = b.storage_of.size();
  for (std::size_t i = 1; i < count; ++i)
    if (s.shortcut_of[i]) {  // its own layout, of the same size (Backend::make_fused_op)
      const Tensor& shared = s.acts[static_cast<std::size_t>(b.storage_of[i])];
      s.acts[i].data = shared.data;
      s.acts[i].bytes = shared.bytes;
      s.acts[i].storage = shared.storage;
    }
  for (std::size_t i = 1; i < count; ++i)
    if (s.fused_into[i]) s.acts[i] = s.acts[static_cast<std::size_t>(s.fused_into[i])];
  if (!steps.train) return;
  for (std::size_t i = 1; i < count; ++i)
    if (s.diff_owner[i] >= 0 && s.diff_owner[i] != static_cast<int>(i))
      s.diffs[i] = s.diffs[static_cast<std::size_t>(s.diff_owner[i])];
}

// Inference: the residual Add that `last` (the end of node id's Conv [-> BatchNorm]) is the only
// input of, with the Add's other input (the shortcut), when node id's op may write over the
// shortcut in place: it is not the network input (set_input owns that), and its value is final
// and needed by nobody else once id runs (every other reader's op runs before id). In ResNets
// this picks the block's last convolution, or its downsample convolution where that comes later.
std::pair<int, int> Network::residual_of(int id, int last) const {
  const Impl& s = *impl_;
  if (options_.mode != Mode::Infer || graph_.node(id).kind != OpKind::Conv) return {0, 0};
  const int add = only_consumer(graph_, last, OpKind::Add);
  if (!add) return {0, 0};
  const std::vector<int>& in = graph_.node(add).inputs;
  if (in.size() != 2 || in[0] == in[1]) return {0, 0};
  const int shortcut = in[0] == last ? in[1] : in[0];
  if (shortcut == 0 || op_node(s.fused_into, shortcut) >= id) return {0, 0};
  for (int c : graph_.consumers(shortcut))
    if (c != add && op_node(s.fused_into, c) >= id) return {0, 0};  // still read after id
  return {add, shortcut};
}

// Inference: what node `last`'s output is and who reads it (Epilogue::result, readers).
void Network::name_result(int last, Epilogue& e) const {
  e.result = nullptr;
  e.readers.clear();
  if (options_.mode != Mode::Infer) return;
  e.result = &graph_.node(last);
  for (int user : graph_.consumers(last)) e.readers.push_back(&graph_.node(user));
}

std::unique_ptr<Op> Network::make_fused(int id) {
  Impl& s = *impl_;
  const auto i = static_cast<std::size_t>(id);
  // Inference: Conv -> BatchNorm [-> Add] [-> ReLU]; any mode: X -> ReLU.
  const int bn = options_.mode == Mode::Infer && graph_.node(id).kind == OpKind::Conv
                     ? only_consumer(graph_, id, OpKind::BatchNorm)
                     : 0;
  const auto [add, shortcut] = residual_of(id, bn ? bn : id);
  std::unique_ptr<Op> op;
  if (add) op = make_residual(id, bn, add, shortcut);
  if (op) return op;
  const int relu = bn ? only_consumer(graph_, bn, OpKind::Relu) : fusable_relu(graph_, id);
  if (!bn && !relu) return nullptr;
  Epilogue e;
  e.batch_norm = bn ? &graph_.node(bn) : nullptr;
  e.relu = relu != 0;
  name_result(relu ? relu : bn ? bn : id, e);
  op = backend_.make_fused_op(graph_.node(id), e, s.src[i], options_.mode, s.acts[i]);
  if (!op && bn && relu) {  // the backend may fold the batch norm only
    e.relu = false;
    name_result(bn, e);
    op = backend_.make_fused_op(graph_.node(id), e, s.src[i], options_.mode, s.acts[i]);
  }
  if (op) record_fused(id, bn, 0, e.relu ? relu : 0);
  return op;
}

// The op of Conv `id` [+ BatchNorm `bn`] + Add `add` [+ its ReLU], writing over `shortcut`'s
// tensor, or nullptr where the backend does not fuse that (it then gets the usual candidates).
std::unique_ptr<Op> Network::make_residual(int id, int bn, int add, int shortcut) {
  Impl& s = *impl_;
  const auto i = static_cast<std::size_t>(id);
  const int relu = only_consumer(graph_, add, OpKind::Relu);
  Epilogue e;
  e.batch_norm = bn ? &graph_.node(bn) : nullptr;
  e.add = &graph_.node(add);
  e.relu = relu != 0;
  name_result(relu ? relu : add, e);
  const Tensor& target = s.acts[static_cast<std::size_t>(shortcut)];
  std::vector<const Tensor*> src = s.src[i];
  src.push_back(&target);
  std::unique_ptr<Op> op = backend_.make_fused_op(graph_.node(id), e, src, options_.mode, s.acts[i]);
  if (!op) return nullptr;
  // (its size is checked against the shortcut's buffer in collect_activations)
  if (!(s.acts[i].shape == target.shape))
    throw std::logic_error("backend '" + backend_.name() + "': the residual op of node '" + graph_.node(id).name +
                           "' does not write in its shortcut's shape");
  s.src[i] = std::move(src);
  s.shortcut_of[i] = shortcut;
  s.hidden[static_cast<std::size_t>(shortcut)] = true;  // its value is overwritten by the sum
  record_fused(id, bn, add, relu);
  return op;
}

// Marks the nodes after `id` that its op computes: their outputs are its output.
void Network::record_fused(int id, int bn, int add, int relu) {
  Impl& s = *impl_;
  const auto i = static_cast<std::size_t>(id);
  int last = id;  // the node whose value the op's output holds so far
  // Node n (0: none) is computed by id's op too: the value before it is never materialized.
  auto absorb = [&](int n, std::vector<int>& slot_of, std::vector<int>& list) {
    if (!n) return;
    s.hidden[static_cast<std::size_t>(last)] = true;
    slot_of[i] = n;
    s.fused_into[static_cast<std::size_t>(n)] = id;
    list.push_back(n);
    last = n;
  };
  s.hidden[i] = true;
  absorb(bn, s.bn_of, folded_bns_);
  absorb(add, s.add_of, fused_adds_);
  absorb(relu, s.relu_of, fused_relus_);
}

void Network::init_buffers() {
  // PyTorch's initial running statistics: mean 0, variance 1 (padding 0).
  std::vector<float> host(graph_.buffer_count(), 0.0f);
  for (const Node& node : graph_.nodes()) {
    if (node.kind != OpKind::BatchNorm) continue;
    const auto c = static_cast<std::size_t>(node.out.c);
    std::fill_n(host.begin() + static_cast<long>(node.buffer_offset + buffer_stride(c)), c, 1.0f);
  }
  set_buffers(host);
}

std::vector<float> Network::get_buffers() {
  std::vector<float> host(graph_.buffer_count());
  if (!host.empty()) backend_.copy_to_host(host.data(), buffers_.get(), host.size() * sizeof(float));
  return host;
}

void Network::set_buffers(const std::vector<float>& host) {
  if (host.size() != graph_.buffer_count())
    throw std::invalid_argument(std::string("set_buffers: ")
                                    .append(std::to_string(host.size()))
                                    .append(" values for ")
                                    .append(std::to_string(graph_.buffer_count()))
                                    .append(" buffer floats"));
  if (!host.empty()) backend_.copy_to_device(buffers_.get(), host.data(), host.size() * sizeof(float));
  params_changed();  // a folded batch norm depends on the statistics
}

void Network::init_params(std::uint64_t seed) {
  std::vector<float> host(graph_.param_count());
  const auto& specs = graph_.params();
  for (std::size_t p = 0; p < specs.size(); ++p) {
    const ParamSpec& spec = specs[p];
    Rng rng(seed, p);
    float* out = host.data() + spec.offset;
    switch (spec.role) {
      case ParamRole::Weight:
      case ParamRole::Bias: {
        // Both bounds are 1/sqrt(fan_in) of the layer's weight (PyTorch's defaults).
        const ParamSpec& weight = spec.role == ParamRole::Weight ? spec : specs[p - 1];
        std::size_t fan_in = 1;
        for (std::size_t d = 1; d < weight.dims.size(); ++d) fan_in *= static_cast<std::size_t>(weight.dims[d]);
        const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
        for (std::size_t k = 0; k < spec.count; ++k) out[k] = rng.uniform(-bound, bound);
        break;
      }
      case ParamRole::Scale:
        for (std::size_t k = 0; k < spec.count; ++k) out[k] = 1.0f;
        break;
      case ParamRole::Shift:
        for (std::size_t k = 0; k < spec.count; ++k) out[k] = 0.0f;
        break;
    }
  }
  set_params(host);
}

void Network::set_params(const std::vector<float>& host) {
  if (host.size() != graph_.param_count()) throw std::invalid_argument("set_params: wrong size");
  backend_.copy_to_device(params_.get(), host.data(), host.size() * sizeof(float));
  params_changed();
}

std::vector<float> Network::get_params() {
  std::vector<float> host(graph_.param_count());
  backend_.copy_to_host(host.data(), params_.get(), host.size() * sizeof(float));
  return host;
}

std::vector<float> Network::get_grads() {
  if (!grads_) throw std::logic_error("get_grads: network is not in training mode");
  std::vector<float> host(graph_.param_count());
  backend_.copy_to_host(host.data(), grads_.get(), host.size() * sizeof(float));
  return host;
}

void Network::set_input(const float* host_images, const std::int32_t* host_labels) {
  backend_.write_plain(impl_->acts[0], host_images);
  if (impl_->labels && host_labels)
    backend_.copy_to_device(impl_->labels.get(), host_labels,
                            static_cast<std::size_t>(options_.batch) * sizeof(std::int32_t));
}

void Network::set_output_grad(const float* host_nchw) {
  if (graph_.has_loss()) throw std::logic_error("set_output_grad: the graph ends with a loss");
  if (impl_->diffs.empty()) throw std::logic_error("set_output_grad: network is not in training mode");
  backend_.write_plain(impl_->diffs.back(), host_nchw);
}

void Network::reset_profile() {
  profile_.clear();
  const auto& nodes = graph_.nodes();
  impl_->profile_fwd.assign(nodes.size(), static_cast<std::size_t>(-1));
  impl_->profile_bwd.assign(nodes.size(), static_cast<std::size_t>(-1));
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    if (!impl_->ops[i]) continue;  // a fused ReLU: timed with its input's op
    const std::string kind =
        fused_kind_name(graph_, static_cast<int>(i), impl_->bn_of[i], impl_->add_of[i], impl_->relu_of[i]);
    std::vector<int> fused;
    for (int f : {impl_->bn_of[i], impl_->add_of[i], impl_->relu_of[i]})
      if (f) fused.push_back(f);
    impl_->profile_fwd[i] = profile_.size();
    profile_.push_back({static_cast<int>(i), nodes[i].name, kind, 0.0, 0, fused});
    if (options_.mode == Mode::Train) {
      impl_->profile_bwd[i] = profile_.size();
      profile_.push_back({static_cast<int>(i), nodes[i].name, kind + "_backward", 0.0, 0, fused});
    }
  }
}

float Network::forward() {
  Impl& s = *impl_;
  const auto& nodes = graph_.nodes();
  float loss = 0.0f;
  correct_ = 0;
  // Training updates the parameters between forward passes (outside the executor).
  if (options_.mode == Mode::Train) params_changed();
  OpContext ctx;
  ctx.seed = options_.seed;
  ctx.step = step_;
  ctx.params_version = params_version_;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    if (!s.ops[i]) continue;  // a ReLU fused into its input's op
    const Node& node = nodes[i];
    ctx.node = static_cast<int>(i);
    ctx.src = s.src[i];
    ctx.dst = &s.acts[i];
    ctx.weights = node.param_count ? params_.get() + node.param_offset : nullptr;
    point_running_stats(ctx, node, buffers_.get());
    point_folded_bn(ctx, s.bn_of[i] ? &graph_.node(s.bn_of[i]) : nullptr, params_.get(), buffers_.get());
    if (node.kind == OpKind::SoftmaxCrossEntropy) {
      ctx.labels = s.labels.get();
      ctx.loss = &loss;
      ctx.correct = &correct_;
    }
    if (s.timer) s.timer->start();
    s.ops[i]->forward(ctx);
    if (s.timer) {
      s.timer->stop();
      OpProfile& p = profile_[s.profile_fwd[i]];
      p.seconds += s.timer->seconds();
      ++p.calls;
    }
    ctx.labels = nullptr;
    ctx.loss = nullptr;
    ctx.correct = nullptr;
  }
  ++step_;
  return loss;
}

void Network::backward(const GradientBuckets* buckets, const std::function<void(int)>& on_bucket) {
  if (options_.mode != Mode::Train) throw std::logic_error("backward on an inference network");
  if (step_ == 0) throw std::logic_error("backward before forward");
  Impl& s = *impl_;
  const auto& nodes = graph_.nodes();
  OpContext ctx;
  ctx.seed = options_.seed;
  ctx.step = step_ - 1;  // the forward pass this backward belongs to (dropout masks)
  for (std::size_t i = nodes.size() - 1; i >= 1; --i) {
    if (!s.ops[i]) {  // a ReLU fused into its input's op: nothing of its own to run
      if (buckets && on_bucket)
        for (int b : buckets->completed_by(static_cast<int>(i))) on_bucket(b);
      continue;
    }
    const Node& node = nodes[i];
    ctx.node = static_cast<int>(i);
    ctx.src = s.src[i];
    ctx.dst = &s.acts[i];
    ctx.diff_src = s.diff_src[i];
    ctx.diff_dst = s.diffs[i].data ? &s.diffs[i] : nullptr;
    ctx.diff_dst_writable = s.relu_of[i] && ctx.diff_dst &&
                                    !s.diff_shared[static_cast<std::size_t>(s.relu_of[i])]
                                ? &s.diffs[i]
                                : nullptr;
    ctx.weights = node.param_count ? params_.get() + node.param_offset : nullptr;
    ctx.diff_weights = node.param_count ? grads_.get() + node.param_offset : nullptr;
    point_running_stats(ctx, node, buffers_.get());
    ctx.labels = node.kind == OpKind::SoftmaxCrossEntropy ? s.labels.get() : nullptr;
    if (s.timer) s.timer->start();
    s.ops[i]->backward(ctx);
    for (int j : s.accumulate_into[i]) {
      const auto ju = static_cast<std::size_t>(j);
      backend_.accumulate(s.diffs[ju], s.scratch[ju]);
    }
    if (s.timer) {
      s.timer->stop();
      OpProfile& p = profile_[s.profile_bwd[i]];
      p.seconds += s.timer->seconds();
      ++p.calls;
    }
    if (buckets && on_bucket)
      for (int b : buckets->completed_by(static_cast<int>(i))) on_bucket(b);
  }
}

void Network::refuse_hidden(int node, const char* what) const {
  if (impl_->hidden.at(static_cast<std::size_t>(node)))
    throw std::logic_error(std::string(what) + ": the output of node '" + graph_.node(node).name +
                           "' is not kept: a later node is fused into its op, or a residual op writes over it "
                           "(NetworkOptions::fuse_relu)");
}

void Network::refuse_reused(int node, bool kept, const char* what) const {
  if (!kept)
    throw std::logic_error(std::string(what) + ": the buffer of node '" + graph_.node(node).name +
                           "' is reused once its value is dead (NetworkOptions::memory_plan)");
}

std::vector<float> Network::read_output(int node) {
  refuse_hidden(node, "read_output");
  refuse_reused(node, impl_->act_kept.at(static_cast<std::size_t>(node)), "read_output");
  const Tensor& t = impl_->acts.at(static_cast<std::size_t>(node));
  std::vector<float> host(t.shape.count());
  backend_.read_plain(t, host.data());
  return host;
}

std::vector<float> Network::read_input_grad() {
  if (!options_.input_grad || impl_->diffs.empty() || !impl_->diffs[0].data)
    throw std::logic_error("read_input_grad: network built without input_grad");
  std::vector<float> host(impl_->diffs[0].shape.count());
  backend_.read_plain(impl_->diffs[0], host.data());
  return host;
}

std::vector<float> Network::read_output_grad(int node) {
  if (impl_->diffs.empty()) throw std::logic_error("read_output_grad: network is not in training mode");
  refuse_hidden(node, "read_output_grad");
  // A fused ReLU's gradient buffer may hold the masked gradient after backward.
  if (impl_->fused_into.at(static_cast<std::size_t>(node)))
    throw std::logic_error("read_output_grad: ReLU '" + graph_.node(node).name + "' is fused into '" +
                           graph_.node(impl_->fused_into[static_cast<std::size_t>(node)]).name +
                           "' (NetworkOptions::fuse_relu)");
  const Tensor& t = impl_->diffs.at(static_cast<std::size_t>(node));
  if (t.data) refuse_reused(node, impl_->grad_kept.at(static_cast<std::size_t>(node)), "read_output_grad");
  if (!t.data) throw std::logic_error("read_output_grad: node " + std::to_string(node) + " has no gradient");
  std::vector<float> host(t.shape.count());
  backend_.read_plain(t, host.data());
  return host;
}

}  // namespace hpcnn
