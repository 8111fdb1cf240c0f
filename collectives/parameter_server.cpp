// Parameter server over MPI point-to-point. The last K ranks of the job are servers; server s owns
// the key range [block_offset(n, K, s), block_offset(n, K, s + 1)) of the parameter buffer: those
// weights and their optimizer state (momentum, Adam moments) live only there. A worker pushes each
// gradient bucket, cut at shard boundaries into "pieces", to the owning servers as soon as
// backward finishes it, then receives its shards' weights back.
//   ps-sync : per step a server waits for every worker's pieces, sums them in worker order, divides
//             by the worker count (the same average the allreduce schemes apply), runs one
//             optimizer step and sends the weights to every worker: all workers stay identical.
//   ps-async: a server applies each worker's complete push as it arrives (its own gradient, not
//             averaged) and returns the current weights to that worker only. Staleness of a push =
//             updates the shard received between that worker's last weights and this push.
// Stopping within a point (a stop signal): a worker that got one asks the first server
// (kStopRequestTag); from then on that server tags its weights kLastWeightsTag, and a worker that
// receives such a reply stops after this step. ps-sync: the first server tags every worker's reply
// of one step, so every worker ends after the same step; ps-async: each worker ends after its next
// reply. Every worker tells every server when it has finished (kFinishedTag: steps done and
// whether it asked to stop), so a server knows which posted receives will never be matched and the
// first server how many stop requests to collect: no message is left unmatched.
// Training checkpoints: worker 0 asks every server for its shard's weights and optimizer state
// (kStateRequestTag) between steps, while no worker pushes (a barrier of the caller), and each
// server answers from within serve() (kStateTag). On a resume every rank gets the checkpoint's
// state (ExchangeSetup::resume): servers restore their optimizer shard, and the weights come from
// worker 0's init() as always.
// Message tags: the piece's index within its shard, kWeightsTag, kInitTag, kLastWeightsTag,
// kStopRequestTag, kFinishedTag, kStateRequestTag, kStateTag.
// GPU backends (ExchangeMemory::HostStaged): every message is sent from and received into host
// memory (collectives/staging.hpp): a worker copies each bucket's gradients to the host before
// pushing it and the received weights to the device after the wait; a server receives, sums and
// sends on the host and copies to the device only what its optimizer reads and writes.
#include <algorithm>
#include <climits>
#include <functional>
#include <optional>
#include <string>

#include "collectives/exchange.hpp"
#include "collectives/host_buffers.hpp"
#include "collectives/schedule.hpp"
#include "collectives/staging.hpp"
#include "base/activity.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace {

constexpr int kWeightsTag = 32000;
constexpr int kInitTag = 32001;
constexpr int kLastWeightsTag = 32002;  // the weights of the worker's last step
constexpr int kStopRequestTag = 32003;  // a worker got a stop signal (to the first server)
constexpr int kFinishedTag = 32004;     // a worker's last step is done: {steps, asked to stop}
constexpr int kStateRequestTag = 32005; // worker 0 asks a server for its shard's state
constexpr int kStateTag = 32006;        // the answer: {steps, first, second sizes}, weights, moments

struct Piece {
  int bucket = 0;
  std::size_t offset = 0, count = 0;  // floats into the parameter/gradient buffer
  int tag = 0;                        // index within its shard
};

int as_int(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw RuntimeError("parameter server: " + std::to_string(n) + " floats exceed MPI's int count");
  return static_cast<int>(n);
}

