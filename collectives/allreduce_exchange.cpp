// The exchange of the allreduce schemes: every rank is a worker; each gradient bucket is summed
// over the workers by a non-blocking allreduce started the moment backward finishes the bucket;
// after the wait every worker divides by the worker count (so P ranks x batch B step exactly like
// one rank with batch P x B, whose loss is the mean over P x B samples) and runs the same
// optimizer on the same, bit-identical sums: the weights stay identical without being sent.
#include <chrono>

#include "collectives/exchange.hpp"
#include "engine/errors.hpp"

namespace hpcnn {

namespace {

class AllreduceExchange : public Exchange {
 public:
  AllreduceExchange(const ExchangeSetup& s, const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make)
      : buckets_(*s.buckets), count_(s.param_count), optimizer_(*s.backend, s.param_count, s.optimizer) {
    MPI_Comm_dup(s.world, &workers_);
    MPI_Comm_size(workers_, &worker_count_);
    allreduce_ = make(workers_);
  }
  ~AllreduceExchange() override {
    allreduce_.reset();
    MPI_Comm_free(&workers_);
  }
  void init(float*) override {}
  void start_bucket(int b, float*, float* grads) override {
    const Bucket& bucket = buckets_.buckets().at(static_cast<std::size_t>(b));
    allreduce_->start(grads + bucket.offset, bucket.count);
  }
  void progress() override { allreduce_->progress(); }
  void wait(float*, float*) override { allreduce_->wait_all(); }
  void update(float* params, float* grads) override {
    const float scale = 1.0f / static_cast<float>(worker_count_);
    for (std::size_t i = 0; i < count_; ++i) grads[i] *= scale;
    optimizer_.step(params, grads);
  }
  Traffic traffic() const override { return allreduce_->traffic(); }
  double isolated_exchange_seconds(float* grads) override {
    MPI_Barrier(workers_);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t b = 0; b < buckets_.size(); ++b) start_bucket(static_cast<int>(b), nullptr, grads);
    allreduce_->wait_all();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&s, &slowest, 1, MPI_DOUBLE, MPI_MAX, workers_);
    return slowest;
  }

 private:
  const GradientBuckets& buckets_;
  std::size_t count_;
  Optimizer optimizer_;
  std::unique_ptr<Allreduce> allreduce_;
};

}  // namespace

std::unique_ptr<Exchange> make_allreduce_exchange(const ExchangeSetup& setup,
                                                  const std::function<std::unique_ptr<Allreduce>(MPI_Comm)>& make) {
  if (!setup.buckets || !setup.backend) throw std::logic_error("allreduce exchange: buckets and backend needed");
  return std::make_unique<AllreduceExchange>(setup, make);
}

}  // namespace hpcnn
