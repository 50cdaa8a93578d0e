#include "runtime/terminal/readable_text.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <locale.h>
#include <vector>
#include <wchar.h>

namespace jp {

namespace {

constexpr char ESC = '\x1b';
// An OSC or DCS string longer than this, or not ended on its line, is not one: only
// its introducer is dropped, so a stray ESC ] cannot swallow the output.
constexpr size_t max_string = 4096;
// A longer line is handed over in blocks of this many characters, a redraw reaching
// back to its block's start only (a look's content may be 16 MiB on one line: its
// cells would take 16 times that).
constexpr size_t max_cells = 16384;

bool control(unsigned char c) {
  return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
}

bool in(char c, unsigned char lo, unsigned char hi) {
  auto u = static_cast<unsigned char>(c);
  return u >= lo && u <= hi;
}

/// The bytes of the character at `i`: a whole UTF-8 character, else one byte.
size_t char_length(std::string_view s, size_t i) {
  auto lead = static_cast<unsigned char>(s[i]);
  size_t n = lead < 0xC2 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF5 ? 4 : 1;
  if (n > s.size() - i)
    return 1;
  for (size_t k = 1; k < n; ++k)
    if (!in(s[i + k], 0x80, 0xBF))
      return 1;
  return n;
}

/// The columns character `ch` (one, as char_length cut it) takes on a terminal: 2 for
/// a wide one (CJK, most emoji), 0 for a combining mark, else 1; as the C library's
/// own UTF-8 locale has them, whatever the process's locale (1 where it has none).
int columns(std::string_view ch) {
  if (ch.size() < 2)
    return 1;
  auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(ch[k])); };
  uint32_t cp = ch.size() == 2   ? (b(0) & 0x1F) << 6 | (b(1) & 0x3F)
                : ch.size() == 3 ? (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F)
                                 : (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
  static const locale_t utf8 = ::newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  if (utf8 == locale_t{})
    return 1;
  auto before = ::uselocale(utf8);
  int w = ::wcwidth(static_cast<wchar_t>(cp));
  ::uselocale(before);
  return w < 0 ? 1 : std::min(w, 2);
}

/// One line as a terminal shows it: a cell per column (a wide character's second is
/// an empty cell), and the cursor's column.
/// The cursor never moves past the line's end (a terminal would pad with blanks),
/// so what is shown is never longer than what was written (but for a tab written
/// over: the blanks of its columns, 7 bytes more at most).
class Line {
public:
  /// `cell`, a character of `width` columns (columns()), at the cursor; the cursor
  /// moves past it. A combining mark (0) joins the character before it, where it
  /// follows it in the text.
  void put(std::string_view cell, int width = 1) {
    if (cell == "\t") {
      tab(cell);
      return;
    }
    if (width == 0) { // the character before (past a wide one's second half), where it follows it
      auto before = cursor_ > 0 && cells_[cursor_ - 1].empty() ? cursor_ - 1 : cursor_;
      if (before > 0 && !cells_[before - 1].empty() &&
          cells_[before - 1].data() + cells_[before - 1].size() == cell.data()) {
        cells_[before - 1] = std::string_view(cells_[before - 1].data(), cells_[before - 1].size() + cell.size());
        return;
      }
    }
    set(cell);
    if (width == 2)
      set({}, true); // its second column
  }
  void to_column(size_t col) { cursor_ = std::min(col, cells_.size()); }
  /// At the line's end, and as long as a line is kept: what it holds goes on as written.
  bool full() const { return cursor_ == cells_.size() && cells_.size() >= max_cells; }
  size_t column() const { return cursor_; }
  size_t size() const { return cells_.size(); }
  /// CSI K: 0 erases from the cursor to the end, 1 from the start to the cursor, 2 all.
  /// Cells already blank are not blanked again: a flood of erases costs what its
  /// text does.
  void erase(int mode) {
    if (mode == 0 || mode == 2)
      cells_.resize(std::min(cursor_, cells_.size()));
    if (mode == 1 || mode == 2)
      blank_through(std::min(mode == 1 ? cursor_ + 1 : cursor_, cells_.size()));
  }
  /// CSI P: the cells at the cursor go, those after them move left (readline's
  /// delete and backspace within a line).
  void delete_cells(size_t n) {
    auto from = std::min(cursor_, cells_.size());
    cells_.erase(cells_.begin() + static_cast<std::ptrdiff_t>(from),
                 cells_.begin() + static_cast<std::ptrdiff_t>(std::min(from + n, cells_.size())));
    blank_to_ = std::min(blank_to_, cursor_);
  }
  /// CSI @: blanks at the cursor, what follows moving right (readline's insert within
  /// a line, the character written over the blank next). At the line's end nothing
  /// shows: no blank is added there.
  void insert_cells(size_t n) {
    if (cursor_ >= cells_.size())
      return;
    n = std::min(n, max_cells - std::min(max_cells, cells_.size()));
    cells_.insert(cells_.begin() + static_cast<std::ptrdiff_t>(cursor_), n, blank);
    blank_to_ = std::min(blank_to_, cursor_);
  }
  /// CSI X: the cells at the cursor blanked, the cursor staying; up to the line's
  /// end, they go (a terminal shows blanks there as nothing).
  void erase_cells(size_t n) {
    if (cursor_ + n >= cells_.size()) {
      cells_.resize(std::min(cursor_, cells_.size()));
      return;
    }
    std::fill(cells_.begin() + static_cast<std::ptrdiff_t>(cursor_),
              cells_.begin() + static_cast<std::ptrdiff_t>(cursor_ + n), blank);
  }
  void end(std::string& out) {
    for (auto cell : cells_)
      out += cell;
    cells_.clear();
    cursor_ = blank_to_ = 0;
  }

private:
  /// A tab moves the cursor to the next stop (every 8 columns) over what the line
  /// shows; past its end it is a cell of its own (the tab, shown as written) and the
  /// empty cells of the columns it takes. (One cell, "\tfoo\rbar" showed "baro".)
  void tab(std::string_view cell) {
    size_t stop = (cursor_ / 8 + 1) * 8;
    if (cursor_ < cells_.size()) {
      if (stop <= cells_.size()) {
        cursor_ = stop;
        return;
      }
      cursor_ = cells_.size();
    }
    set(cell);
    while (cursor_ < stop && cells_.size() < max_cells)
      set({}, true);
  }

