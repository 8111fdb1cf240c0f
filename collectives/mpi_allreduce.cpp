#include "collectives/mpi_allreduce.hpp"

#include <climits>
#include <string>
#include <vector>

#include "base/activity.hpp"
#include "base/errors.hpp"
#include "collectives/host_buffers.hpp"

namespace hpcnn {

namespace {

int checked_int(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw RuntimeError("allreduce: " + std::to_string(n) + " floats exceed MPI's int count");
  return static_cast<int>(n);
}

// MPI has no bf16 type: the values travel as 16-bit integers and this operation sums them as
// bf16 (commutative: the library may order the additions as it likes, as with MPI_SUM on floats).
void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  add_bf16(static_cast<std::uint16_t*>(inout), static_cast<const std::uint16_t*>(in), static_cast<std::size_t>(*len));
}

class MpiAllreduce : public Allreduce {
 public:
  explicit MpiAllreduce(MPI_Comm comm) {
    MPI_Comm_dup(comm, &comm_);
    MPI_Comm_size(comm_, &size_);
    MPI_Op_create(&bf16_sum, 1, &bf16_op_);
  }
  ~MpiAllreduce() override {
    if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    MPI_Op_free(&bf16_op_);
    MPI_Comm_free(&comm_);
  }
  void start(float* data, std::size_t count) override {
    requests_.push_back(MPI_REQUEST_NULL);
    MPI_Iallreduce(MPI_IN_PLACE, data, checked_int(count), MPI_FLOAT, MPI_SUM, comm_, &requests_.back());
    count_traffic(count * sizeof(float));
  }
  bool sums_bf16() const override { return true; }
  void start_bf16(std::uint16_t* data, std::size_t count) override {
    requests_.push_back(MPI_REQUEST_NULL);
    MPI_Iallreduce(MPI_IN_PLACE, data, checked_int(count), MPI_UINT16_T, bf16_op_, comm_, &requests_.back());
    count_traffic(count * sizeof(std::uint16_t));
  }
  bool progress() override {
    int done = 0;
    MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
    if (done) requests_.clear();
    return done != 0;
  }
  void wait_all() override {
    // One at a time, in the order started, so that a hang names its bucket (the same waiting as
    // MPI_Waitall: every request must complete either way).
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      const activity::WaitScope waiting("MPI_Iallreduce of a bucket", static_cast<int>(i));
      MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
    }
    requests_.clear();
  }
  void run(float* data, std::size_t count) override {
    MPI_Allreduce(MPI_IN_PLACE, data, checked_int(count), MPI_FLOAT, MPI_SUM, comm_);
    count_traffic(count * sizeof(float));
  }
  void run_out_of_place(const float* send, float* recv, std::size_t count) override {
    MPI_Allreduce(send, recv, checked_int(count), MPI_FLOAT, MPI_SUM, comm_);
    count_traffic(count * sizeof(float));
  }
  Traffic traffic() const override { return traffic_; }

 private:
  // The library's messages are invisible to us: count the bus volume of an optimal allreduce.
  void count_traffic(std::size_t message_bytes) {
    const auto bytes = static_cast<std::int64_t>(message_bytes) * 2 * (size_ - 1) / size_;
    traffic_.sent += bytes;
    traffic_.received += bytes;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op bf16_op_ = MPI_OP_NULL;
  int size_ = 1;
  std::vector<MPI_Request> requests_;
  Traffic traffic_;
};

}  // namespace

std::unique_ptr<Allreduce> make_mpi_allreduce(MPI_Comm comm) { return std::make_unique<MpiAllreduce>(comm); }

}  // namespace hpcnn
