// Where the io thread sends a handle's output chunk: on the io thread only while
// the handle's buffer takes it, and every chunk still on its way before it, with
// nothing written to disk; a chunk sent for a worker makes a handle running on the
// io thread leave it before that chunk.
#define CAF_SUITE output_route
#include <caf/test/unit_test.hpp>

#include "actors/output_route.hpp"

using namespace jp;

CAF_TEST(a chunk runs on the io thread only within the room left by the chunks ahead of it) {
  OutputRoute route;
  route.set_room(1000);
  CAF_CHECK(route.send(600));
  CAF_CHECK(!route.send(600)); // 600 ahead: only 400 left
  CAF_CHECK(route.send(400) == false); // and that one made it a worker's too
  // The handle takes the first (its buffer now takes 400 more) and the rest.
  route.set_room(400);
  CAF_CHECK(route.handled(600, false) == false);
  route.set_room(0);
  CAF_CHECK(route.handled(600, false) == false);
  CAF_CHECK(route.handled(400, false) == false);
  CAF_CHECK(!route.send(1)); // no room left: the next makes the spill file
}

CAF_TEST(a chunk that may append more than its size needs room for that too) {
  OutputRoute route;
  route.set_room(100);
  CAF_CHECK(!route.send(95, 8));
  route.handled(95, false);
  route.set_room(100);
  CAF_CHECK(route.send(92, 8));
}

CAF_TEST(no room limit once the buffer writes nothing more before its close) {
  OutputRoute route;
  route.set_room(UINT64_MAX);
  for (int i = 0; i < 100; ++i)
    CAF_CHECK(route.send(1u << 20));
}

CAF_TEST(a handle on the io thread leaves it when a chunk behind was sent for a worker) {
  OutputRoute route;
  route.set_room(1000);
  CAF_CHECK(route.send(900));  // runs on the io thread
  CAF_CHECK(!route.send(900)); // behind it: a worker's
  route.set_room(100);
  CAF_CHECK(route.handled(900, true)); // the first, on the io thread: leave
  CAF_CHECK(!route.handled(900, false)); // the second, on a worker
  // Once asked, not again: the next chunk that fits runs on the io thread.
  route.set_room(1000);
  CAF_CHECK(route.send(10));
  CAF_CHECK(!route.handled(10, true));
}

CAF_TEST(what a worker handled does not make the io thread leave later) {
  OutputRoute route;
  route.set_room(0);
  CAF_CHECK(!route.send(10)); // a worker's
  route.set_room(1000);
  CAF_CHECK(!route.handled(10, false)); // handled there
  CAF_CHECK(route.send(10));
  CAF_CHECK(!route.handled(10, true)); // no stale request to leave
}

CAF_TEST(a control channel chunk is a worker one) {
  OutputRoute route;
  route.set_room(UINT64_MAX);
  CAF_CHECK(route.send(10));
  route.send_for_worker();
  CAF_CHECK(route.handled(10, true));
}

CAF_TEST(no chunk runs on the io thread while a control channel chunk is on its way) {
  // Its lines may append more than its size (one completes a line held before):
  // the room after it is known only once the handle took it.
  OutputRoute route;
  route.set_room(1000);
  route.send_for_worker();
  CAF_CHECK(!route.send(10));
  CAF_CHECK(!route.exit_here());
  route.set_room(990);
  route.other_handled();
  CAF_CHECK(!route.handled(10, false));
  CAF_CHECK(route.send(10));
  CAF_CHECK(route.exit_here());
}

CAF_TEST(an exit runs the handle on the io thread only when its end writes nothing to disk) {
  OutputRoute route;
  route.set_room(1000, 5000);
  CAF_CHECK(route.exit_here());
  CAF_CHECK(route.exit_here(8));
  CAF_CHECK(route.send(600));
  CAF_CHECK(route.exit_here(8)); // the chunk ahead and a terminal's held text fit
  route.set_room(1000, 608);
  CAF_CHECK(!route.exit_here(8)); // close() would write the spill file's tail
  route.set_room(1000, 609);
  CAF_CHECK(route.exit_here(8));
  route.set_room(UINT64_MAX, UINT64_MAX);
  CAF_CHECK(route.exit_here(8));
  CAF_CHECK(!route.handled(600, true));
  route.set_room(UINT64_MAX, 0); // the head full: a tail held for close()
  CAF_CHECK(!route.exit_here());
  route.set_room(7, UINT64_MAX);
  CAF_CHECK(!route.exit_here(8)); // the held text would make the spill file
  CAF_CHECK(route.exit_here(4));
}

CAF_TEST(a handle the io thread runs leaves it before an exit sent for a worker) {
  // The last chunk is the io thread's, the exit behind it a worker's: the handle
  // runs the chunk there and leaves before the exit.
  OutputRoute route;
  route.set_room(UINT64_MAX, 0);
  CAF_CHECK(route.send(100));
  CAF_CHECK(!route.exit_here());
  route.exit_for_worker();
  CAF_CHECK(route.handled(100, true));
}
