// Record: ordered, type-checked name -> value pairs over the field table (fields.cpp).
#include "results/record.hpp"

#include <cstdio>
#include <stdexcept>

namespace hpcnn {

const char* type_name(FieldType type) {
  switch (type) {
    case FieldType::Int: return "int";
    case FieldType::Float: return "float";
    case FieldType::String: return "string";
  }
  return "?";
}

namespace {

FieldType type_of(const Value& value) {
  if (std::holds_alternative<std::int64_t>(value)) return FieldType::Int;
  if (std::holds_alternative<double>(value)) return FieldType::Float;
  return FieldType::String;
}

// printf with a format taken from the field table; the buffer grows when the text is long.
template <typename T>
std::string format_value(const char* format, T value) {
  char small[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  int n = std::snprintf(small, sizeof small, format, value);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof small) return std::string(small, static_cast<std::size_t>(n));
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(big.data(), big.size(), format, value);
#pragma GCC diagnostic pop
  big.resize(static_cast<std::size_t>(n));
  return big;
}

}  // namespace

void Record::set(const std::string& name, Value value) {
  const Field* field = find_field(name);
  if (!field) throw std::logic_error("Record::set: unknown field '" + name + "'");
  if (type_of(value) != field->type)
    throw std::logic_error("Record::set: field '" + name + "' is " + type_name(field->type) +
                           ", given " + type_name(type_of(value)));
  for (auto& item : items_) {
    if (item.first == name) {
      item.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(name, std::move(value));
}

const Value* Record::get(const std::string& name) const {
  for (const auto& item : items_)
    if (item.first == name) return &item.second;
  return nullptr;
}

std::optional<double> Record::number(const std::string& name) const {
  const Value* value = get(name);
  if (!value) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(value)) return *d;
  return std::nullopt;
}

std::string Record::text(const std::string& name) const {
  const Value* value = get(name);
  if (!value) return {};
  const Field* field = find_field(name);  // set() guarantees it exists and the type matches
  if (const auto* i = std::get_if<std::int64_t>(value))
    return format_value(field->format, static_cast<long long>(*i));
  if (const auto* d = std::get_if<double>(value)) return format_value(field->format, *d);
  return format_value(field->format, std::get<std::string>(*value).c_str());
}

}  // namespace hpcnn
