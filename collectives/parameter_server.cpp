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
// Message tags: the piece's index within its shard, kWeightsTag, kInitTag.
// GPU backends (ExchangeMemory::HostStaged): every message is sent from and received into host
// memory (collectives/staging.hpp): a worker copies each bucket's gradients to the host before
// pushing it and the received weights to the device after the wait; a server receives, sums and
// sends on the host and copies to the device only what its optimizer reads and writes.
#include <algorithm>
#include <climits>
#include <string>

#include "collectives/exchange.hpp"
#include "collectives/schedule.hpp"
#include "collectives/staging.hpp"
#include "base/activity.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace {

constexpr int kWeightsTag = 32000;
constexpr int kInitTag = 32001;

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
    // Posted only now: backward has finished reading the weights it received last step.
    for (int k = 0; k < servers_; ++k) {
      requests_.push_back(MPI_REQUEST_NULL);
      const std::size_t n = shard_hi_[k] - shard_lo_[k];
      MPI_Irecv(params_.host(params) + shard_lo_[k], as_int(n), MPI_FLOAT, server_rank(k), kWeightsTag, comm_, &requests_.back());
      traffic_.received += static_cast<std::int64_t>(n * sizeof(float));
    }
    {
      const activity::WaitScope waiting("parameter-server pull", -1, servers_ == 1 ? server_rank(0) : -1);
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    }
    requests_.clear();
    params_.push(params, 0, setup_.param_count);
  }
  void update(float*, float*) override {}

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
    const auto workers = static_cast<std::size_t>(worker_count_);
    std::vector<std::vector<float>> grads(workers, std::vector<float>(n));
    std::vector<MPI_Request> recv(workers * pieces.size(), MPI_REQUEST_NULL);
    auto post = [&](std::size_t w) {
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
        if (g != gradient) std::copy(gradient, gradient + n, g);
        grads_view.push(step_grads.get(), 0, n);
        operand = step_grads.get();
      }
      optimizer.step(weights.get(), operand);
      backend.synchronize();
      weights_view.pull(weights.get(), 0, n);
    };
    auto send_weights = [&](std::size_t w) {
      MPI_Send(host_weights, as_int(n), MPI_FLOAT, static_cast<int>(w), kWeightsTag, comm_);
      traffic_.sent += static_cast<std::int64_t>(n * sizeof(float));
    };
    if (!async_) {
      const float scale = 1.0f / static_cast<float>(worker_count_);
      for (std::int64_t step = 0; step < setup_.steps; ++step) {
        for (std::size_t w = 0; w < workers; ++w) post(w);
        // Worker by worker (the same wait as one MPI_Waitall), so a hang names the worker.
        for (std::size_t w = 0; w < workers; ++w) {
          const activity::WaitScope waiting("parameter-server push", -1, static_cast<int>(w));
          MPI_Waitall(static_cast<int>(pieces.size()), recv.data() + w * pieces.size(), MPI_STATUSES_IGNORE);
        }
        float* acc = grads_view.host(step_grads.get());  // summed in place: apply() copies nothing
        std::copy(grads[0].begin(), grads[0].end(), acc);
        for (std::size_t w = 1; w < workers; ++w)
          for (std::size_t i = 0; i < n; ++i) acc[i] += grads[w][i];
        for (std::size_t i = 0; i < n; ++i) acc[i] *= scale;
        apply(acc);
        for (std::size_t w = 0; w < workers; ++w) send_weights(w);
      }
      return;
    }
    // Asynchronous: every worker's next push is always posted; apply whichever completes first.
    std::vector<std::int64_t> remaining(workers, setup_.steps), sent_version(workers, 0);
    std::vector<std::size_t> missing(workers, pieces.size());
    std::int64_t version = 0;
    for (std::size_t w = 0; w < workers; ++w)
      if (setup_.steps > 0) post(w);
    std::int64_t pushes_left = setup_.steps * static_cast<std::int64_t>(workers);
    while (pushes_left > 0) {
      std::size_t w = 0;
      if (!pieces.empty()) {
        int index = MPI_UNDEFINED;
        const activity::WaitScope waiting("parameter-server push (any worker)");
        MPI_Waitany(static_cast<int>(recv.size()), recv.data(), &index, MPI_STATUS_IGNORE);
        if (index == MPI_UNDEFINED) throw RuntimeError("parameter server: no push left to wait for");
        w = static_cast<std::size_t>(index) / pieces.size();
        if (--missing[w] > 0) continue;
      } else {
        while (remaining[w] == 0) ++w;  // an empty shard: nothing to receive, answer in turn
      }
      staleness_.push_back(static_cast<double>(version - sent_version[w]));
      apply(grads[w].data());
      ++version;
      send_weights(w);
      sent_version[w] = version;
      --pushes_left;
      missing[w] = pieces.size();
      if (--remaining[w] > 0) post(w);
    }
  }
  Traffic traffic() const override { return traffic_; }
  std::vector<double> staleness() const override { return staleness_; }

 private:
  int server_rank(int k) const { return worker_count_ + k; }
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
};

}  // namespace

std::unique_ptr<Exchange> make_parameter_server(const ExchangeSetup& setup, bool asynchronous) {
  if (!setup.buckets || !setup.backend) throw std::logic_error("parameter server: buckets and backend needed");
  return std::make_unique<ParameterServer>(setup, asynchronous);
}

}  // namespace hpcnn