  /// Writing over a tab's columns: they become the blanks a terminal shows there,
  /// and the cell written replaces one of them.
  void untab(size_t at) {
    size_t first = at;
    while (first > 0 && cells_[first].empty())
      --first;
    if (cells_[first] != "\t")
      return;
    cells_[first] = blank;
    for (size_t k = first + 1; k < cells_.size() && cells_[k].empty(); ++k)
      cells_[k] = blank;
  }

  /// The cell at the cursor becomes `cell`; a wide character it writes over half of
  /// is blanked, as a terminal does (`second`: the cell is the second half of the
  /// one just written before it).
  void set(std::string_view cell, bool second = false) {
    // (A second half a delete or insert of cells left alone is no wide one's.)
    if (cursor_ < cells_.size()) {
      if (!second)
        untab(cursor_);
      if (!second && cells_[cursor_].empty() && cursor_ > 0 && wide(cells_[cursor_ - 1])) // the second half
        cells_[cursor_ - 1] = blank;
      if (cursor_ + 1 < cells_.size() && cells_[cursor_ + 1].empty() && wide(cells_[cursor_])) // the first half
        cells_[cursor_ + 1] = blank;
    }
    if (cursor_ == cells_.size())
      cells_.push_back(cell);
    else
      cells_[cursor_] = cell;
    blank_to_ = std::min(blank_to_, cursor_);
    ++cursor_;
  }

  static bool wide(std::string_view cell) {
    return !cell.empty() && columns(cell.substr(0, char_length(cell, 0))) == 2;
  }

  void blank_through(size_t n) {
    if (n > blank_to_)
      std::fill(cells_.begin() + static_cast<std::ptrdiff_t>(blank_to_), cells_.begin() + static_cast<std::ptrdiff_t>(n), blank);
    blank_to_ = std::max(blank_to_, n);
  }

