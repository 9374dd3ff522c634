#pragma once
// The error type carried by Result<T> on every path that handles untrusted input.
// The message is value-free by construction: callers build it from paths, kinds and
// type descriptions (see describe.hpp), never from the rejected value.
#include <boost/system/result.hpp>

#include <string>
#include <utility>

namespace sluice::core {

struct Error {
  std::string message;
};

// Thrown only by Result<T>::value() on an error; data paths test the result instead.
class ErrorException : public std::exception {
 public:
  explicit ErrorException(Error e) : error_(std::move(e)) {}
  const char* what() const noexcept override { return error_.message.c_str(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
};

[[noreturn]] inline void throw_exception_from_error(const Error& e,
                                                    const boost::source_location&) {
  throw ErrorException(e);
}

template <class T>
using Result = boost::system::result<T, Error>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace sluice::core
