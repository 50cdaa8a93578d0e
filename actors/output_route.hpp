// Where the io thread sends a handle's output chunk: to run on the io thread itself
// (io_thread_run_output) or on a worker. The io thread must not wait on the disk,
// so a chunk runs there only when the handle's buffer takes it, and every chunk
// still on its way before it, with no file made and little written
// (OutputBuffer::append_room). A chunk sent for a worker may still find the
// handle running on the io thread: the handle then leaves the io thread before
// that chunk (io_thread_leave). The process's exit, likewise, runs the handle's
// end there only when that writes nothing to disk (exit_here). Shared by the io
// thread's callbacks and the handle.
#pragma once

#include <atomic>
#include <cstdint>

namespace jp {

class OutputRoute {
public:
  /// io thread: a chunk of `bytes` is sent; whether it may run on the io thread.
  /// `slack`: how much more than `bytes` it may append (a terminal's held text).
  bool send(uint64_t bytes, uint64_t slack = 0) {
    auto others = others_in_flight_.load(); // first: see handled()
    auto ahead = in_flight_.load();
    auto room = room_.load();
    in_flight_ += bytes;
    if (others == 0 && ahead + bytes + slack <= room)
      return true;
    to_worker_ = true;
    return false;
  }

  /// io thread: something is sent that must run on a worker and may append what
  /// no chunk's size says (a control channel's lines: one may complete a line
  /// held before). No chunk runs on the io thread until it is handled.
  void send_for_worker() {
    ++others_in_flight_;
    to_worker_ = true;
  }

  /// io thread, as the process's exit is sent (every chunk sent before it): whether
  /// the handle's end may run on the io thread, writing nothing to disk: the chunks
  /// still on their way and `slack` (a terminal's held text, appended at the end)
  /// make no spill file and leave close() nothing to write.
  bool exit_here(uint64_t slack = 0) const {
    auto others = others_in_flight_.load();
    auto ahead = in_flight_.load();
    // Strictly below close_room: at 0 the file's tail may wait for close().
    return others == 0 && ahead + slack <= room_.load() && ahead + slack < close_room_.load();
  }

  /// io thread: the exit is sent for a worker (exit_here said no). A handle the io
  /// thread runs now (a chunk just before the exit) leaves it before the exit.
  void exit_for_worker() { to_worker_ = true; }

  /// The handle: `room` is what its buffer takes now (append_room), `close_room`
  /// what it takes before close() would write to disk (OutputBuffer::close_room).
  void set_room(uint64_t room, uint64_t close_room = UINT64_MAX) {
    room_.store(room);
    close_room_.store(close_room);
  }

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

  /// The handle, after what send_for_worker announced (its room set), on a worker.
  void other_handled() {
    --others_in_flight_;
    to_worker_ = false;
  }

private:
  std::atomic<uint64_t> room_{0};       // append_room after what was handled so far
  std::atomic<uint64_t> close_room_{UINT64_MAX}; // close_room likewise
  std::atomic<uint64_t> in_flight_{0};  // bytes of chunks sent and not yet handled
  std::atomic<uint64_t> others_in_flight_{0}; // send_for_worker's, not yet handled
  std::atomic<bool> to_worker_{false};  // a chunk was sent for a worker
};

} // namespace jp
