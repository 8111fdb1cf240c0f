// Test-set evaluation for real-data training (hpcnn-train --data): the whole test set in inference
// mode, sharded over the ranks, with the training network's parameters and buffers (batch-norm
// running statistics), as PyTorch's model.eval() evaluates.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "data/batch_loader.hpp"
#include "data/image_set.hpp"
#include "engine/backend.hpp"
#include "engine/graph.hpp"
#include "engine/network.hpp"

namespace hpcnn {

// Networks of one kind for every batch size met (the full batch and the short last one), sharing
// one graph and backend. Parameters and buffers are copied in before use.
class NetworkSet {
 public:
  NetworkSet(Backend& backend, const Graph& graph, const NetworkOptions& options)
      : backend_(backend), graph_(graph), options_(options) {}
  Network& get(int batch);
  // (batch, forward passes so far) of every network made, for a training checkpoint.
  std::vector<std::pair<int, std::uint64_t>> steps() const;

 private:
  Backend& backend_;
  const Graph& graph_;
  NetworkOptions options_;  // batch set per network
  std::map<int, std::unique_ptr<Network>> nets_;
};

struct Evaluation {
  double loss = 0, acc = 0, seconds = 0;
};

// Test-set evaluation, sharded over the ranks like training (without shuffling). Collective.
class Evaluator {
 public:
  // `options`: the inference networks' settings (mode Infer; batch set per network).
  Evaluator(Backend& backend, const Graph& graph, const NetworkOptions& options, const data::ImageSet& test,
            const data::Normalization& norm, const data::PipelineOptions& pipeline, int batch, MPI_Comm comm);
  // Batch-norm models normalize with the running statistics in `buffers` (Network::get_buffers of
  // the training network). Every rank's come from its own shard of the training batches: all ranks
  // evaluate with rank 0's, as PyTorch's DistributedDataParallel broadcasts rank 0's buffers.
  Evaluation run(const std::vector<float>& params, std::vector<float> buffers);
  // The memory its loader's cache holds (the test set decoded, with caching).
  std::size_t cache_bytes() const { return loader_.cache_bytes(); }

 private:
  Backend& backend_;
  NetworkSet nets_;
  data::BatchLoader loader_;
  MPI_Comm comm_;
  std::vector<std::vector<std::uint32_t>> batches_;
  std::size_t count_ = 0;
};

}  // namespace hpcnn
