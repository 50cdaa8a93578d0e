// A pty's screen as libvterm sees it: feed it the pty's output, render the visible
// screen as text, collect the terminal's replies to queries, and encode named keys
// in the terminal's current modes. <vterm.h> stays in the .cpp (pimpl).
#pragma once

#include "../../messages/result.hpp"
#include "../../messages/tool_state.hpp"
#include "../../messages/typed_keys.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jp {

class TerminalScreen {
public:
  TerminalScreen(int rows, int cols);
  ~TerminalScreen();
  TerminalScreen(TerminalScreen&&) noexcept;
  TerminalScreen& operator=(TerminalScreen&&) noexcept;

  /// Raw pty output.
  void feed(std::string_view bytes);
  void resize(int rows, int cols);
  /// The visible screen; rows farthest from the cursor are left out (empty, counted
  /// in omitted_bytes) while its text passes `max_bytes`.
  Screen render(size_t max_bytes = SIZE_MAX) const;

  /// What the terminal answered to queries (cursor position, device attributes)
  /// since the last call; the owner writes these bytes back to the pty.
  std::string take_replies();

  /// The bytes typing these keys sends, e.g. {"C-c"} or {"Up", "Enter"}; honours the
  /// modes the program set (application cursor keys). messages/typed_keys.hpp names them.
  Result<std::string> encode_keys(const std::vector<std::string>& names);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace jp