// What a server receives besides the pushes: every worker's notice that it has finished, on the
// first server the workers' stop requests, and worker 0's requests for the shard's state (a
// checkpoint); and the receives a finished worker will never match, cancelled. Its request slots
// are the last kSlots of the server's receive array, so one MPI_Waitany covers pushes and control
// messages.
class Control {
 public:
  static constexpr std::size_t kSlots = 3;
  // first_server: the one that decides when the run stops (the others learn it from the workers'
  // notices); stop_signalled: its own signal check (may be empty); send_state: answers a state
  // request.
  Control(MPI_Comm comm, bool first_server, std::function<bool()> stop_signalled, std::function<void()> send_state,
          const std::vector<Piece>& pieces, std::vector<MPI_Request>& recv, std::vector<std::size_t>& missing,
          Traffic& traffic)
      : comm_(comm),
        first_server_(first_server),
        stop_signalled_(std::move(stop_signalled)),
        send_state_(std::move(send_state)),
        pieces_(pieces),
        recv_(recv),
        missing_(missing),
        traffic_(traffic),
        finished_(missing.size(), false),
        notice_slot_(recv.size() - kSlots),
        request_slot_(recv.size() - kSlots + 1),
        state_slot_(recv.size() - kSlots + 2) {
    post_notice();
    if (first_server_) post_request();
    post_state_request();
  }

  std::size_t finished_count() const { return finished_count_; }
  // The first worker whose posted push is incomplete and who has not finished, or -1.
  int waiting_for() const {
    for (std::size_t w = 0; w < missing_.size(); ++w)
      if (!finished_[w] && missing_[w] > 0) return static_cast<int>(w);
    return -1;
  }
  // Waits for the next message: a piece of a push (returns its worker, whose missing count is
  // lowered), or a notice or stop request (handled; returns -1).
  int next_event(const char* what, int peer) {
    int index = MPI_UNDEFINED;
    MPI_Status status;
    {
      const activity::WaitScope waiting(what, -1, peer);
      MPI_Waitany(static_cast<int>(recv_.size()), recv_.data(), &index, &status);
    }
    if (index == MPI_UNDEFINED) throw RuntimeError("parameter server: no push left to wait for");
    const auto slot = static_cast<std::size_t>(index);
    if (slot == notice_slot_) {
      worker_finished(static_cast<std::size_t>(status.MPI_SOURCE));
      return -1;
    }
    if (slot == request_slot_) {
      ++requests_received_;
      stop_ = true;
      post_request();
      return -1;
    }
    if (slot == state_slot_) {
      send_state_();
      post_state_request();
      return -1;
    }
    const std::size_t w = slot / pieces_.size();
    --missing_[w];
    return static_cast<int>(w);
  }
  // First server: should the replies from now on end their workers' runs? (A request that
  // arrived, or this process's own signal.) Always false on the other servers.
  bool stop_decided() {
    if (!first_server_) return false;
    int arrived = 0;
    MPI_Test(&recv_[request_slot_], &arrived, MPI_STATUS_IGNORE);
    if (arrived) {
      ++requests_received_;
      stop_ = true;
      post_request();
    }
    if (!stop_ && stop_signalled_ && stop_signalled_()) stop_ = true;
    return stop_;
  }
  // After the last reply: every worker's notice, every stop request sent (the notices say how
  // many), then nothing left posted.
  void finish() {
    while (finished_count_ < missing_.size()) next_event("parameter-server: workers finishing", -1);
    while (first_server_ && requests_received_ < requests_sent_) {
      const activity::WaitScope waiting("parameter-server: stop requests");
      MPI_Wait(&recv_[request_slot_], MPI_STATUS_IGNORE);
      ++requests_received_;
      post_request();
    }
    cancel(request_slot_, 0);
    cancel(notice_slot_, 0);
    cancel(state_slot_, 0);  // worker 0 asks only while steps remain: none can be on its way
  }

