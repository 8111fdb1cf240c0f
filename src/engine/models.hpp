// The model zoo: named builders of Graphs (registered by name so --list shows them).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "engine/graph.hpp"

namespace hpcnn {

enum class Activation { Relu, Tanh };

struct ModelConfig {
  Shape input{1, 3, 32, 32};  // per sample
  int classes = 10;
  Activation act = Activation::Relu;  // lenet5 only
  bool loss = true;                   // append softmax cross-entropy
};

struct ModelInfo {
  std::string name;
  std::string description;
  int min_image_size = 1;   // smallest H = W the model accepts
  int native_image_size = 0;  // >0: inputs of another size are resized to this (alexnet: 64)
  std::function<Graph(const ModelConfig&)> build;
};

const std::vector<ModelInfo>& models();
const ModelInfo& find_model(const std::string& name);  // UsageError when unknown
Graph build_model(const std::string& name, const ModelConfig& config);  // finalized

}  // namespace hpcnn
