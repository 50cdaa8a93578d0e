#include "runtime/terminal/terminal_screen.hpp"

#include <vterm.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "messages/json.hpp"

namespace jp {

namespace {

// The code point if `s` is exactly one UTF-8 character.
std::optional<uint32_t> single_code_point(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  auto b = static_cast<unsigned char>(s[0]);
  std::size_t len = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
  if (len == 0 || s.size() != len)
    return std::nullopt;
  uint32_t c = len == 1 ? b : b & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) {
    auto cb = static_cast<unsigned char>(s[i]);
    if ((cb & 0xC0) != 0x80)
      return std::nullopt;
    c = (c << 6) | (cb & 0x3F);
  }
  return c;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<VTermKey> named_key(std::string_view name) {
  static const std::pair<std::string_view, VTermKey> keys[] = {
    {"enter", VTERM_KEY_ENTER},       {"tab", VTERM_KEY_TAB},
    {"backspace", VTERM_KEY_BACKSPACE}, {"escape", VTERM_KEY_ESCAPE},
    {"esc", VTERM_KEY_ESCAPE},        {"up", VTERM_KEY_UP},
    {"down", VTERM_KEY_DOWN},         {"left", VTERM_KEY_LEFT},
    {"right", VTERM_KEY_RIGHT},       {"home", VTERM_KEY_HOME},
    {"end", VTERM_KEY_END},           {"pageup", VTERM_KEY_PAGEUP},
    {"pagedown", VTERM_KEY_PAGEDOWN}, {"insert", VTERM_KEY_INS},
    {"delete", VTERM_KEY_DEL},
  };
  auto l = lower(name);
  for (auto& [n, k] : keys)
    if (l == n)
      return k;
  if (l.size() >= 2 && l.size() <= 3 && l[0] == 'f' &&
      std::all_of(l.begin() + 1, l.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int n = std::stoi(l.substr(1));
    if (n >= 1 && n <= 12)
      return static_cast<VTermKey>(VTERM_KEY_FUNCTION(n));
  }
  return std::nullopt;
}

// Ctrl+character as the classic C0 byte. libvterm 0.1.4 sends CSI-u sequences
// ("ESC [ 105 ; 5 u") for C-i, C-j, C-m, C-[, C-@, C-? and uppercase letters,
// which programs without the fixterms/kitty protocol do not understand.
std::optional<char> control_byte(uint32_t c) {
  if (c == '?')
    return '\x7f';
  if (c == ' ')
    return '\0';
  if (c >= 'a' && c <= 'z')
    c -= 'a' - 'A';
  if (c >= '@' && c <= '_')
    return static_cast<char>(c & 0x1f);
  return std::nullopt;
}

/// How much of `text` is plain from its start: printable characters, \n \r \t \b,
/// and whole colour sequences (ESC [ digits m), which set only the pen (a screen is
/// rendered as text). No other sequence and no C1 control as UTF-8: nothing that
/// sets a mode, a tab stop, a scroll region or the cursor's place.
size_t plain_part(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b) {
      size_t j = i + 1;
      if (j >= text.size() || text[j] != '[')
        return i;
      while (++j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';' || text[j] == ':'))
        ;
      if (j >= text.size() || text[j] != 'm')
        return i;
      i = j;
    } else if (c < 0x20 ? !(c == '\n' || c == '\r' || c == '\t' || c == '\b') : c == 0x7f) {
      return i;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return i; // U+0080..U+009F: a C1 control (CSI is U+009B)
    }
  }
  return text.size();
}

/// Where feeding `bytes` may start, on a screen of `rows` rows whose parser is in a
/// line of plain text and whose scroll region is the whole screen: libvterm moves
/// the whole screen up for each line that scrolls (a memmove of rows x cols cells),
/// and a flood of lines (`yes`, a build's log) cost the actor thread seconds per
/// megabyte while every other handle waited. From there to the end of the chunk's
/// plain part come 2 x rows + 1 line ends: the first `rows` bring the cursor to the
/// bottom wherever it was, as the whole chunk would (not needed when it is on the
/// last row: `at_bottom`), and the other rows + 1 scroll off all that was written
/// before them. What is left out is plain and ends at a carriage return, so what
/// shows is the same.
size_t scrolled_off(std::string_view bytes, int rows, bool at_bottom) {
  auto need = (at_bottom ? 1 : 2) * static_cast<size_t>(rows) + 1;
  size_t at = plain_part(bytes);
  for (; need > 0; --need) {
    if (at == 0)
      return 0;
    at = bytes.rfind('\n', at - 1);
    if (at == std::string_view::npos)
      return 0;
  }
  // From a carriage return: a bare line end keeps the column, which the lines left
  // out set, and the next line starts there.
  at = bytes.rfind('\r', at);
  return at == std::string_view::npos ? 0 : at;
}

