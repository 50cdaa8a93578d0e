// A round of an io thread's loop, waited for: what was ready on its descriptors when
// the wait began has had its handler run by its end.
#pragma once

#include <chrono>
#include <future>
#include <memory>

#include "runtime/process/io_thread.hpp"

namespace jp::testing {

/// Returns once `io` has gone round its loop since this call: a post that posts again
/// runs after the completions of the poll the first post interrupted (Asio queues
/// those ahead of the second post), so what was readable then has been read. False
/// after `within`.
inline bool io_went_round(IoThread& io, std::chrono::milliseconds within) {
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  io.post([&io, done] { io.post([done] { done->set_value(); }); });
  return fut.wait_for(within) == std::future_status::ready;
}

} // namespace jp::testing
