#include "runtime/terminal/terminal_text.hpp"

#include "messages/json.hpp"

#include <algorithm>
#include <string>

namespace jp {

namespace {

constexpr unsigned char ESC = 0x1b;
constexpr unsigned char CAN = 0x18; // CAN and SUB abort a sequence
constexpr unsigned char SUB = 0x1a;

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

} // namespace

// Emits one character; a held CR is decided first: CR LF is one line break; a lone
// CR after text on the line (a progress bar redrawing it) is kept, for the look to
// redraw the line (readable_text); at the start of a line (after CR LF and a mode
// change, as readline writes) it moves nothing.
void TerminalText::put(std::string& out, char c) {
  if (alt_screen_) {
    pending_cr_ = false;
    return;
  }
  if (pending_cr_) {
    pending_cr_ = false;
    if (c == '\n') {
      out += '\n';
      at_line_start_ = true;
      column_ = cell_ = 0;
      ++rows_down_;
      return;
    }
    resolve_cr(out);
  }
  out += c;
  at_line_start_ = c == '\n';
  if (c == '\n') {
    column_ = cell_ = 0;
    ++rows_down_;
  } else if (c == '\t') {
    column_ = (column_ / 8 + 1) * 8;
    cell_ = (cell_ / 8 + 1) * 8; // the look's cells too: a tab takes those to its stop
  } else if (c == '\b') {
    column_ -= column_ > 0;
    cell_ -= cell_ > 0;
  } else if (!continuation(static_cast<unsigned char>(c))) {
    ++column_;
    ++cell_;
  }
}

// A lone CR after text: back to the line's start, for the look to redraw it -- unless
// the text ran past the terminal's width, where a terminal had wrapped it to a new row
// and the CR returns to that row (readline's way of wrapping a long input line).
void TerminalText::resolve_cr(std::string& out) {
  if (at_line_start_)
    return;
  bool wrapped = cols_ > 0 && column_ >= static_cast<std::size_t>(cols_);
  out += wrapped ? '\n' : '\r';
  at_line_start_ = wrapped;
  rows_down_ += wrapped;
  column_ = cell_ = 0;
}

// A CSI that redraws the line (erase in line K; cursor to column G, right C, left D),
// kept whole for the look to apply; its parameters are digits only.
void TerminalText::put_line_edit(std::string& out, unsigned char final_byte) {
  if (alt_screen_ || csi_.find_first_not_of("0123456789") != std::string::npos)
    return;
  if (pending_cr_) {
    pending_cr_ = false;
    resolve_cr(out);
  }
  out += "\x1b[";
  out += csi_;
  out += static_cast<char>(final_byte);
  // N, 1 when none (or past what a line could be)
  std::size_t n = csi_.empty() || csi_.size() > 4 ? 1 : std::max(1, std::stoi(csi_));
  if (final_byte == 'G') {
    column_ = cell_ = n - 1;
  } else if (final_byte == 'E' || final_byte == 'F') {
    column_ = cell_ = 0;
  } else if (final_byte == 'C') {
    column_ += n;
    cell_ += n;
  } else if (final_byte == 'D') {
    column_ -= std::min(n, column_);
    cell_ -= std::min(n, cell_);
  }
  // Another line: a cursor restored goes back to the one it was saved on.
  if (final_byte == 'A' || final_byte == 'F')
    rows_down_ -= static_cast<std::ptrdiff_t>(n);
  else if (final_byte == 'B' || final_byte == 'E')
    rows_down_ += static_cast<std::ptrdiff_t>(n);
}

void TerminalText::text_byte(std::string& out, unsigned char c) {
  switch (c) {
    case ESC:
      state_ = st::esc;
      seq_len_ = 1;
      return;
    case '\r':
      pending_cr_ = true; // CR CR LF is still one line break
      return;
    case '\n':
    case '\t':
      put(out, static_cast<char>(c));
      return;
    case '\b':
      // Kept, for the look to move back within the line (readable_text): what came
      // before it may be a kept CR or erase-line, no character to take away here.
      put(out, '\b');
      return;
    default:
      if (c < 0x20 || c == 0x7f)
        return; // BEL and the other controls mean nothing in text
      put(out, static_cast<char>(c));
  }
}

void TerminalText::step(std::string& out, unsigned char c) {
  if (state_ != st::text) {
    if (++seq_len_ > max_sequence) {
      state_ = st::text;
      text_byte(out, c);
      return;
    }
    if (c == CAN || c == SUB) {
      state_ = st::text;
      return;
    }
  }
  switch (state_) {
    case st::text:
      text_byte(out, c);
      return;
    case st::esc:
    case st::esc_intermediate:
      if (state_ == st::esc && c == '[') {
        state_ = st::csi;
        csi_.clear();
      } else if (state_ == st::esc && c == ']') {
        state_ = st::string;
        osc_ = true;
      } else if (state_ == st::esc && (c == 'P' || c == 'X' || c == '^' || c == '_')) {
        state_ = st::string;
        osc_ = false;
      } else if (c >= 0x20 && c <= 0x2f) {
        state_ = st::esc_intermediate; // e.g. ESC ( B
      } else if (c >= 0x30 && c <= 0x7e) {
        state_ = st::text; // final byte: ESC 7, ESC =, ESC M, ...
        if ((c == '7' || c == '8') && seq_len_ == 2)
          save_or_restore(out, c == '7');
      } else {
        in_sequence_other(out, c);
      }
      return;
    case st::csi:
      if (c >= 0x40 && c <= 0x7e) {
        state_ = st::text;
        if (std::string_view("KGCDABEFP@X").find(static_cast<char>(c)) != std::string_view::npos ||
            (c == 'J' && (csi_.empty() || csi_ == "0")))
          put_line_edit(out, c);
        else if (c == 'h' || c == 'l')
          switch_screen(out, c);
        else if (c == 'H' || c == 'f' || c == 'd')
          leave_line(out);
        else if ((c == 's' || c == 'u') && csi_.empty())
          save_or_restore(out, c == 's');
      } else if (c < 0x20 || c > 0x3f) { // not a parameter or intermediate byte
        in_sequence_other(out, c);
      } else {
        csi_ += static_cast<char>(c); // bounded by max_sequence
      }
      return;
    case st::string:
      if (c == ESC)
        state_ = st::string_esc;
      else if (c == 0x07 && osc_)
        state_ = st::text;
      return;
    case st::string_esc:
      state_ = st::text;
      if (c != '\\') { // an ESC not starting ST ends the string and starts a sequence
        text_byte(out, ESC);
        step(out, c);
      }
      return;
  }
}

// CSI ? 1049 h (or 47, 1047; among other modes set at once): the alternate screen
// is shown; `l`: the normal one again.
void TerminalText::switch_screen(std::string& out, unsigned char final_byte) {
  if (csi_.empty() || csi_[0] != '?')
    return;
  bool alternate = false;
  for (std::size_t at = 1; at <= csi_.size();) {
    auto end = std::min(csi_.find(';', at), csi_.size());
    auto mode = csi_.substr(at, end - at);
    alternate = alternate || mode == "47" || mode == "1047" || mode == "1049";
    at = end + 1;
  }
  bool to_alt = final_byte == 'h';
  if (!alternate || to_alt == alt_screen_)
    return;
  if (to_alt) {
    if (pending_cr_) {
      pending_cr_ = false;
      resolve_cr(out);
    }
    if (!at_line_start_)
      put(out, '\n');
    for (char ch : std::string_view("[jp-actors: a full-screen program took the terminal; a look shows its screen "
                                    "(`screen`) until it leaves]\n"))
      put(out, ch);
    alt_screen_ = true;
  } else {
    alt_screen_ = false;
    pending_cr_ = false;
    for (char ch : std::string_view("[jp-actors: the full-screen program left the terminal]\n"))
      put(out, ch);
  }
}

// A move to a place on the screen (CSI H, f, d): where it lands is not followed here
// (the screen is exact), but the line it leaves is ended, so that what comes next
// is never joined to it (top's rows).
void TerminalText::leave_line(std::string& out) {
  moved_away_ = true;
  if (alt_screen_)
    return;
  if (pending_cr_) {
    pending_cr_ = false;
    resolve_cr(out);
  }
  if (!at_line_start_)
    put(out, '\n');
}

// The cursor saved (ESC 7, CSI s) or restored (ESC 8, CSI u). Restored: back to the
// line it was saved on (CSI A or B, by the lines the text moved since) and its place
// there (CSI G): a spinner redrawn in place, a header redrawn above. Restored after a
// move to a place on the screen (apt's progress line at the bottom): that line is
// ended, and the text goes on on a line of its own.
void TerminalText::save_or_restore(std::string& out, bool save) {
  if (save) {
    saved_cell_ = cell_;
    rows_down_ = 0;
    moved_away_ = false;
    return;
  }
  if (!saved_cell_)
    return;
  if (moved_away_) {
    leave_line(out);
    moved_away_ = false;
    return;
  }
  // Back up or down to its line, then to its place on it.
  if (auto rows = rows_down_; rows != 0) {
    csi_ = std::to_string(rows > 0 ? rows : -rows);
    put_line_edit(out, rows > 0 ? 'A' : 'B');
  }
  csi_ = std::to_string(*saved_cell_ + 1);
  put_line_edit(out, 'G');
  rows_down_ = 0;
}

// A byte that does not belong to the ESC/CSI sequence being read.
void TerminalText::in_sequence_other(std::string& out, unsigned char c) {
  if (c == ESC) {
    state_ = st::esc; // a new sequence replaces the unfinished one
    seq_len_ = 1;
  } else if (c < 0x20) {
    text_byte(out, c); // terminals execute C0 controls inside sequences
  } else if (c != 0x7f) {
    state_ = st::text; // not a sequence after all
    text_byte(out, c);
  }
}

std::string TerminalText::feed(std::string_view bytes) {
  std::string out = std::move(held_utf8_);
  held_utf8_.clear();
  for (char c : bytes)
    step(out, static_cast<unsigned char>(c));
  if (auto n = incomplete_utf8_tail(out); n > 0) {
    held_utf8_ = out.substr(out.size() - n);
    out.resize(out.size() - n);
  }
  return out;
}

std::string TerminalText::flush() {
  std::string out = std::move(held_utf8_);
  held_utf8_.clear();
  if (pending_cr_ && !at_line_start_)
    out += '\r';
  pending_cr_ = false;
  column_ = cell_ = 0;
  at_line_start_ = true;
  alt_screen_ = false;
  state_ = st::text;
  seq_len_ = 0;
  saved_cell_.reset();
  moved_away_ = false;
  return out;
}

} // namespace jp