/// A scroll region (top and bottom margins) or left and right margins, after which
/// line ends do not scroll the whole screen, as far as the sequences seen tell.
struct Margins {
  bool rows = false; // DECSTBM with margins (ESC [ r, none, sets it back)
  bool cols = false; // DECLRMM on (ESC [ ? 69 h; off: ESC [ ? 69 l)
  bool any() const { return rows || cols; }
  void note(std::string_view bytes) {
    for (auto at = bytes.find("\x1b["); at != std::string_view::npos; at = bytes.find("\x1b[", at + 2)) {
      auto end = bytes.find_first_not_of("0123456789;?", at + 2);
      if (end == std::string_view::npos)
        return;
      auto params = bytes.substr(at + 2, end - at - 2);
      if (bytes[end] == 'r' && params.find('?') == std::string_view::npos)
        rows = !params.empty();
      else if ((bytes[end] == 'h' || bytes[end] == 'l') && params == "?69")
        cols = bytes[end] == 'h';
    }
  }
};

/// Whether the parser is in a line of plain text after `bytes` (`before`: it was
/// before them): their last line is plain (a sequence or a character open at a
/// chunk's end would take the next chunk's first bytes).
bool ends_plain(bool before, std::string_view bytes) {
  auto nl = bytes.rfind('\n');
  if (nl == std::string_view::npos && !before)
    return false;
  auto last = nl == std::string_view::npos ? bytes : bytes.substr(nl + 1);
  return plain_part(last) == last.size() && (last.empty() || static_cast<unsigned char>(last.back()) < 0x80);
}

