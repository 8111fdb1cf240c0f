#include "suites/evaluator.hpp"

#include <chrono>

#include "data/sampler.hpp"

namespace hpcnn {

Network& NetworkSet::get(int batch) {
  std::unique_ptr<Network>& net = nets_[batch];
  if (!net) {
    NetworkOptions no = options_;
    no.batch = batch;
    net = std::make_unique<Network>(backend_, graph_, no);
  }
  return *net;
}

std::vector<std::pair<int, std::uint64_t>> NetworkSet::steps() const {
  std::vector<std::pair<int, std::uint64_t>> out;
  for (const auto& [batch, net] : nets_) out.emplace_back(batch, net->step());
  return out;
}

Evaluator::Evaluator(Backend& backend, const Graph& graph, const NetworkOptions& options, const data::ImageSet& test,
                     const data::Normalization& norm, const data::PipelineOptions& pipeline, int batch, MPI_Comm comm)
    : backend_(backend), nets_(backend, graph, options), loader_(test, norm, pipeline), comm_(comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  batches_ = data::rank_batches(data::epoch_order(test.size(), options.seed, 0, false), batch, rank, size);
  count_ = test.size();
}

Evaluation Evaluator::run(const std::vector<float>& params, std::vector<float> buffers) {
  const auto t0 = std::chrono::steady_clock::now();
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
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, comm_);
  Evaluation e;
  e.loss = sums[0] / double(count_);
  e.acc = 100.0 * sums[1] / double(count_);
  e.seconds = seconds;
  return e;
}

}  // namespace hpcnn
