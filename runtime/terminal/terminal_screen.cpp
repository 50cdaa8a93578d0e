#include "runtime/terminal/terminal_screen.hpp"

#include "messages/json.hpp"

#include <fmt/format.h>
#include <vterm.h>

#include <algorithm>
#include <map>
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
  // What xterm sends for Ctrl with these (the VT220's: Ctrl-2 is NUL, Ctrl-3 ESC,
  // up to Ctrl-7 US, Ctrl-8 DEL; Ctrl-/ is Ctrl-_).
  if (c >= '2' && c <= '8')
    return "\0\x1b\x1c\x1d\x1e\x1f\x7f"[c - '2'];
  if (c == '/')
    return '\x1f';
  return std::nullopt;
}

/// What xterm sends (by default, without modifyOtherKeys) for Enter, Tab, Backspace
/// and Escape with Ctrl or Shift: the key itself (C-Backspace ^H, C-S-Tab as S-Tab),
/// Alt as ESC before it. libvterm writes these as CSI u (CSI 13;5u for C-Enter),
/// which only a program that asked for it reads: bash ran its tail as a command.
/// nullopt: libvterm's is the terminal's (no Ctrl or Shift, S-Tab's CSI Z, the rest).
std::optional<std::string> legacy_modified(VTermKey key, int mod) {
  if (!(mod & (VTERM_MOD_CTRL | VTERM_MOD_SHIFT)))
    return std::nullopt;
  std::string alt = (mod & VTERM_MOD_ALT) ? "\x1b" : "";
  switch (key) {
    case VTERM_KEY_ENTER:
      return alt + "\r";
    case VTERM_KEY_TAB:
      return (mod & VTERM_MOD_SHIFT) ? alt + "\x1b[Z" : alt + "\t";
    case VTERM_KEY_BACKSPACE:
      return alt + ((mod & VTERM_MOD_CTRL) ? "\x08" : "\x7f");
    case VTERM_KEY_ESCAPE:
      return alt + "\x1b";
    default:
      return std::nullopt;
  }
}

/// Whether `c` after 0xC2 makes U+0080..U+009F, a C1 control as UTF-8.
bool c1_continuation(char c) {
  auto b = static_cast<unsigned char>(c);
  return b >= 0x80 && b <= 0x9f;
}

/// How much of `text` is plain from its start: printable characters, \n \r \t \b,
/// CAN (nothing at ground: what a sequence left out became), and whole colour
/// sequences (ESC [ digits m), which set only the pen (a screen is rendered as
/// text). No other sequence and no C1 control as UTF-8: nothing that sets a mode, a
/// tab stop, a scroll region or the cursor's place.
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
    } else if (c < 0x20 ? !(c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == 0x18) : c == 0x7f) {
      return i;
    } else if (c == 0xc2 && i + 1 < text.size() && c1_continuation(text[i + 1])) {
      return i; // U+0080..U+009F: a C1 control (CSI is U+009B)
    }
  }
  return text.size();
}

/// Where feeding `bytes` may start, on a screen of `rows` rows whose parser is between
/// sequences and whose scroll region is the whole screen (ParserWatch): libvterm moves
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

/// What libvterm's parser is in, as far as jp-actors needs to know, followed byte by
/// byte over the whole output (a sequence may be cut anywhere by a pty's reads):
/// whether it is between sequences; whether a scroll region or left and right margins
/// may be set, after which line ends do not scroll the whole screen; the last
/// character printed. And it keeps from libvterm 0.1.4 what crashes or hangs it
/// (pass()): a tool's output must do neither to jp-actors.
struct ParserWatch {
  enum class in { ground, escape, escape_intermediate, csi, osc, string, string_escape };
  in at = in::ground;
  bool region = false;  // DECSTBM with margins (ESC [ r, none, or a reset sets it back)
  bool columns = false; // DECLRMM on (ESC [ ? 69 h)
  // What a fresh terminal is told after a resize (restore()): the modes set or reset
  // (ESC [ ? n h/l, ESC [ n h/l; the last of each, at most 64 of them), the keypad's
  // (ESC = / ESC >), the character sets designated (ESC ( x, ESC ) x), and the shift.
  std::map<int, bool> private_modes, ansi_modes;
  bool keypad = false;
  char g0 = 'B', g1 = 'B';
  bool shifted = false;
  char string_opener = 'P'; // the string being read: ']' (OSC) or 'P' (DCS)
  std::string csi;      // the parameter and intermediate bytes of the CSI being read
  // Past 64 bytes or 15 separators (16 parameters): libvterm 0.1.4 writes a CSI's
  // 17th parameter past its array. Such a CSI is dropped whole, never fed, however
  // many chunks it spans.
  bool csi_too_long = false;
  std::string last;     // the last character printed (UTF-8), for REP
  std::string partial;  // the start of a character being printed

