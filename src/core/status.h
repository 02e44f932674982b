// Status and Result<T>: how every goodput function reports failure.
//
// A Status is either OK or carries a code and one human-readable message that
// names what was wrong (the field, the line, the flag). Result<T> holds a T or
// a non-OK Status. std::expected would do this, but it is C++23 and we build
// as C++20; this is the small subset we need.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace goodput {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kIoError, kFailedPrecondition, kOutOfRange };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status FailedPrecondition(std::string msg) {
    return Status(Code::kFailedPrecondition, std::move(msg));
  }
  static Status OutOfRange(std::string msg) { return Status(Code::kOutOfRange, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // Requires ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // OK when a value is held.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) { return r.status(); }

}  // namespace goodput

// Returns early from the current function with the error of a Status or Result.
#define GOODPUT_RETURN_IF_ERROR(expr)                                  \
  do {                                                                 \
    if (::goodput::Status _st = ::goodput::ToStatus(expr); !_st.ok()) \
      return _st;                                                      \
  } while (0)

#define GOODPUT_CONCAT_INNER_(a, b) a##b
#define GOODPUT_CONCAT_(a, b) GOODPUT_CONCAT_INNER_(a, b)
#define GOODPUT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

// `GOODPUT_ASSIGN_OR_RETURN(int64_t n, ParseX(...));` declares or assigns lhs
// from a Result, returning its error from the current function.
#define GOODPUT_ASSIGN_OR_RETURN(lhs, expr) \
  GOODPUT_ASSIGN_OR_RETURN_IMPL_(GOODPUT_CONCAT_(_goodput_result_, __LINE__), lhs, expr)
