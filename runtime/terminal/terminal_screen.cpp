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

} // namespace

struct TerminalScreen::Impl {
  VTerm* vt = nullptr;
  VTermScreen* screen = nullptr;
  // libvterm has one output callback for both replies and typed keys; the keys
  // must not end up in the replies.
  std::string replies;
  std::string keys;
  bool typing = false;

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
