// A control tool (io = "control") whose main thread reads its answers on stdin while
// another thread works for 3 s, then reports on fd 3 (cli_test): it is not waiting
// for input, though its main thread sleeps in a read all along.
#include <chrono>
#include <cstring>
#include <thread>
#include <unistd.h>

#include "tests/program_assert.hpp"

int main() {
  std::thread worker([] {
    for (int i = 0; i < 300; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // Run as a control tool: fd 3 is its channel, and the report goes in whole.
    const char* done = "{\"type\":\"stopped\",\"result\":\"worked\"}\n";
    auto size = static_cast<ssize_t>(std::strlen(done));
    PROGRAM_ASSERT(::write(3, done, static_cast<size_t>(size)) == size);
    ::_exit(0); // the main thread sits in its read
  });
  char answer[256];
  while (::read(0, answer, sizeof answer) > 0) {
  }
  worker.join();
  return 0;
}
