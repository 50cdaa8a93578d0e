// Errors as values: a Result<T> holds either a T or a message a user can act on.
// (C++20 has no std::expected; caf::expected drags CAF into every header.)
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace jp {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error err) : error_(std::move(err.message)) {}

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const std::string& error() const { return error_; }
  /// The value, or `fallback` when there is none.
  T value_or(T fallback) const& { return value_ ? *value_ : std::move(fallback); }

private:
  std::optional<T> value_;
  std::string error_;
};

/// Result<void>: success or a message.
struct [[nodiscard]] Status {
  std::string error; // "" = ok
  explicit operator bool() const { return error.empty(); }
  /// Whether it succeeded, as Result<T>::ok() (the factory is success()).
  bool ok() const { return error.empty(); }
  static Status success() { return {}; }
  static Status fail(std::string msg) { return {std::move(msg)}; }
  Status() = default;
  Status(Error e) : error(std::move(e.message)) {}

private:
  Status(std::string msg) : error(std::move(msg)) {}
};

} // namespace jp