  static constexpr std::string_view blank = " ";
  std::vector<std::string_view> cells_;
  size_t cursor_ = 0;
  size_t blank_to_ = 0; // cells_ before it are blank
};

/// The lines of what a look hands over, as a terminal shows them: a program's
/// progress over several lines (cursor up, each line redrawn, the rest erased: pip,
/// docker, cargo) leaves its last frame, not every frame. Lines further back than
/// `max_rows`, and those above a long one ended at the bottom (output, not a
/// progress's line: a move up keeps no more than its text costs), are handed on as
/// they are; a move up stops at the first line kept. Lines as written, not a
/// terminal's rows: a move over a line it wrapped goes one line further here.
class Lines {
public:
  /// Cells a delete, insert or erase of characters within a line may still move,
  /// add or blank, this look (a flood of them on a long line would cost its length
  /// each).
  size_t shift_budget = 0;
  Line& line() { return rows_[row_]; }
  /// A line feed: the next line, at its start; a new one below the last.
  void feed(std::string& out) {
    if (row_ + 1 < rows_.size()) {
      ++row_;
      line().to_column(0);
      return;
    }
    bool long_line = line().size() >= long_row;
    if (long_line || rows_.size() == max_rows) {
      hand_on(out, long_line ? rows_.size() : 1);
      rows_.emplace_back(std::move(spare_)); // its cells' room, used again
    } else {
      rows_.emplace_back();
    }
    row_ = rows_.size() - 1;
  }
  void up(size_t n) {
    auto col = line().column();
    row_ -= std::min(n, row_);
    line().to_column(col);
  }
  void down(size_t n) {
    auto col = line().column();
    row_ = std::min(row_ + n, rows_.size() - 1);
    line().to_column(col);
  }
  /// CSI J: erases from the cursor to the end of the screen.
  void erase_below() {
    line().erase(0);
    rows_.resize(row_ + 1);
  }
  /// A line as long as a line is kept: it and the lines above it are handed on, the
  /// rest of it goes on as a line of its own.
  void hand_on_full(std::string& out) {
    hand_on(out, row_);
    line().end(out);
  }
  /// The line the cursor is on, when it is the last one (its text and the cursor's
  /// column), else none.
  OpenLine open_line() const {
    if (row_ + 1 != rows_.size())
      return {};
    OpenLine open;
    auto copy = rows_.back();
    open.column = copy.column();
    copy.end(open.text);
    return open;
  }
  void end(std::string& out) {
    for (size_t i = 0; i < rows_.size(); ++i) {
      rows_[i].end(out);
      if (i + 1 < rows_.size())
        out += '\n';
    }
    rows_.assign(1, Line{});
    row_ = 0;
  }

private:
  static constexpr size_t max_rows = 64;
  static constexpr size_t long_row = 1024;

  /// The first `n` lines, each with its line break (the last one's kept as spare).
  void hand_on(std::string& out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      rows_.front().end(out);
      out += '\n';
      spare_ = std::move(rows_.front());
      rows_.pop_front();
    }
    row_ -= std::min(n, row_);
  }

  std::deque<Line> rows_ = std::deque<Line>(1);
  size_t row_ = 0;
  Line spare_;
};

/// A CSI sequence's effect on the lines: erasing, deleting, inserting and moving
/// along a line, moving up and down them, erasing below; the rest (colours, modes)
/// shows nothing.
void apply_csi(Lines& lines, std::string_view params, char final) {
  if (!params.empty() && !in(params[0], '0', '9') && params[0] != ';')
    return; // a private sequence (CSI ? 25 l)
  int n = 0;
  for (size_t i = 0; i < params.size() && in(params[i], '0', '9') && n < 100000; ++i)
    n = n * 10 + (params[i] - '0');
  size_t count = std::max(n, 1);
  auto& line = lines.line();
  switch (final) {
    case 'K': line.erase(n); break;
    case 'P':
    case '@':
    case 'X': {
      // The cells it moves, adds or blanks, charged: a flood of them on a long line
      // costs no more than the look's text allows.
      auto after = line.size() - std::min(line.column(), line.size());
      if (final == '@') // no more blanks than its own bytes: a look never shows more than was written
        count = std::min(count, params.size() + 3);
      auto cost = final == 'X' ? std::min(count, after) : final == '@' ? after + count : after;
      if (cost > lines.shift_budget)
        break; // past what its text may cost: shown as it was
      lines.shift_budget -= cost;
      if (final == 'P')
        line.delete_cells(count);
      else if (final == '@')
        line.insert_cells(count);
      else
        line.erase_cells(count);
      break;
    }
    case 'G': line.to_column(count - 1); break;
    case 'C': line.to_column(line.column() + count); break;
    case 'D': line.to_column(line.column() - std::min(count, line.column())); break;
    case 'A': lines.up(count); break;
    case 'B': lines.down(count); break;
    case 'F':
      lines.up(count);
      lines.line().to_column(0);
      break;
    case 'E':
      lines.down(count);
      lines.line().to_column(0);
      break;
    case 'J':
      if (n == 0)
        lines.erase_below();
      break;
    default: break;
  }
}

/// Where the text goes on after a sequence, and whether the bytes ended inside it.
struct Sequence {
  size_t end;
  bool cut = false;
};