/// How many bytes at the end of `bytes` begin a UTF-8 character they do not finish.
size_t open_character(std::string_view bytes) {
  for (size_t back = 1; back <= std::min<size_t>(3, bytes.size()); ++back) {
    auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
    if ((c & 0xc0) == 0x80)
      continue; // a continuation byte: its lead is further back
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

} // namespace

struct TerminalScreen::Impl {
  VTerm* vt = nullptr;
  VTermScreen* screen = nullptr;
  // libvterm has one output callback for both replies and typed keys; the keys
  // must not end up in the replies.
  std::string replies;
  std::string keys;
  bool typing = false;
  bool plain_end = true; // the parser is in a line of plain text (ends_plain)
  Margins margins;
  // The start of a character the last chunk did not finish: libvterm 0.1.4 shows a
  // character cut between two writes as U+FFFD when text came before it.
  std::string held;

  Impl(int rows, int cols) {
    vt = vterm_new(std::max(rows, 1), std::max(cols, 1));
    vterm_set_utf8(vt, 1);
    vterm_output_set_callback(
      vt, [](const char* s, size_t len, void* self) {
        auto* impl = static_cast<Impl*>(self);
        (impl->typing ? impl->keys : impl->replies).append(s, len);
      },
      this);
    screen = vterm_obtain_screen(vt);
    vterm_screen_enable_altscreen(screen, 1);
    vterm_screen_reset(screen, 1);
  }
  ~Impl() { vterm_free(vt); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  Status type_key(std::string_view name) {
    int mod = VTERM_MOD_NONE;
    std::string_view rest = name;
    // Modifier prefixes; "C--" is Ctrl+'-', a bare "-" is the character.
    while (rest.size() > 2 && rest[1] == '-') {
      auto m = std::tolower(static_cast<unsigned char>(rest[0]));
      if (m == 'c')
        mod |= VTERM_MOD_CTRL;
      else if (m == 'm')
        mod |= VTERM_MOD_ALT;
      else if (m == 's')
        mod |= VTERM_MOD_SHIFT;
      else
        break;
      rest.remove_prefix(2);
    }
    auto vmod = static_cast<VTermModifier>(mod);
    if (auto c = single_code_point(rest)) {
      if ((mod & VTERM_MOD_SHIFT) && *c >= 'a' && *c <= 'z')
        *c -= 'a' - 'A'; // libvterm ignores Shift on characters
      if (mod & VTERM_MOD_CTRL) {
        if (auto b = control_byte(*c)) {
          if (mod & VTERM_MOD_ALT)
            keys += '\x1b';
          keys += *b;
          return Status::success();
        }
      }
      vterm_keyboard_unichar(vt, *c, vmod);
      return Status::success();
    }
    if (lower(rest) == "space") {
      vterm_keyboard_unichar(vt, ' ', vmod);
      return Status::success();
    }
    if (auto k = named_key(rest)) {
      vterm_keyboard_key(vt, *k, vmod);
      return Status::success();
    }
    return Status::fail("unknown key \"" + std::string(name) + "\". " + key_help());
  }
};

TerminalScreen::TerminalScreen(int rows, int cols)
  : impl_(std::make_unique<Impl>(rows, cols)) {}
TerminalScreen::~TerminalScreen() = default;
TerminalScreen::TerminalScreen(TerminalScreen&&) noexcept = default;
TerminalScreen& TerminalScreen::operator=(TerminalScreen&&) noexcept = default;

void TerminalScreen::feed(std::string_view bytes) {
  std::string joined;
  if (!impl_->held.empty()) {
    joined = std::exchange(impl_->held, {});
    joined += bytes;
    bytes = joined;
  }
  auto open = open_character(bytes);
  impl_->held.assign(bytes.substr(bytes.size() - open));
  bytes.remove_suffix(open);
  if (bytes.empty())
    return;
  // What is left out, and the line ends that scroll it off, come before any
  // sequence of this chunk: the margins before it are those they meet.
  bool margins = impl_->margins.any();
  impl_->margins.note(bytes);
  if (impl_->plain_end && !margins) {
    int rows = 0, cols = 0;
    vterm_get_size(impl_->vt, &rows, &cols);
    VTermPos cursor;
    vterm_state_get_cursorpos(vterm_obtain_state(impl_->vt), &cursor);
    bytes.remove_prefix(scrolled_off(bytes, rows, cursor.row == rows - 1));
  }
  impl_->plain_end = ends_plain(impl_->plain_end, bytes);
  vterm_input_write(impl_->vt, bytes.data(), bytes.size());
}

void TerminalScreen::resize(int rows, int cols) {
  vterm_set_size(impl_->vt, std::max(rows, 1), std::max(cols, 1));
}

Screen TerminalScreen::render(size_t max_bytes) const {
  Screen s;
  vterm_get_size(impl_->vt, &s.height, &s.width);
  for (int row = 0; row < s.height; ++row) {
    std::string line;
    for (int col = 0; col < s.width;) {
      VTermScreenCell cell;
      vterm_screen_get_cell(impl_->screen, VTermPos{row, col}, &cell);
      if (cell.chars[0] == 0)
        line += ' ';
      else if (cell.chars[0] == UINT32_MAX) { // the right half of a wide character
        ++col;
        continue;
      }
      // The base character and at most two combining marks: a cell may hold six
      // code points, 24 bytes, which a tool's output can fill every cell with.
      for (int i = 0; i < std::min(VTERM_MAX_CHARS_PER_CELL, 3) && cell.chars[i] != 0; ++i)
        append_utf8(line, cell.chars[i]);
      col += std::max<int>(cell.width, 1); // a wide character's second cell is skipped
    }
    line.erase(line.find_last_not_of(' ') + 1);
    s.rows.push_back(std::move(line));
  }
  while (!s.rows.empty() && s.rows.back().empty())
    s.rows.pop_back();
  VTermPos pos;
  vterm_state_get_cursorpos(vterm_obtain_state(impl_->vt), &pos);
  s.cursor_row = pos.row;
  s.cursor_col = pos.col;
  size_t total = 0;
  for (auto& row : s.rows)
    total += row.size();
  if (total > max_bytes) {
    // Rows kept outward from the cursor's while they fit; the others emptied.
    std::vector<bool> keep(s.rows.size(), false);
    size_t used = 0;
    int n = static_cast<int>(s.rows.size());
    for (int d = 0; d < 2 * n; ++d) {
      int row = pos.row + (d % 2 == 0 ? d / 2 : -(d / 2 + 1));
      if (row < 0 || row >= n || s.rows[row].size() > max_bytes - used)
        continue;
      used += s.rows[row].size();
      keep[row] = true;
    }
    for (int row = 0; row < n; ++row)
      if (!keep[row]) {
        s.omitted_bytes += s.rows[row].size();
        s.rows[row].clear();
      }
  }
  return s;
}

std::string TerminalScreen::take_replies() {
  return std::exchange(impl_->replies, {});
}

Result<std::string> TerminalScreen::encode_keys(const std::vector<std::string>& names) {
  impl_->typing = true;
  Status st;
  for (auto& name : names)
    if (!(st = impl_->type_key(name)))
      break;
  impl_->typing = false;
  auto keys = std::exchange(impl_->keys, {});
  if (!st)
    return Error{st.error};
  return keys;
}

} // namespace jp
