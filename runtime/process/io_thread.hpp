// The single thread that does all child-process I/O (Boost.Asio io_context).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace boost::asio { class io_context; }

namespace jp {

class IoThread {
public:
  /// Starts the thread. After each event it polls for the next for `poll` before it
  /// sleeps in the kernel (0: sleeps at once): a wake-up from sleep costs tens of µs
  /// on a virtual machine, a poll costs the CPU it spins (runtime.io_poll_us).
  explicit IoThread(std::chrono::microseconds poll = std::chrono::microseconds{0});
  ~IoThread();  // kills live process groups it watches, stops and joins
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  boost::asio::io_context& context();
  /// Run f on the io thread.
  void post(std::function<void()> f);
  /// True when called on the io thread.
  bool on_this_thread() const;
  /// The io thread this is called on; nullptr on any other thread.
  static IoThread* current();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace jp