/// The sequence that starts at `i` (an ESC), applied to the lines. A malformed one is
/// dropped as far as it was read; an unended string (OSC) keeps its text.
Sequence sequence(std::string_view s, size_t i, Lines& lines) {
  if (i + 1 == s.size())
    return {s.size(), true};
  char kind = s[i + 1];
  size_t j = i + 2;
  if (kind == '[') {
    while (j < s.size() && in(s[j], 0x30, 0x3F))
      ++j;
    auto params = s.substr(i + 2, j - i - 2);
    size_t intermediates = j;
    while (j < s.size() && in(s[j], 0x20, 0x2F))
      ++j;
    if (j == s.size() || !in(s[j], 0x40, 0x7E))
      return {j, j == s.size()};
    if (j == intermediates)
      apply_csi(lines, params, s[j]);
    return {j + 1};
  }
  if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
    for (; j < s.size() && j - i <= max_string && s[j] != '\n'; ++j) {
      if (s[j] == '\a' && kind == ']')
        return {j + 1};
      if (s[j] == ESC) { // ST, or a new sequence that ends the string
        if (j + 1 == s.size())
          return {i + 2, true};
        return {s[j + 1] == '\\' ? j + 2 : j};
      }
    }
    return {i + 2, j == s.size()};
  }
  j = i + 1;
  while (j < s.size() && in(s[j], 0x20, 0x2F))
    ++j;
  if (j == s.size())
    return {j, true};
  return {in(s[j], 0x30, 0x7E) ? j + 1 : j};
}

} // namespace

namespace {

/// Past this, a line is not carried to the next bytes (a move back along it reaches
/// no further than their own start, as before).
constexpr size_t max_open_line = 4096;

/// The columns `text` (no controls) takes.
size_t columns_of(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); i += char_length(text, i))
    n = text[i] == '\t' ? (n / 8 + 1) * 8 : n + static_cast<size_t>(columns(text.substr(i, char_length(text, i))));
  return n;
}

} // namespace

std::string readable_text(std::string_view s, std::string* held, OpenLine* open) {
  bool plain = std::none_of(s.begin(), s.end(), [](char c) { return control(static_cast<unsigned char>(c)); });
  bool carried = open && !open->text.empty() && open->text.size() <= max_open_line;
  if (plain && (!carried || open->column == columns_of(open->text))) {
    // Text alone, written at the line's end (where the cursor was): as it is.
    if (open) {
      auto nl = s.rfind('\n');
      auto rest = nl == std::string_view::npos ? s : s.substr(nl + 1);
      if (nl != std::string_view::npos)
        *open = {};
      if (open->text.size() + rest.size() > max_open_line) {
        *open = {}; // too long to carry (a line of minified JSON): its moves reach its look's start
      } else {
        open->text.append(rest);
        // A tab's stop counts from the line's start: the whole line is counted again
        // only when a tab came (a prompt's line is not rescanned at every look).
        open->column = rest.find('\t') == std::string_view::npos ? open->column + columns_of(rest)
                                                                  : columns_of(open->text);
      }
    }
    return std::string(s);
  }
  if (carried) {
    // The line goes on: its text again, the cursor back where it was (a move of ours,
    // CSI G), then these bytes; what it shows of that line already is not shown again.
    auto shown = std::move(open->text);
    auto bytes = shown + "\x1b[" + std::to_string(open->column + 1) + "G" + std::string(s);
    auto out = readable_text(bytes, held, open);
    if (out.starts_with(shown))
      out.erase(0, shown.size());
    return out;
  }
  std::string out;
  out.reserve(s.size());
  Lines lines;
  lines.shift_budget = 16 * s.size() + max_cells;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    auto& line = lines.line();
    if (c == '\n') {
      lines.feed(out);
      ++i;
    } else if (c == '\r') {
      line.to_column(0);
      ++i;
    } else if (c == '\b') {
      line.to_column(line.column() - std::min<size_t>(1, line.column()));
      ++i;
    } else if (c == ESC) {
      auto seq = sequence(s, i, lines);
      // Cut by the end of what was written so far: its rest comes with the next look.
      if (seq.cut && held && s.size() - i <= max_string) {
        held->assign(s.substr(i));
        break;
      }
      i = seq.end;
    } else if (control(static_cast<unsigned char>(c))) {
      ++i; // BEL and the other controls show nothing
    } else {
      if (line.full())
        lines.hand_on_full(out);
      auto n = char_length(s, i);
      lines.line().put(s.substr(i, n), columns(s.substr(i, n)));
      i += n;
    }
  }
  if (open)
    *open = lines.open_line();
  lines.end(out);
  return out;
}

} // namespace jp
