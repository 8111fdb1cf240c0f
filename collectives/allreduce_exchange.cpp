// The exchange of the allreduce schemes: every rank is a worker; each gradient bucket is summed
// over the workers by a non-blocking allreduce started the moment backward finishes the bucket;
// after the wait every worker divides by the worker count (so P ranks x batch B step exactly like
// one rank with batch P x B, whose loss is the mean over P x B samples) and runs the same
// optimizer on the same, bit-identical sums: the weights stay identical without being sent.
//
// Gradients live where the backend keeps them. ExchangeMemory::Device hands device pointers to
// the scheme (nccl orders itself after the backend's stream; CUDA-aware mpi needs the device
// synchronized first); HostStaged copies each bucket to the host before its allreduce and every
// summed bucket back before the update (collectives/staging.hpp). In bf16 (ExchangeSetup::bf16)
// each bucket is packed into bf16 before its allreduce and widened after the wait.

#include "collectives/exchange.hpp"
#include "collectives/staging.hpp"
#include "base/bf16.hpp"
#include "base/errors.hpp"

namespace hpcnn {

namespace {

class AllreduceExchange : public Exchange {
 public:
  AllreduceExchange(const ExchangeSetup& s, const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make)
      : buckets_(*s.buckets),
        count_(s.param_count),
        backend_(*s.backend),
        optimizer_(*s.backend, s.param_count, s.optimizer),
        staging_(*s.backend, s.param_count, s.memory == ExchangeMemory::HostStaged) {
    MPI_Comm_dup(s.world, &workers_);
    MPI_Comm_size(workers_, &worker_count_);
    allreduce_ = make(workers_);
    if (s.bf16) {
      if (!allreduce_->sums_bf16() || s.memory == ExchangeMemory::Device)
        throw SettingError("exchange_precision", "bf16",
                           "this scheme sums fp32 only (bf16: mpi, ring, rhd, in host memory)");
      packed_.resize(s.param_count);
    }
    // Device pointers: the scheme either orders itself after the backend's stream, or the device
    // must have finished the bucket before start() (Staging::pull synchronizes when staged).
    if (s.memory == ExchangeMemory::Device) sync_before_start_ = !allreduce_->set_producer_stream(backend_.stream());
    if (s.resume) optimizer_.restore(s.resume->optimizer);
  }
  ~AllreduceExchange() override {
    allreduce_.reset();
    MPI_Comm_free(&workers_);
  }
  void init(float*) override {}
  void start_bucket(int b, float*, float* grads) override {
    const Bucket& bucket = buckets_.buckets().at(static_cast<std::size_t>(b));
    if (sync_before_start_) backend_.synchronize();
    staging_.pull(grads, bucket.offset, bucket.count);
    float* host = staging_.host(grads) + bucket.offset;
    if (packed_.empty()) {
      allreduce_->start(host, bucket.count);
    } else {
      std::uint16_t* packed = packed_.data() + bucket.offset;
      for (std::size_t i = 0; i < bucket.count; ++i) packed[i] = bf16_bits(host[i]);
      allreduce_->start_bf16(packed, bucket.count);
    }
    if (staging_.enabled() || !packed_.empty()) started_.push_back(b);
  }
  void progress() override { allreduce_->progress(); }
  void wait(float*, float* grads) override { finish(grads); }
  void update(float* params, float* grads) override {
    backend_.scale(grads, count_, 1.0f / static_cast<float>(worker_count_));
    optimizer_.step(params, grads);
  }
  Traffic traffic() const override { return allreduce_->traffic(); }
  // Every worker applies the same optimizer to the same sums: worker 0's state is everyone's.
  ExchangeState checkpoint_state() override { return {{}, optimizer_.state()}; }
  double isolated_exchange_seconds(float* grads) override {
    // MPI_Wtime, not a C++ clock: in a simulation (simulate/) only MPI's clock is simulated time.
    MPI_Barrier(workers_);
    const double t0 = MPI_Wtime();
    for (std::size_t b = 0; b < buckets_.size(); ++b) start_bucket(static_cast<int>(b), nullptr, grads);
    finish(grads);
    backend_.synchronize();  // staged buckets are back on the device
    double s = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&s, &slowest, 1, MPI_DOUBLE, MPI_MAX, workers_);
    return slowest;
  }

 private:
  // Every operation complete and every summed bucket in the gradients: widened from bf16 and,
  // when staged, back in the device buffer.
  void finish(float* grads) {
    allreduce_->wait_all();
    for (int b : started_) {
      const Bucket& bucket = buckets_.buckets()[static_cast<std::size_t>(b)];
      if (!packed_.empty()) {
        float* host = staging_.host(grads) + bucket.offset;
        const std::uint16_t* packed = packed_.data() + bucket.offset;
        for (std::size_t i = 0; i < bucket.count; ++i) host[i] = bf16_value(packed[i]);
      }
      staging_.push(grads, bucket.offset, bucket.count);
    }
    started_.clear();
  }
  const GradientBuckets& buckets_;
  std::size_t count_;
  Backend& backend_;
  Optimizer optimizer_;
  Staging staging_;
  std::unique_ptr<Allreduce> allreduce_;
  bool sync_before_start_ = false;
  std::vector<int> started_;  // staged or bf16 buckets in flight this step
  std::vector<std::uint16_t> packed_;  // --exchange-precision bf16: the gradients as bf16
};

}  // namespace

std::unique_ptr<Exchange> make_allreduce_exchange(const ExchangeSetup& setup,
                                                  const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make) {
  if (!setup.buckets || !setup.backend) throw std::logic_error("allreduce exchange: buckets and backend needed");
  return std::make_unique<AllreduceExchange>(setup, make);
}

}  // namespace hpcnn