  bool margins() const { return region || columns; }

  bool alternate() const {
    for (int mode : {1049, 1047, 47})
      if (auto it = private_modes.find(mode); it != private_modes.end() && it->second)
        return true;
    return false;
  }

  /// The sequences that set the modes, keypad and character sets seen on a fresh
  /// terminal; not the alternate screen's (the caller's first), nor origin mode
  /// and margins (a fresh terminal has no scroll region, and the program sets it
  /// again as it redraws for the new size).
  std::string restore() const {
    std::string out;
    for (auto& [mode, on] : private_modes)
      if (mode != 1049 && mode != 1047 && mode != 47 && mode != 1048 && mode != 6 && mode != 69)
        out += fmt::format("\x1b[?{}{}", mode, on ? 'h' : 'l');
    for (auto& [mode, on] : ansi_modes)
      out += fmt::format("\x1b[{}{}", mode, on ? 'h' : 'l');
    out += keypad ? "\x1b=" : "\x1b>";
    out += fmt::format("\x1b({}\x1b){}", g0, g1);
    out += shifted ? '\x0e' : '\x0f';
    return out;
  }

  /// `bytes` as libvterm is to get them, the state moved past them: a REP (CSI n b)
  /// replaced by what it repeats (libvterm looped forever on one before any
  /// character, crashed on one after a wide character at the margin; dropped when
  /// nothing was printed yet; `limit`: the most characters it writes, the screen's
  /// cells); a CSI too long, a cut-short or invalid one, DECALN, and a DCS but its
  /// controls, dropped; and an escape sequence the chunk ends inside (up to 4 KiB)
  /// held back in `held` for the next, so that no CSI is fed in part.
  std::string_view pass(std::string_view bytes, size_t limit, std::string& rewritten, std::string& held) {
    size_t copied = 0;              // bytes[0, copied) are in `rewritten`, when it is used
    bool rewriting = false;
    size_t sequence = 0;            // where the escape sequence being read began (a CSI
                                    // being dropped: at this chunk's start)
    in before_sequence = in::ground; // and what was before it
    // bytes[from, end] give way to `with`.
    auto cut = [&](size_t from, size_t end, std::string_view with) {
      if (!rewriting) {
        rewritten.clear();
        rewriting = true;
      }
      rewritten.append(bytes.substr(copied, from - copied));
      rewritten.append(with);
      copied = end + 1;
    };
    // The sequence that ends at bytes[end] (begun in this chunk) gives way to `with`,
    // after a CAN: an ESC before the sequence, which its own ESC would have made
    // void (libvterm's ESC ESC), or an OSC it would have ended, must not go on into
    // what comes after the cut (ESC ESC [ <dropped> P made a DCS of the P).
    // The C0 controls inside it stay: libvterm does them where they come.
    std::string replacement;
    auto replace = [&](size_t end, std::string_view with) {
      replacement.assign(1, '\x18');
      for (size_t k = sequence; k <= end; ++k) {
        auto b = static_cast<unsigned char>(bytes[k]);
        if (b < 0x20 && b != 0x00 && b != 0x18 && b != 0x1a && b != 0x1b)
          replacement += static_cast<char>(b);
      }
      replacement += with;
      cut(sequence, end, replacement);
    };
    // What REPs may write in all, this chunk: a screenful each, and two in all (a
    // program's redraw needs no more; a flood of REPs made 1 MB of each 4 KB chunk).
    size_t repeats_left = 2 * limit;
    auto drop = [&](size_t i) { cut(i, i, {}); }; // byte `i` goes
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto c = static_cast<unsigned char>(bytes[i]);
      // A sequence cut short (by ESC, CAN or SUB) is dropped: libvterm would drop it
      // too, and must not read on in it if a REP after it is replaced.
      bool in_sequence = at == in::csi || at == in::escape || at == in::escape_intermediate;
      if ((c == 0x1b || c == 0x18 || c == 0x1a) && in_sequence && i > sequence && sequence >= copied) {
        replace(i - 1, "");
        at = in::ground; // libvterm is, after the CAN
      }
      if (c == 0x18 || c == 0x1a) { // CAN, SUB: any sequence ends
        at = in::ground;
        continue;
      }
      if (c == 0x0e || c == 0x0f) // SO, SI (G1 or G0), done wherever they come, as C0 controls are
        shifted = c == 0x0e;
      if (c == 0x1b) {
        before_sequence = at != in::string_escape ? at : string_opener == ']' ? in::osc : in::string;
        sequence = i;
      }
      switch (at) {
        case in::ground:
          if (c == 0x1b) {
            at = in::escape;
          } else if (auto next = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
                     c == 0xc2 && !(next >= 0xa0 && next <= 0xbf)) {
            // 0xC2 that does not begin U+00A0..U+00BF. With 0x80..0x9F after it, a C1
            // control as UTF-8, which libvterm 0.1.4 prints as a character of width
            // -1 (in insert mode it scrolls the row by it and crashes): dropped with
            // that byte, as other terminals ignore it. Alone, U+FFFD in its place, as
            // libvterm shows it, whole: its decoder would wait for a second byte
            // across controls and sequences, and take one that comes after them.
            if (next >= 0x80 && next <= 0x9f) {
              cut(i, i + 1, "");
              ++i;
            } else {
              cut(i, i, "\xef\xbf\xbd");
              last = "\xef\xbf\xbd";
              partial.clear();
            }
          } else if (c >= 0x20 && c != 0x7f) {
            printed(c);
          }
          break;
        case in::escape:
        case in::string_escape:
        case in::escape_intermediate:
          // As libvterm 0.1.4's parser: '[', ']' and 'P' open a CSI, an OSC and a DCS
          // even after intermediates; an intermediate is kept; a final ends it (a C1
          // control, ESC @ to ESC _, without intermediates); any other byte is ignored.
          if (at == in::string_escape && c == '\\') {
            at = in::ground;
            break;
          }
          if (at == in::string_escape || c == 0x1b) { // an ESC starts anew, intermediates gone
            at = in::escape;
            if (c == 0x1b)
              break;
          }
          if (c == '[') {
            at = in::csi;
            csi.clear();
            csi_too_long = false;
          } else if (c == ']' || c == 'P') {
            at = c == ']' ? in::osc : in::string;
            string_opener = static_cast<char>(c);
            // A DCS is kept from libvterm (its DECRQSS answer crashed in a printf):
            // nothing but the controls inside it, which a terminal does there too.
            if (c == 'P')
              replace(i, "");
          } else if (at == in::escape && (c == '_' || c == '^' || c == 'X')) {
            // APC, PM and SOS: strings a terminal shows nothing of (kitty's images come
            // as APC), which libvterm 0.1.4 does not know and printed: kept from it
            // as a DCS is.
            at = in::string;
            string_opener = static_cast<char>(c);
            replace(i, "");
          } else if (c >= 0x20 && c <= 0x2f) {
            at = in::escape_intermediate;
          } else if (c >= 0x30 && c <= 0x7e) {
            bool plain = at == in::escape;
            at = in::ground;
            if (plain && c == 'c') { // RIS: everything as at the start
              *this = ParserWatch{};
            } else if (plain && (c == '=' || c == '>')) {
              keypad = c == '=';
            } else if (!plain && i == sequence + 2) {
              // DECALN (ESC # 8), a screen alignment test no program needs, leaves
              // libvterm 0.1.4 to crash at a later character in insert mode: dropped.
              if (c == '8' && bytes[sequence + 1] == '#')
                replace(i, "");
              else if (bytes[sequence + 1] == '(' || bytes[sequence + 1] == ')')
                (bytes[sequence + 1] == '(' ? g0 : g1) = static_cast<char>(c);
            }
          }
          break;
        case in::csi:
          // As libvterm 0.1.4's parser: leader bytes (< = > ?) first, then digits, ';'
          // and ':', then intermediates, then the final; any other byte there makes it
          // invalid, and it ends without effect. A C0 control is done inside it.
          if (c == 0x1b) {
            at = in::escape;
          } else if (c >= 0x80) { // invalid too: it ends there (kept, what follows would be misread)
            at = in::ground;
            if (sequence >= copied)
              replace(i, "");
          } else if (c >= 0x20 && c <= 0x3f) {
            auto leader = [](char x) { return x >= 0x3c && x <= 0x3f; };
            auto intermediate = [](char x) { return x >= 0x20 && x <= 0x2f; };
            bool fits = (leader(static_cast<char>(c)) && std::all_of(csi.begin(), csi.end(), leader)) ||
                        (!leader(static_cast<char>(c)) && !intermediate(static_cast<char>(c)) &&
                         std::none_of(csi.begin(), csi.end(), intermediate)) ||
                        intermediate(static_cast<char>(c));
            if (!fits) { // invalid: it ends here, ignored (dropped, as libvterm would drop it)
              at = in::ground;
              if (sequence >= copied)
                replace(i, "");
            } else if (csi.size() < 64 &&
                       std::count_if(csi.begin(), csi.end(), [](char x) { return x == ';' || x == ':'; }) < 15) {
              csi += static_cast<char>(c);
            } else {
              csi_too_long = true;
            }
          } else if (c >= 0x40 && c <= 0x7e) {
            at = in::ground;
            if (csi_too_long) {
              replace(i, "");
            } else if (c == 'b' && csi.find_first_of("<=>? !\"#$%&'()*+,-./") == std::string::npos) {
              // REP: the sequence (from its ESC, in this chunk) gives way to the character.
              size_t n = 0;
              for (size_t k = 0; k < csi.size() && std::isdigit(static_cast<unsigned char>(csi[k])) && n <= limit; ++k)
                n = n * 10 + static_cast<size_t>(csi[k] - '0');
              n = std::min({std::max<size_t>(n, 1), limit, repeats_left});
              repeats_left -= last.empty() ? 0 : n;
              std::string repeated;
              for (size_t k = 0; k < n && !last.empty(); ++k)
                repeated += last;
              replace(i, repeated);
            } else {
              dispatch(static_cast<char>(c));
            }
          }
          break;
        case in::osc:
        case in::string:
          if (c == 0x1b) {
            at = in::string_escape;
          } else if (c == 0x07) { // BEL ends an OSC and a DCS
            if (at == in::string)
              drop(i);
            at = in::ground;
          } else if (at == in::string && c >= 0x20) {
            drop(i);
          }
          break;
      }
    }
    held.clear();
    // A CSI is never fed in part: held back whole for the next chunk, or past 4 KiB
    // (bytes libvterm skips inside it: NULs, controls) dropped, as one too long is.
    bool open = at == in::escape || at == in::escape_intermediate || at == in::csi || at == in::string_escape;
    if (at == in::csi && (csi_too_long || bytes.size() - sequence > 4096)) {
      csi_too_long = true;
      // Dropped, the rest of it too in the chunks to come; its controls stay, as in
      // one dropped whole (a line feed inside it moves the cursor on each side).
      if (sequence >= copied && sequence < bytes.size())
        replace(bytes.size() - 1, "");
    } else if (open && bytes.size() - sequence <= 4096 && sequence >= copied) {
      held.assign(bytes.substr(sequence));
      at = before_sequence;
      bytes.remove_suffix(held.size());
    }
    if (!rewriting)
      return bytes;
    rewritten.append(bytes.substr(copied));
    return rewritten;
  }

