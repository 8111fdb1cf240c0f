// Parameter counts of every model against the published layouts (torchvision / the papers), and
// shape rules (minimum input size, resizing).
#include <gtest/gtest.h>

#include "base/errors.hpp"
#include "engine/models.hpp"

using namespace hpcnn;

namespace {
std::size_t params(const std::string& model, Shape input, int classes = 10) {
  ModelConfig c;
  c.input = input;
  c.classes = classes;
  return build_model(model, c).param_count();
}
}  // namespace

TEST(Models, ParameterCountsMatchReferenceLayouts) {
  EXPECT_EQ(params("lenet5", {1, 3, 32, 32}), 62006u);
  EXPECT_EQ(params("alexnet", {1, 3, 64, 64}), 23490378u);
  EXPECT_EQ(params("resnet18", {1, 3, 32, 32}), 11181642u);
  EXPECT_EQ(params("resnet50", {1, 3, 32, 32}), 23528522u);
  // torchvision counts with the 3x3 stem: 7x7x3x64 weights replaced by 3x3x3x64.
  EXPECT_EQ(params("resnet18-cifar", {1, 3, 32, 32}), 11181642u - 9408u + 1728u);
  EXPECT_EQ(params("resnet50-cifar", {1, 3, 32, 32}), 23528522u - 9408u + 1728u);
}

TEST(Models, ResnetParameterCountIndependentOfImageSize) {
  for (int size : {32, 64, 224}) {
    EXPECT_EQ(params("resnet18", {1, 3, size, size}), 11181642u) << size;
    EXPECT_EQ(params("resnet50", {1, 3, size, size}), 23528522u) << size;
  }
  // ImageNet classifier head: torchvision's published 11,689,512 and 25,557,032.
  EXPECT_EQ(params("resnet18", {1, 3, 224, 224}, 1000), 11689512u);
  EXPECT_EQ(params("resnet50", {1, 3, 224, 224}, 1000), 25557032u);
}

TEST(Models, LenetOnMnistShape) {
  // conv1 1*25*6+6, conv2 6*25*16+16, fc1 16*4*4*120+120, fc2 120*84+84, fc3 84*10+10
  EXPECT_EQ(params("lenet5", {1, 1, 28, 28}), 156u + 2416u + 30840u + 10164u + 850u);
}

TEST(Models, TanhActivationKeepsCountAndUsesTanh) {
  ModelConfig c;
  c.act = Activation::Tanh;
  const Graph g = build_model("lenet5", c);
  EXPECT_EQ(g.param_count(), 62006u);
  int tanh_nodes = 0;
  for (const Node& n : g.nodes()) tanh_nodes += n.kind == OpKind::Tanh;
  EXPECT_EQ(tanh_nodes, 4);
}

TEST(Models, RejectsTooSmallInputsAndUnknownNames) {
  ModelConfig c;
  c.input = {1, 3, 16, 16};
  EXPECT_THROW(build_model("resnet18", c), UsageError);
  EXPECT_THROW(build_model("alexnet", c), UsageError);
  EXPECT_THROW(build_model("vgg16", c), UsageError);
}

TEST(Models, ParametersLaidOutInBackwardOrder) {
  const Graph g = build_model("resnet18", ModelConfig{});
  // The classifier's parameters come first, the stem's last; offsets are contiguous.
  ASSERT_FALSE(g.params().empty());
  EXPECT_EQ(g.node(g.params().front().node).name, "fc");
  EXPECT_EQ(g.node(g.params().back().node).name, "conv1");
  std::size_t expect = 0;
  int last_node = 1 << 30;
  for (const ParamSpec& p : g.params()) {
    EXPECT_EQ(p.offset, expect);
    expect += p.count;
    EXPECT_LE(p.node, last_node);
    last_node = p.node;
  }
  EXPECT_EQ(expect, g.param_count());
}