 private:
  void post_notice() {
    MPI_Irecv(notice_, 2, MPI_INT64_T, MPI_ANY_SOURCE, kFinishedTag, comm_, &recv_[notice_slot_]);
  }
  void post_request() {
    MPI_Irecv(&request_, 1, MPI_INT, MPI_ANY_SOURCE, kStopRequestTag, comm_, &recv_[request_slot_]);
  }
  void post_state_request() { MPI_Irecv(&state_request_, 1, MPI_INT, 0, kStateRequestTag, comm_, &recv_[state_slot_]); }
  // Its pushes are all in (it waited for every reply before finishing): the receive posted for
  // its next push will never be matched.
  void worker_finished(std::size_t w) {
    if (w >= finished_.size() || finished_[w]) throw RuntimeError("parameter server: unexpected finish notice");
    finished_[w] = true;
    ++finished_count_;
    requests_sent_ += notice_[1];
    for (std::size_t i = 0; i < pieces_.size(); ++i)
      cancel(w * pieces_.size() + i, static_cast<std::int64_t>(pieces_[i].count * sizeof(float)));
    missing_[w] = 0;
    if (finished_count_ < finished_.size()) post_notice();
  }
  // Cancels a posted receive; `bytes` were counted as received when it was posted.
  void cancel(std::size_t slot, std::int64_t bytes) {
    MPI_Request& r = recv_[slot];
    if (r == MPI_REQUEST_NULL) return;
    MPI_Cancel(&r);
    MPI_Status status;
    MPI_Wait(&r, &status);
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    if (cancelled) traffic_.received -= bytes;
  }

  MPI_Comm comm_;
  bool first_server_;
  std::function<bool()> stop_signalled_;
  std::function<void()> send_state_;
  const std::vector<Piece>& pieces_;
  std::vector<MPI_Request>& recv_;
  std::vector<std::size_t>& missing_;
  Traffic& traffic_;
  std::vector<bool> finished_;
  std::size_t finished_count_ = 0;
  std::size_t notice_slot_, request_slot_, state_slot_;
  std::int64_t notice_[2] = {0, 0};  // steps done, asked to stop (0/1)
  int request_ = 0, state_request_ = 0;
  bool stop_ = false;
  std::int64_t requests_sent_ = 0, requests_received_ = 0;
};

class ParameterServer : public Exchange {
 public:
  ParameterServer(const ExchangeSetup& s, bool asynchronous)
      : setup_(s),
        async_(asynchronous),
        staged_(s.memory == ExchangeMemory::HostStaged),
        params_(*s.backend, s.param_count, staged_),
        grads_(*s.backend, s.param_count, staged_) {
    if (s.memory == ExchangeMemory::Device)
      throw std::logic_error("parameter server: device memory is staged through the host (HostStaged)");
    MPI_Comm_rank(s.world, &rank_);
    MPI_Comm_size(s.world, &size_);
    servers_ = s.servers;
    if (servers_ < 1 || servers_ >= size_)
      throw SettingError("ps_servers", std::to_string(servers_),
                         "the parameter server needs 1 <= servers < ranks (" + std::to_string(size_) + " ranks)");
    worker_count_ = size_ - servers_;
    // Every server must receive something each step: it answers the pushes it gets.
    if (s.param_count < static_cast<std::size_t>(servers_))
      throw SettingError("ps_servers", std::to_string(servers_),
                         "more parameter servers than parameters (" + std::to_string(s.param_count) + ")");
    MPI_Comm_dup(s.world, &comm_);
    const bool worker = rank_ < worker_count_;
    MPI_Comm split = MPI_COMM_NULL;
    MPI_Comm_split(s.world, worker ? 0 : 1, rank_, &split);
    if (worker) workers_ = split;
    else server_comm_ = split;
    // Shards, and each bucket cut into pieces at shard boundaries.
    shards_.resize(static_cast<std::size_t>(servers_));
    bucket_pieces_.resize(s.buckets->size());
    for (int k = 0; k < servers_; ++k) {
      const std::size_t lo = block_offset(s.param_count, servers_, k), hi = block_offset(s.param_count, servers_, k + 1);
      shard_lo_.push_back(lo);
      shard_hi_.push_back(hi);
      for (std::size_t b = 0; b < s.buckets->size(); ++b) {
        const Bucket& bk = s.buckets->buckets()[b];
        const std::size_t a = std::max(lo, bk.offset), e = std::min(hi, bk.offset + bk.count);
        if (a >= e) continue;
        const int tag = static_cast<int>(shards_[static_cast<std::size_t>(k)].size());
        if (tag >= kWeightsTag) throw SettingError("bucket_mb", "", "too many buckets per parameter-server shard");
        shards_[static_cast<std::size_t>(k)].push_back({static_cast<int>(b), a, e - a, tag});
        bucket_pieces_[b].push_back({k, shards_[static_cast<std::size_t>(k)].size() - 1});
      }
    }
  }
  ~ParameterServer() override {
    if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    if (workers_ != MPI_COMM_NULL) MPI_Comm_free(&workers_);
    if (server_comm_ != MPI_COMM_NULL) MPI_Comm_free(&server_comm_);
    MPI_Comm_free(&comm_);
  }

