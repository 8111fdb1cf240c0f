// A registry of named entries (compute backends, SGEMM libraries, exchange schemes): filled on
// first use by the function that registers the built-in ones (a static library drops
// self-registering objects that nobody references), listed in registration order, looked up by
// name. One duplicate policy for all of them: a name registered twice is a programming error.
#pragma once

#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hpcnn {

template <class Info>  // Info has a std::string `name`
class Registry {
 public:
  // `what` names the entries in errors ("backend"); `builtins` registers the built-in ones.
  Registry(const char* what, void (*builtins)(Registry&)) : what_(what), builtins_(builtins) {}

  // Throws std::logic_error when the name is taken.
  void add(Info info) {
    for (const Info& have : entries_)
      if (have.name == info.name)
        throw std::logic_error(std::string(what_) + " '" + info.name + "' registered twice");
    entries_.push_back(std::move(info));
  }

  const std::vector<Info>& all() {
    std::call_once(once_, [this] {
      if (builtins_) builtins_(*this);
    });
    return entries_;
  }

  const Info* find(std::string_view name) {
    for (const Info& e : all())
      if (e.name == name) return &e;
    return nullptr;
  }

  // "a, b, c": for the errors that list what is available.
  std::string names() {
    std::string list;
    for (const Info& e : all()) list.append(list.empty() ? "" : ", ").append(e.name);
    return list;
  }

 private:
  const char* what_;
  void (*builtins_)(Registry&);
  std::once_flag once_;
  std::vector<Info> entries_;
};

}  // namespace hpcnn
