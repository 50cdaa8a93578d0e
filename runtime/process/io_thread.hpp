// The single thread that does all child-process I/O (Boost.Asio io_context).
#pragma once

#include <functional>
#include <memory>

namespace boost::asio { class io_context; }

namespace jp {

class IoThread {
public:
  IoThread();   // starts the thread
  ~IoThread();  // kills live process groups it watches, stops and joins
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  boost::asio::io_context& context();
  /// Run f on the io thread.
  void post(std::function<void()> f);
  /// True when called on the io thread.
  bool on_this_thread() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace jp