private:
  void printed(unsigned char c) {
    if (c < 0x80) {
      last.assign(1, static_cast<char>(c));
      partial.clear();
    } else if (c >= 0xc0) {
      partial.assign(1, static_cast<char>(c));
    } else if (!partial.empty()) {
      partial += static_cast<char>(c);
      auto lead = static_cast<unsigned char>(partial[0]);
      size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
      if (partial.size() == length)
        last = std::exchange(partial, {});
    }
  }

  void dispatch(char final) {
    if (csi_too_long)
      return;
    bool intermediate = csi.find_first_of(" !\"#$%&'()*+,-./") != std::string::npos;
    if (final == 'r' && !intermediate && csi.find_first_of("<=>?") == std::string::npos)
      region = !csi.empty();
    else if (final == 'p' && csi == "!") // DECSTR, a soft reset: margins go
      region = false;
    else if ((final == 'h' || final == 'l') && !intermediate) {
      bool is_private = csi.starts_with('?');
      auto& modes = is_private ? private_modes : ansi_modes;
      for (size_t at = is_private ? 1 : 0; at <= csi.size();) {
        auto end = std::min(csi.find_first_of(";:", at), csi.size());
        auto text = csi.substr(at, end - at);
        at = end + 1;
        if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
          continue;
        auto mode = std::stoi(text);
        if (modes.size() < 64 || modes.count(mode))
          modes[mode] = final == 'h';
        if (is_private && mode == 69)
          columns = final == 'h';
      }
    }
  }
};