  // ---- worker ----
  void init(float* params) override {
    if (rank_ != 0) return;  // every worker starts from the same weights; worker 0 seeds the servers
    params_.pull(params, 0, setup_.param_count);
    for (int k = 0; k < servers_; ++k)
      MPI_Send(params_.host(params) + shard_lo_[k], as_int(shard_hi_[k] - shard_lo_[k]), MPI_FLOAT, server_rank(k), kInitTag, comm_);
  }
  void start_bucket(int b, float*, float* grads) override {
    const Bucket& bucket = setup_.buckets->buckets().at(static_cast<std::size_t>(b));
    grads_.pull(grads, bucket.offset, bucket.count);
    for (const auto& [k, index] : bucket_pieces_.at(static_cast<std::size_t>(b))) {
      const Piece& p = shards_[static_cast<std::size_t>(k)][index];
      requests_.push_back(MPI_REQUEST_NULL);
      MPI_Isend(grads_.host(grads) + p.offset, as_int(p.count), MPI_FLOAT, server_rank(k), p.tag, comm_, &requests_.back());
      traffic_.sent += static_cast<std::int64_t>(p.count * sizeof(float));
    }
  }
  void progress() override {
    int done = 0;
    MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  }
  void wait(float* params, float*) override {
    ask_to_stop_if_signalled();
    // Posted only now: backward has finished reading the weights it received last step. Any tag:
    // servers send a worker nothing but weights, tagged kLastWeightsTag on its last step.
    const std::size_t first_weights = requests_.size();
    for (int k = 0; k < servers_; ++k) {
      requests_.push_back(MPI_REQUEST_NULL);
      const std::size_t n = shard_hi_[k] - shard_lo_[k];
      MPI_Irecv(params_.host(params) + shard_lo_[k], as_int(n), MPI_FLOAT, server_rank(k), MPI_ANY_TAG, comm_,
                &requests_.back());
      traffic_.received += static_cast<std::int64_t>(n * sizeof(float));
    }
    std::vector<MPI_Status> statuses(requests_.size());
    {
      const activity::WaitScope waiting("parameter-server pull", -1, servers_ == 1 ? server_rank(0) : -1);
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses.data());
    }
    for (std::size_t i = first_weights; i < statuses.size(); ++i)
      if (statuses[i].MPI_TAG == kLastWeightsTag) stop_agreed_ = true;
    requests_.clear();
    params_.push(params, 0, setup_.param_count);
    ++steps_done_;
    // The servers serve until every worker has finished: ask them for this step's state first.
    if (stop_agreed_ && setup_.state_on_stop && rank_ == 0 && steps_done_ < setup_.steps) state_on_stop_ = request_state();
    if (stop_agreed_ || steps_done_ == setup_.steps) announce_finished();
  }
  void update(float*, float*) override {}
  bool stop_agreed() const override { return stop_agreed_; }
  ExchangeState checkpoint_state() override {
    if (rank_ != 0) throw std::logic_error("parameter server: only worker 0 takes the servers' state");
    if (state_on_stop_) return std::move(*state_on_stop_);
    return request_state();
  }

  // ---- server ----
  void serve() override {
    if (is_worker()) return;
    const int k = rank_ - worker_count_;
    const std::size_t lo = shard_lo_[k], n = shard_hi_[k] - lo;
    const std::vector<Piece>& pieces = shards_[static_cast<std::size_t>(k)];
    Backend& backend = *setup_.backend;
    // weights and step_grads are the optimizer's operands (device memory on a GPU backend); the
    // messages use their host views.
    std::shared_ptr<float> weights = backend.alloc_floats(std::max<std::size_t>(n, 1));
    std::shared_ptr<float> step_grads = backend.alloc_floats(std::max<std::size_t>(n, 1));
    Staging weights_view(backend, n, staged_), grads_view(backend, n, staged_);
    float* const host_weights = weights_view.host(weights.get());
    {
      const activity::WaitScope waiting("parameter-server initial weights", -1, 0);
      MPI_Recv(host_weights, as_int(n), MPI_FLOAT, 0, kInitTag, comm_, MPI_STATUS_IGNORE);
    }
    weights_view.push(weights.get(), 0, n);
    traffic_.received += static_cast<std::int64_t>(n * sizeof(float));
    Optimizer optimizer(backend, n, setup_.optimizer);
    if (setup_.resume) optimizer.restore(shard_of(setup_.resume->optimizer, lo, n));
    // A checkpoint's request, answered between pushes: this shard's weights and optimizer state.
    auto send_state = [&] {
      const Optimizer::State st = optimizer.state();
      const std::int64_t header[3] = {st.steps, static_cast<std::int64_t>(st.first.size()),
                                      static_cast<std::int64_t>(st.second.size())};
      MPI_Send(header, 3, MPI_INT64_T, 0, kStateTag, comm_);
      MPI_Send(host_weights, as_int(n), MPI_FLOAT, 0, kStateTag, comm_);
      MPI_Send(st.first.data(), as_int(st.first.size()), MPI_FLOAT, 0, kStateTag, comm_);
      MPI_Send(st.second.data(), as_int(st.second.size()), MPI_FLOAT, 0, kStateTag, comm_);
    };
    const auto workers = static_cast<std::size_t>(worker_count_);
    std::vector<HostFloats> grads;  // one receive buffer per worker
    for (std::size_t w = 0; w < workers; ++w) grads.emplace_back(n);
    // Each worker's pieces, then the control messages' two slots (Control): one array, one Waitany.
    std::vector<MPI_Request> recv(workers * pieces.size() + Control::kSlots, MPI_REQUEST_NULL);
    std::vector<std::size_t> missing(workers, 0);  // pieces of the posted push not yet arrived
    auto post = [&](std::size_t w) {
      missing[w] = pieces.size();
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const Piece& p = pieces[i];
        MPI_Irecv(grads[w].data() + (p.offset - lo), as_int(p.count), MPI_FLOAT, static_cast<int>(w), p.tag, comm_,
                  &recv[w * pieces.size() + i]);
        traffic_.received += static_cast<std::int64_t>(p.count * sizeof(float));
      }
    };
    // One optimizer step on `gradient` (host memory, n floats), then the weights back to the host.
    auto apply = [&](const float* gradient) {
      const float* operand = gradient;  // host memory is the operand itself on a CPU backend
      if (staged_) {
        float* g = grads_view.host(step_grads.get());
        if (g != gradient) copy_floats(g, gradient, n);
        grads_view.push(step_grads.get(), 0, n);
        operand = step_grads.get();
      }
      optimizer.step(weights.get(), operand);
      backend.synchronize();
      weights_view.pull(weights.get(), 0, n);
    };
    auto send_weights = [&](std::size_t w, int tag) {
      MPI_Send(host_weights, as_int(n), MPI_FLOAT, static_cast<int>(w), tag, comm_);
      traffic_.sent += static_cast<std::int64_t>(n * sizeof(float));
    };
    Control control(comm_, k == 0, setup_.stop_signalled, send_state, pieces, recv, missing, traffic_);
    if (!async_) {
      const float scale = 1.0f / static_cast<float>(worker_count_);
      for (std::int64_t step = 0; step < setup_.steps; ++step) {
        for (std::size_t w = 0; w < workers; ++w) post(w);
        // Every worker's pieces, or every worker's notice that it has finished (a stop). A hang
        // names the first worker still missing.
        for (int w = control.waiting_for(); w >= 0; w = control.waiting_for())
          control.next_event("parameter-server push", w);
        if (control.finished_count() > 0) {
          if (control.finished_count() < workers)
            throw RuntimeError("parameter server: the workers did not stop after the same step (" +
                               std::to_string(step) + " done)");
          break;
        }
        float* acc = grads_view.host(step_grads.get());  // summed in place: apply() copies nothing
        copy_floats(acc, grads[0].data(), n);
        for (std::size_t w = 1; w < workers; ++w) add_floats(acc, grads[w].data(), n);
        scale_floats(acc, n, scale);
        apply(acc);
        const int tag = control.stop_decided() ? kLastWeightsTag : kWeightsTag;  // one decision per step
        for (std::size_t w = 0; w < workers; ++w) send_weights(w, tag);
      }
      control.finish();
      return;
    }
    // Asynchronous: every worker's next push is always posted; apply whichever completes first.
    std::vector<std::int64_t> remaining(workers, setup_.steps), sent_version(workers, 0);
    std::int64_t version = 0;
    for (std::size_t w = 0; w < workers; ++w)
      if (setup_.steps > 0) post(w);
    while (control.finished_count() < workers) {
      const int arrived = control.next_event("parameter-server push (any worker)", -1);
      if (arrived < 0 || missing[static_cast<std::size_t>(arrived)] > 0) continue;
      const auto w = static_cast<std::size_t>(arrived);
      staleness_.push_back(static_cast<double>(version - sent_version[w]));
      apply(grads[w].data());
      ++version;
      send_weights(w, control.stop_decided() ? kLastWeightsTag : kWeightsTag);
      sent_version[w] = version;
      if (--remaining[w] > 0) post(w);
    }
    control.finish();
  }
  Traffic traffic() const override { return traffic_; }
  std::vector<double> staleness() const override { return staleness_; }

 private:
  int server_rank(int k) const { return worker_count_ + k; }
  // The optimizer state of the key range [lo, lo + n) of a whole-buffer state.
  static Optimizer::State shard_of(const Optimizer::State& all, std::size_t lo, std::size_t n) {
    Optimizer::State s;
    s.steps = all.steps;
    const auto cut = [&](const std::vector<float>& v) {
      if (v.empty()) return std::vector<float>{};
      if (v.size() < lo + n) throw RuntimeError("parameter server: a resumed optimizer state of " + std::to_string(v.size()) + " values is too short");
      return std::vector<float>(v.begin() + static_cast<long>(lo), v.begin() + static_cast<long>(lo + n));
    };
    s.first = cut(all.first);
    s.second = cut(all.second);
    return s;
  }
  // Worker 0: every server's shard of weights and optimizer state, put together. The servers
  // answer between pushes; the caller makes sure no worker pushes meanwhile.
  ExchangeState request_state() {
    const int ask = 1;
    for (int k = 0; k < servers_; ++k) MPI_Send(&ask, 1, MPI_INT, server_rank(k), kStateRequestTag, comm_);
    ExchangeState all;
    all.weights.resize(setup_.param_count);
    for (int k = 0; k < servers_; ++k) {
      const activity::WaitScope waiting("parameter-server state for a checkpoint", -1, server_rank(k));
      const std::size_t lo = shard_lo_[k], n = shard_hi_[k] - lo;
      std::int64_t header[3] = {0, 0, 0};
      MPI_Recv(header, 3, MPI_INT64_T, server_rank(k), kStateTag, comm_, MPI_STATUS_IGNORE);
      if (k == 0) all.optimizer.steps = header[0];
      if (header[0] != all.optimizer.steps || (header[1] != 0 && header[1] != static_cast<std::int64_t>(n)) ||
          (header[2] != 0 && header[2] != static_cast<std::int64_t>(n)))
        throw RuntimeError("parameter server: server " + std::to_string(k) + "'s state does not fit its shard");
      MPI_Recv(all.weights.data() + lo, as_int(n), MPI_FLOAT, server_rank(k), kStateTag, comm_, MPI_STATUS_IGNORE);
      for (auto [size, moments] : {std::pair{header[1], &all.optimizer.first}, std::pair{header[2], &all.optimizer.second}}) {
        if (size > 0) moments->resize(setup_.param_count);
        MPI_Recv(size > 0 ? moments->data() + lo : nullptr, as_int(static_cast<std::size_t>(size)), MPI_FLOAT,
                 server_rank(k), kStateTag, comm_, MPI_STATUS_IGNORE);
      }
    }
    return all;
  }
  // Worker: a stop signal here asks the first server to end the run (once).
  void ask_to_stop_if_signalled() {
    if (request_sent_ || stop_agreed_ || !setup_.stop_signalled || !setup_.stop_signalled()) return;
    requests_.push_back(MPI_REQUEST_NULL);
    MPI_Isend(&stop_request_, 1, MPI_INT, server_rank(0), kStopRequestTag, comm_, &requests_.back());
    request_sent_ = true;
  }
  // Worker, after its last step: every server learns it will push no more.
  void announce_finished() {
    finished_notice_[0] = steps_done_;
    finished_notice_[1] = request_sent_ ? 1 : 0;
    for (int k = 0; k < servers_; ++k) {
      requests_.push_back(MPI_REQUEST_NULL);
      MPI_Isend(finished_notice_, 2, MPI_INT64_T, server_rank(k), kFinishedTag, comm_, &requests_.back());
    }
  }
  ExchangeSetup setup_;
  bool async_, staged_;
  Staging params_, grads_;  // workers' host views of the parameter and gradient buffers
  int rank_ = 0, size_ = 1, servers_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL, server_comm_ = MPI_COMM_NULL;
  std::vector<std::size_t> shard_lo_, shard_hi_;
  std::vector<std::vector<Piece>> shards_;                             // [server] pieces, in tag order
  std::vector<std::vector<std::pair<int, std::size_t>>> bucket_pieces_;  // [bucket] (server, index)
  std::vector<MPI_Request> requests_;
  Traffic traffic_;
  std::vector<double> staleness_;
  // Worker: steps waited for, whether it asked to stop, whether its last reply said "last".
  std::int64_t steps_done_ = 0;
  bool request_sent_ = false, stop_agreed_ = false;
  int stop_request_ = 1;                        // the stop request's body
  std::optional<ExchangeState> state_on_stop_;  // worker 0: the servers' state of the stopping step
  std::int64_t finished_notice_[2] = {0, 0};    // the finish notice's body
};

}  // namespace

std::unique_ptr<Exchange> make_parameter_server(const ExchangeSetup& setup, bool asynchronous) {
  if (setup.bf16)
    throw SettingError("exchange_precision", "bf16", "the parameter servers exchange fp32 (bf16: mpi, ring, rhd)");
  if (!setup.buckets || !setup.backend) throw std::logic_error("parameter server: buckets and backend needed");
  return std::make_unique<ParameterServer>(setup, asynchronous);
}

double parameter_server_bucket_seconds(int workers, int servers, double n, const LinkCost& c) {
  const double w = workers, s = servers > 0 ? servers : 1;
  return parameter_server_async_bucket_seconds(workers, servers, n, c) + (w - 1) * n / s * c.add_s_per_byte;
}

double parameter_server_async_bucket_seconds(int workers, int servers, double n, const LinkCost& c) {
  const double w = workers, s = servers > 0 ? servers : 1;
  return 2 * w * n / s * c.seconds_per_byte + 2 * c.latency_s;
}

}  // namespace hpcnn
