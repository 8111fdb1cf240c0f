#include "collectives/message_buffer.hpp"

#include <algorithm>

#include "collectives/gpu_exchanges.hpp"

namespace hpcnn {

namespace {

class HostBuffer : public MessageBuffer {
 public:
  explicit HostBuffer(std::size_t count) : data_(count) {}
  float* data() override { return data_.data(); }
  void fill(const std::vector<float>& host) override { std::copy(host.begin(), host.end(), data_.begin()); }
  void read(std::vector<float>& host) override { host.assign(data_.begin(), data_.end()); }

 private:
  std::vector<float> data_;
};

}  // namespace

bool device_memory_built() { return gpu_exchanges_built(); }

std::unique_ptr<MessageBuffer> make_message_buffer(bool device, std::size_t count) {
  if (!device) return std::make_unique<HostBuffer>(count);
  return make_device_message(count);
}

}  // namespace hpcnn