// libvterm 0.1.4 crashes on a wide character in a screen one column wide.
constexpr int min_cols = 2;

} // namespace

struct TerminalScreen::Impl {
  VTerm* vt = nullptr;
  VTermScreen* screen = nullptr;
  // libvterm has one output callback for both replies and typed keys; the keys
  // must not end up in the replies.
  std::string replies;
  std::string keys;
  bool typing = false;
  ParserWatch parser;
  std::string rewritten;     // a chunk's bytes with its REPs replaced (ParserWatch::pass)
  std::string held_sequence; // an escape sequence a chunk ended inside (ParserWatch::pass)
  // The start of a character the last chunk did not finish: libvterm 0.1.4 shows a
  // character cut between two writes as U+FFFD when text came before it.
  std::string held;

  Impl(int rows, int cols) { make(rows, cols); }
  ~Impl() { vterm_free(vt); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  /// A fresh terminal of that size (the one before, if any, freed).
  void make(int rows, int cols) {
    if (vt)
      vterm_free(vt);
    vt = vterm_new(std::max(rows, 1), std::max(cols, min_cols));
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

  /// libvterm 0.1.4 puts a code point per byte of the rest of a write on its stack
  /// (on_text's codepoints[len]): a long write overflowed it. At most 64 KiB at a
  /// time, cut between characters (a sequence may be cut: its parser goes on).
  void write(std::string_view bytes) {
    constexpr size_t slice = 64 * 1024;
    while (!bytes.empty()) {
      size_t n = std::min(bytes.size(), slice);
      while (n < bytes.size() && n > slice - 4 && (static_cast<unsigned char>(bytes[n]) & 0xc0) == 0x80)
        --n; // not inside a character
      vterm_input_write(vt, bytes.data(), n);
      bytes.remove_prefix(n);
    }
  }

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
        auto b = control_byte(*c);
        if (!b) // libvterm would send an escape sequence few programs read
          return Status::fail(fmt::format("unknown key \"{}\": no terminal sends Ctrl with `{}`; Ctrl goes with a "
                                          "letter, a digit from 2 to 8, one of @ [ \\ ] ^ _ / ? or Space, or a named "
                                          "key (C-Left). {}",
                                          name, rest, key_help()));
        if (mod & VTERM_MOD_ALT)
          keys += '\x1b';
        keys += *b;
        return Status::success();
      }
      // As a terminal sends it: Alt as ESC before the character's UTF-8 (libvterm
      // wrote a non-ASCII one's low byte alone, no UTF-8), Shift already applied.
      if (mod & VTERM_MOD_ALT)
        keys += '\x1b';
      append_utf8(keys, *c);
      return Status::success();
    }
    if (lower(rest) == "space") {
      // S-Space is a space, C-Space NUL: libvterm wrote S-Space (and C-S-Space) as
      // CSI 32;2u, which no program reads unasked and bash ran the rest of.
      if (mod & VTERM_MOD_ALT)
        keys += '\x1b';
      keys += (mod & VTERM_MOD_CTRL) ? '\0' : ' ';
      return Status::success();
    }
    if (auto k = named_key(rest)) {
      if (auto legacy = legacy_modified(*k, mod)) {
        keys += *legacy;
        return Status::success();
      }
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
  if (!impl_->held_sequence.empty() || !impl_->held.empty()) {
    joined = std::exchange(impl_->held_sequence, {}) + std::exchange(impl_->held, {});
    joined += bytes;
    bytes = joined;
  }
  auto open = incomplete_utf8_tail(bytes);
  impl_->held.assign(bytes.substr(bytes.size() - open));
  bytes.remove_suffix(open);
  if (bytes.empty())
    return;
  int rows = 0, cols = 0;
  vterm_get_size(impl_->vt, &rows, &cols);
  // What is left out, and the line ends that scroll it off, come before any
  // sequence of this chunk: the state before it is what they meet.
  bool may_leave_out = impl_->parser.at == ParserWatch::in::ground && !impl_->parser.margins();
  bytes = impl_->parser.pass(bytes, static_cast<size_t>(rows) * static_cast<size_t>(cols), impl_->rewritten,
                             impl_->held_sequence);
  if (may_leave_out) {
    VTermPos cursor;
    vterm_state_get_cursorpos(vterm_obtain_state(impl_->vt), &cursor);
    bytes.remove_prefix(scrolled_off(bytes, rows, cursor.row == rows - 1));
  }
  impl_->write(bytes);
}

void TerminalScreen::resize(int rows, int cols) {
  // libvterm 0.1.4's own resize leaves its state broken in many ways (a scroll region
  // past the new size, rows dropped below the cursor, the alternate screen's other
  // buffer, insert mode), and a later erase, scroll or character crashes: the
  // screen is made anew at the new size, the text it showed written into it where
  // it was, and the modes, keypad and character sets set again (ParserWatch). Its
  // program redraws for the new size anyway.
  auto before = render();
  auto& parser = impl_->parser;
  impl_->make(rows, cols);
  rows = std::max(rows, 1);
  std::string out;
  if (parser.alternate())
    out += "\x1b[?1049h";
  // The rows up to the cursor's, the cursor kept on the screen; no wrap of a row
  // wider than the new width.
  int shift = std::max(0, before.cursor_row - (rows - 1));
  out += "\x1b[?7l";
  for (int row = shift; row < static_cast<int>(before.rows.size()) && row - shift < rows; ++row)
    if (!before.rows[row].empty())
      out += fmt::format("\x1b[{}H{}", row - shift + 1, before.rows[row]);
  out += "\x1b[?7h" + parser.restore();
  out += fmt::format("\x1b[{};{}H", before.cursor_row - shift + 1, before.cursor_col + 1);
  // Inside a string (a title being set): the rest of it is read as one again.
  if (parser.at == ParserWatch::in::osc || parser.at == ParserWatch::in::string ||
      parser.at == ParserWatch::in::string_escape)
    out += std::string("\x1b") + parser.string_opener + (parser.at == ParserWatch::in::string_escape ? "\x1b" : "");
  parser.region = parser.columns = false;
  impl_->write(out);
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
