// Where the io thread sends a handle's output chunk: to run on the io thread itself
// (io_thread_run_output) or on a worker. The io thread must not wait on the disk,
// so a chunk runs there only when the handle's buffer takes it, and every chunk
// still on its way before it, with no file made and little written
// (OutputBuffer::append_room). A chunk sent for a worker may still find the
// handle running on the io thread: the handle then leaves the io thread before
// that chunk (io_thread_leave). Shared by the io thread's callback and the handle.
#pragma once

#include <atomic>
#include <cstdint>

namespace jp {

class OutputRoute {
public:
  /// io thread: a chunk of `bytes` is sent; whether it may run on the io thread.
  /// `slack`: how much more than `bytes` it may append (a terminal's held text).
  bool send(uint64_t bytes, uint64_t slack = 0) {
    auto ahead = in_flight_.load(); // first: see handled()
    auto room = room_.load();
    in_flight_ += bytes;
    if (ahead + bytes + slack <= room)
      return true;
    to_worker_ = true;
    return false;
  }

  /// io thread: something is sent that must run on a worker.
  void send_for_worker() { to_worker_ = true; }

  /// The handle: `room` is what its buffer takes now (append_room).
  void set_room(uint64_t room) { room_.store(room); }

  /// The handle, after a chunk of `bytes` (its room set): whether, running on the
  /// io thread, it must leave it, a chunk behind this one being a worker's.
  bool handled(uint64_t bytes, bool on_io_thread) {
    // After set_room: send(), reading in_flight first, never misses a chunk's
    // bytes in both (a room stale by them with in_flight already without them).
    in_flight_ -= bytes;
    if (on_io_thread)
      return to_worker_.exchange(false);
    to_worker_ = false; // what was sent for a worker runs on one: this run or the next
    return false;
  }

private:
  std::atomic<uint64_t> room_{0};      // append_room after the chunks handled so far
  std::atomic<uint64_t> in_flight_{0}; // bytes of chunks sent and not yet handled
  std::atomic<bool> to_worker_{false}; // a chunk was sent for a worker
};

} // namespace jp
