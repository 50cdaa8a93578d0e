// Is a tool waiting for input? A process blocked reading its terminal or its stdin
// pipe (found in /proc/<pid>/syscall) is asking for something, whether or not it
// printed a recognisable prompt. Used to report a handle as `waiting` and to end an
// apply's or fetch's `wait_ms` early.
#pragma once

#include <cstdint>
#include <sys/types.h>

namespace jp {

/// Which file a tool's input is (its stdin pipe, or its terminal), as stat has it.
struct InputFile {
  uint64_t dev = 0;
  uint64_t ino = 0;
};

/// The process blocked reading the tool's input, if one is: for a terminal, the
/// foreground job of `leader`'s session (in a read, or a poll / select), else
/// `leader` itself, reading what `leader`'s fd 0 is; or one of `leader`'s
/// descendants (the first 32) blocked reading it (on a terminal, polling it too when
/// in the foreground job). 0 when none is, or that cannot be told. `brief_poll`, if
/// given: set when the reader is in a poll that ends within a second by itself (it
/// may be a program looking for a key between frames of its progress).
/// `input`, where known, is what the tool's input is: `leader`'s fd 0 may be another
/// file by now (a shell reading a loop's input, `done < <(...)`, is no question).
pid_t input_reader(pid_t leader, bool terminal, bool* brief_poll = nullptr, const InputFile* input = nullptr);

/// How often `leader` and its descendants (the first 32), each thread of them, have
/// run, summed: the same twice, none of them woke between.
uint64_t group_run_count(pid_t leader);

} // namespace jp
