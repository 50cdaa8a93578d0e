// Whether this process has a controlling terminal. A child inherits ours when it is
// started (the kernel copies it at the fork, and only a session leader can gain one
// later), so one started while we have none can never open /dev/tty: it needs no
// session of its own to be kept from our terminal (process.cpp: a child's own
// process group is then enough, and the session's scheduler group is not paid).
#pragma once

namespace jp {

/// True when /dev/tty opens for us, or when it cannot be told (any failure but
/// "no such device": the caller then keeps its children from the terminal).
bool has_controlling_terminal();

} // namespace jp
