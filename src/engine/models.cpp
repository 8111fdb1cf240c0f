// The model zoo. Each builder reproduces a published layout so parameter counts can be checked
// against the reference implementations (tests/test_models.cpp).
#include "engine/models.hpp"

#include <stdexcept>

#include "base/errors.hpp"

namespace hpcnn {

namespace {

int activation(Graph& g, int x, Activation act, const std::string& name) {
  return act == Activation::Tanh ? g.tanh(x, name) : g.relu(x, name);
}

int classifier_end(Graph& g, int logits, const ModelConfig& c) {
  return c.loss ? g.softmax_cross_entropy(logits, "loss") : logits;
}

// LeNet-5 (LeCun et al. 1998) as the CPU-cluster paper used it: no padding, max pooling.
Graph lenet5(const ModelConfig& c) {
  Graph g(c.input);
  int x = g.conv(g.input(), 6, 5, 1, 0, true, "conv1");
  x = activation(g, x, c.act, "act1");
  x = g.max_pool(x, 2, 2, 0, "pool1");
  x = g.conv(x, 16, 5, 1, 0, true, "conv2");
  x = activation(g, x, c.act, "act2");
  x = g.max_pool(x, 2, 2, 0, "pool2");
  x = g.fully_connected(x, 120, true, "fc1");
  x = activation(g, x, c.act, "act3");
  x = g.fully_connected(x, 84, true, "fc2");
  x = activation(g, x, c.act, "act4");
  x = g.fully_connected(x, c.classes, true, "fc3");
  classifier_end(g, x, c);
  return g;
}

// AlexNet for 64x64 inputs (the CPU-cluster paper's variant of the torchvision layout).
Graph alexnet(const ModelConfig& c) {
  Graph g(c.input);
  int x = g.conv(g.input(), 64, 11, 4, 5, true, "conv1");
  x = g.relu(x, "relu1");
  x = g.max_pool(x, 2, 2, 0, "pool1");
  x = g.conv(x, 192, 5, 1, 2, true, "conv2");
  x = g.relu(x, "relu2");
  x = g.max_pool(x, 2, 2, 0, "pool2");
  x = g.conv(x, 384, 3, 1, 1, true, "conv3");
  x = g.relu(x, "relu3");
  x = g.conv(x, 256, 3, 1, 1, true, "conv4");
  x = g.relu(x, "relu4");
  x = g.conv(x, 256, 3, 1, 1, true, "conv5");
  x = g.relu(x, "relu5");
  x = g.max_pool(x, 2, 2, 0, "pool5");
  x = g.dropout(x, 0.5f, "drop6");
  x = g.fully_connected(x, 4096, true, "fc6");
  x = g.relu(x, "relu6");
  x = g.dropout(x, 0.5f, "drop7");
  x = g.fully_connected(x, 4096, true, "fc7");
  x = g.relu(x, "relu7");
  x = g.fully_connected(x, c.classes, true, "fc8");
  classifier_end(g, x, c);
  return g;
}

int conv_bn(Graph& g, int x, int out, int k, int stride, int pad, const std::string& name) {
  x = g.conv(x, out, k, stride, pad, false, name);
  return g.batch_norm(x, name + ".bn");
}

// torchvision BasicBlock: 3x3 - bn - relu - 3x3 - bn, + shortcut, relu.
int basic_block(Graph& g, int x, int in, int out, int stride, const std::string& name) {
  int y = conv_bn(g, x, out, 3, stride, 1, name + ".conv1");
  y = g.relu(y, name + ".relu1");
  y = conv_bn(g, y, out, 3, 1, 1, name + ".conv2");
  int shortcut = x;
  if (stride != 1 || in != out) shortcut = conv_bn(g, x, out, 1, stride, 0, name + ".downsample");
  y = g.add(y, shortcut, name + ".add");
  return g.relu(y, name + ".relu2");
}

// torchvision Bottleneck (v1.5: the stride sits on the 3x3 convolution).
int bottleneck(Graph& g, int x, int in, int width, int stride, const std::string& name) {
  const int out = width * 4;
  int y = conv_bn(g, x, width, 1, 1, 0, name + ".conv1");
  y = g.relu(y, name + ".relu1");
  y = conv_bn(g, y, width, 3, stride, 1, name + ".conv2");
  y = g.relu(y, name + ".relu2");
  y = conv_bn(g, y, out, 1, 1, 0, name + ".conv3");
  int shortcut = x;
  if (stride != 1 || in != out) shortcut = conv_bn(g, x, out, 1, stride, 0, name + ".downsample");
  y = g.add(y, shortcut, name + ".add");
  return g.relu(y, name + ".relu3");
}

Graph resnet(const ModelConfig& c, bool bottleneck_blocks, const int (&blocks)[4], bool cifar_stem) {
  Graph g(c.input);
  int x;
  if (cifar_stem) {
    x = conv_bn(g, g.input(), 64, 3, 1, 1, "conv1");
    x = g.relu(x, "relu");
  } else {
    x = conv_bn(g, g.input(), 64, 7, 2, 3, "conv1");
    x = g.relu(x, "relu");
    x = g.max_pool(x, 3, 2, 1, "maxpool");
  }
  int channels = 64;
  const int widths[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int b = 0; b < blocks[stage]; ++b) {
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
      if (bottleneck_blocks) {
        x = bottleneck(g, x, channels, widths[stage], stride, name);
        channels = widths[stage] * 4;
      } else {
        x = basic_block(g, x, channels, widths[stage], stride, name);
        channels = widths[stage];
      }
    }
  }
  x = g.global_avg_pool(x, "avgpool");
  x = g.fully_connected(x, c.classes, true, "fc");
  classifier_end(g, x, c);
  return g;
}

constexpr int kResnet18Blocks[4] = {2, 2, 2, 2};
constexpr int kResnet50Blocks[4] = {3, 4, 6, 3};

}  // namespace

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> list = {
      {"lenet5", "LeNet-5: 2 conv 5x5 + 3 fc, no padding (--act relu|tanh)", 12, 0, lenet5},
      {"alexnet", "AlexNet for 64x64 inputs (smaller inputs are resized to 64x64)", 64, 64, alexnet},
      {"resnet18", "ResNet-18, torchvision layout (7x7/2 stem + max pool)", 32, 0,
       [](const ModelConfig& c) { return resnet(c, false, kResnet18Blocks, false); }},
      {"resnet50", "ResNet-50 v1.5, torchvision layout (7x7/2 stem + max pool)", 32, 0,
       [](const ModelConfig& c) { return resnet(c, true, kResnet50Blocks, false); }},
      {"resnet18-cifar", "ResNet-18 with a 3x3/1 stem and no max pool (CIFAR)", 8, 0,
       [](const ModelConfig& c) { return resnet(c, false, kResnet18Blocks, true); }},
      {"resnet50-cifar", "ResNet-50 with a 3x3/1 stem and no max pool (CIFAR)", 8, 0,
       [](const ModelConfig& c) { return resnet(c, true, kResnet50Blocks, true); }},
  };
  return list;
}

const ModelInfo& find_model(const std::string& name) {
  std::string available;
  for (const ModelInfo& m : models()) {
    if (m.name == name) return m;
    available += (available.empty() ? "" : ", ") + m.name;
  }
  throw UsageError("unknown model '" + name + "' (available: " + available + ")");
}

Graph build_model(const std::string& name, const ModelConfig& config) {
  const ModelInfo& info = find_model(name);
  if (config.input.h < info.min_image_size || config.input.w < info.min_image_size)
    throw UsageError("model '" + name + "' needs images of at least " +
                     std::to_string(info.min_image_size) + "x" + std::to_string(info.min_image_size) +
                     ", got " + std::to_string(config.input.h) + "x" + std::to_string(config.input.w));
  if (config.classes < 2) throw UsageError("a classifier needs at least 2 classes");
  Graph g = info.build(config);
  g.finalize();
  return g;
}

}  // namespace hpcnn
