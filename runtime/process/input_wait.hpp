// Is a tool waiting for input? A process blocked reading its terminal or its stdin
// pipe (found in /proc/<pid>/syscall) is asking for something, whether or not it
// printed a recognisable prompt. Used to report a handle as `waiting` and to end an
// apply's or fetch's `wait_ms` early.
#pragma once

#include <sys/types.h>

namespace jp {

/// True when the process that reads the tool's input is blocked in a read (on a
/// terminal, or a poll / select) on it: for a terminal, the foreground job of
/// `leader`'s session, else `leader` itself, reading what `leader`'s fd 0 is; or one
/// of `leader`'s descendants (the first 32) is blocked reading it. False when that
/// cannot be told.
bool waits_for_input(pid_t leader, bool terminal);

} // namespace jp
