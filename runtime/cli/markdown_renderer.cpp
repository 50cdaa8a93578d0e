#include "runtime/cli/markdown_renderer.hpp"
#include "messages/terminal_safe.hpp"

#include <md4c.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>
#include <vector>

namespace jp {

namespace {

constexpr auto npos = std::string_view::npos;
constexpr const char* bullet = "• ";
constexpr const char* replacement_char = "\xEF\xBF\xBD"; // U+FFFD

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_blank(std::string_view line) { return std::all_of(line.begin(), line.end(), is_space); }

std::string_view without_indent(std::string_view line) {
  auto i = line.find_first_not_of(" \t");
  return i == npos ? std::string_view{} : line.substr(i);
}

/// The length of the code fence a line opens (```lang or ~~~), 0 if none. Any
/// indentation counts, so fences inside list items are seen too: taking a line for
/// a fence when it is not one only holds text longer, never renders it wrongly.
std::size_t fence_opened(std::string_view line) {
  line = without_indent(line);
  if (line.empty() || (line[0] != '`' && line[0] != '~'))
    return 0;
  auto n = std::min(line.find_first_not_of(line[0]), line.size());
  if (n < 3 || (line[0] == '`' && line.find('`', n) != npos)) // a ``` info string has no `
    return 0;
  return n;
}

bool closes_fence(std::string_view line, char c, std::size_t len) {
  line = without_indent(line);
  auto n = std::min(line.find_first_not_of(c), line.size());
  return n >= len && is_blank(line.substr(n));
}

/// Terminal columns of rendered text: UTF-8 code points outside escape sequences.
std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b')
      i = std::min(s.find('m', i), s.size());
    else if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
      ++n;
  }
  return n;
}

std::string utf8(char32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return replacement_char;
  if (cp < 0x80)
    return std::string(1, static_cast<char>(cp));
  // A lead byte that counts the bytes, then 6 bits in each continuation byte.
  static const unsigned lead[] = {0, 0xC0, 0xE0, 0xF0};
  int extra = cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
  std::string s(1, static_cast<char>(lead[extra] | (cp >> (6 * extra))));
  for (int i = extra - 1; i >= 0; --i)
    s += static_cast<char>(0x80 | ((cp >> (6 * i)) & 0x3F));
  return s;
}

/// "&amp;", "&#65;", "&#x41;" as their character; other named ones as written.
std::string decode_entity(std::string_view e) {
  static const std::pair<std::string_view, std::string_view> named[] = {
    {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&nbsp;", "\xC2\xA0"}};
  for (auto [name, text] : named)
    if (e == name)
      return std::string(text);
  if (e.size() > 3 && e[1] == '#') {
    bool hex = e[2] == 'x' || e[2] == 'X';
    auto digits = e.substr(hex ? 3 : 2);
    digits.remove_suffix(1); // the ';'
    std::uint32_t cp = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
    return utf8(ec == std::errc{} && end == digits.data() + digits.size() ? cp : 0);
  }
  return std::string(e);
}

std::string_view text_of(const MD_ATTRIBUTE& a) { return {a.text, a.size}; }

/// What encloses the text being written, each giving its lines a prefix.
struct Container {
  enum kind_t { quote, list, item, code } kind;
  bool tight = false;        // list: no blank lines between its items
  bool ordered = false;      // list
  unsigned next = 0;         // ordered list: the next item's number
  char delimiter = '.';      // ordered list: "1." or "1)"
  std::string marker{};      // item: on its first line; then as many spaces
  bool marker_shown = false; // item
};

/// The state of one md4c parse: a group of complete blocks rendered into `out`.
struct Render {
  bool color;
  std::string out{};
  std::vector<Container> containers{};
  std::vector<std::string> styles{}; // the SGR codes in effect, outermost first
  bool line_start = true;          // nothing written on this line yet, not even its prefix
  bool blank_before = false;       // a block ended: a blank line precedes the next one
  bool in_link = false;
  std::string link_url{}, link_text{};
  std::vector<std::vector<std::string>> table{}; // rendered cells, the header row first
  std::vector<MD_ALIGN> align{};
  bool in_cell = false;

  std::string prefix(bool blank_line) {
    std::string p;
    for (auto& c : containers) {
      if (c.kind == Container::quote) {
        p += color ? "\x1b[2m│\x1b[0m " : "> ";
      } else if (c.kind == Container::code) {
        p += "  ";
      } else if (c.kind == Container::item) {
        if (!blank_line && !c.marker_shown) {
          p += c.marker;
          c.marker_shown = true;
        } else {
          p.append(columns(c.marker), ' ');
        }
      }
    }
    if (blank_line)
      while (!p.empty() && p.back() == ' ')
        p.pop_back();
    return p;
  }

  void start_line() {
    out += prefix(false);
    line_start = false;
    for (auto& s : styles)
      raw("\x1b[" + s + "m");
  }

  // Each line closes its styles, so a prefix (and what follows the answer) is unstyled.
  void end_line() {
    if (line_start)
      out += prefix(true);
    else if (color && !styles.empty())
      out += "\x1b[0m";
    out += '\n';
    line_start = true;
  }

  // An escape sequence; at a line's start, start_line() will emit the styles.
  void raw(std::string_view esc) {
    if (!color)
      return;
    if (in_cell)
      table.back().back() += esc;
    else if (!line_start)
      out += esc;
  }

  void write(std::string_view text) {
    // An escape sequence in the answer itself could drive the terminal: not passed on.
    std::string safe = terminal_safe(text);
    std::string_view s = safe;
    if (in_link)
      link_text += s;
    if (in_cell) {
      for (char c : s)
        table.back().back() += c == '\n' ? ' ' : c;
      return;
    }
    for (;;) {
      auto nl = s.find('\n');
      auto part = s.substr(0, nl);
      if (!part.empty()) {
        if (line_start)
          start_line();
        out += part;
      }
      if (nl == npos)
        return;
      end_line();
      s.remove_prefix(nl + 1);
    }
  }

  void push_style(std::string code) {
    raw("\x1b[" + code + "m");
    styles.push_back(std::move(code));
  }

  // A reset ends every style: those still enclosing the text come back.
  void pop_style() {
    styles.pop_back();
    raw("\x1b[0m");
    for (auto& s : styles)
      raw("\x1b[" + s + "m");
  }

  void write_styled(std::string code, std::string_view s) {
    push_style(std::move(code));
    write(s);
    pop_style();
  }

  bool in_tight_list() const {
    for (auto c = containers.rbegin(); c != containers.rend(); ++c) {
      if (c->kind == Container::list)
        return c->tight;
      if (c->kind == Container::quote)
        return false;
    }
    return false;
  }

  void open_block() {
    if (!line_start) // a tight item's text before its nested list
      end_line();
    if (blank_before && !in_tight_list())
      end_line();
    blank_before = false;
  }

  void close_block() {
    if (!line_start)
      end_line();
    blank_before = true;
  }

  void enter_block(MD_BLOCKTYPE type, void* detail) {
    switch (type) {
      case MD_BLOCK_QUOTE:
        open_block();
        containers.push_back({.kind = Container::quote});
        break;
      case MD_BLOCK_UL:
        open_block();
        containers.push_back({.kind = Container::list, .tight = static_cast<MD_BLOCK_UL_DETAIL*>(detail)->is_tight != 0});
        break;
      case MD_BLOCK_OL: {
        auto* d = static_cast<MD_BLOCK_OL_DETAIL*>(detail);
        open_block();
        // md4c's start: a loose list split at a blank line goes on counting.
        containers.push_back({.kind = Container::list, .tight = d->is_tight != 0, .ordered = true,
                              .next = d->start, .delimiter = d->mark_delimiter});
        break;
      }
      case MD_BLOCK_LI: {
        auto* d = static_cast<MD_BLOCK_LI_DETAIL*>(detail);
        open_block();
        auto& list = containers.back();
        std::string marker = list.ordered ? std::to_string(list.next++) + list.delimiter + " " : bullet;
        if (d->is_task)
          marker += d->task_mark == ' ' ? "[ ] " : "[x] ";
        containers.push_back({.kind = Container::item, .marker = std::move(marker)});
        break;
      }
      case MD_BLOCK_HR:
        open_block();
        write_styled("2", "────────────────────────────────────────");
        break;
      case MD_BLOCK_H:
        open_block();
        push_style("1");
        if (static_cast<MD_BLOCK_H_DETAIL*>(detail)->level == 1)
          push_style("4");
        break;
      case MD_BLOCK_CODE: {
        auto lang = text_of(static_cast<MD_BLOCK_CODE_DETAIL*>(detail)->lang);
        open_block();
        write_styled("2", lang.empty() ? "──" : "── " + std::string(lang));
        end_line();
        containers.push_back({.kind = Container::code});
        break;
      }
      case MD_BLOCK_HTML:
      case MD_BLOCK_P:
        open_block();
        break;
      case MD_BLOCK_TABLE:
        open_block();
        table.clear();
        align.clear();
        break;
      case MD_BLOCK_TR:
        table.emplace_back();
        break;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        table.back().emplace_back();
        if (table.size() == 1)
          align.push_back(static_cast<MD_BLOCK_TD_DETAIL*>(detail)->align);
        in_cell = true;
        if (type == MD_BLOCK_TH)
          push_style("1");
        break;
      default: // the document, a table's head and body
        break;
    }
  }

  void leave_block(MD_BLOCKTYPE type) {
    switch (type) {
      case MD_BLOCK_QUOTE:
      case MD_BLOCK_UL:
      case MD_BLOCK_OL:
      case MD_BLOCK_CODE:
        close_block();
        containers.pop_back();
        break;
      case MD_BLOCK_LI:
        if (!containers.back().marker_shown) // an empty item still shows its marker
          start_line();
        close_block();
        containers.pop_back();
        break;
      case MD_BLOCK_H:
        close_block(); // before the styles end: the line's reset ends them
        styles.clear();
        break;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        if (type == MD_BLOCK_TH)
          pop_style();
        in_cell = false;
        break;
      case MD_BLOCK_TABLE:
        write_table();
        close_block();
        break;
      case MD_BLOCK_HR:
      case MD_BLOCK_HTML:
      case MD_BLOCK_P:
      case MD_BLOCK_DOC:
        close_block();
        break;
      default:
        break;
    }
  }

  void enter_span(MD_SPANTYPE type, void* detail) {
    switch (type) {
      case MD_SPAN_EM: push_style("3"); break;
      case MD_SPAN_STRONG: push_style("1"); break;
      case MD_SPAN_DEL: push_style("9"); break;
      case MD_SPAN_CODE:
        if (color)
          push_style("36");
        else
          write("`"); // without color, backticks still set the code apart
        break;
      case MD_SPAN_A:
      case MD_SPAN_IMG:
        link_url = type == MD_SPAN_A ? text_of(static_cast<MD_SPAN_A_DETAIL*>(detail)->href)
                                     : text_of(static_cast<MD_SPAN_IMG_DETAIL*>(detail)->src);
        link_text.clear();
        in_link = true;
        push_style("4");
        break;
      default:
        break;
    }
  }

  void leave_span(MD_SPANTYPE type) {
    switch (type) {
      case MD_SPAN_EM:
      case MD_SPAN_STRONG:
      case MD_SPAN_DEL: pop_style(); break;
      case MD_SPAN_CODE:
        if (color)
          pop_style();
        else
          write("`");
        break;
      case MD_SPAN_A:
      case MD_SPAN_IMG: {
        pop_style();
        in_link = false;
        // An autolink's text is its URL (but for the scheme md4c adds): once is enough.
        bool same = link_url == link_text || link_url == "http://" + link_text || link_url == "mailto:" + link_text;
        if (!link_url.empty() && !same)
          write_styled("2", " (" + link_url + ")");
        break;
      }
      default:
        break;
    }
  }

  void text(MD_TEXTTYPE type, std::string_view s) {
    switch (type) {
      case MD_TEXT_NULLCHAR: write(replacement_char); break;
      case MD_TEXT_BR:
      case MD_TEXT_SOFTBR: // a newline: the terminal wraps long lines itself
        if (in_cell)
          write(" ");
        else
          end_line();
        break;
      case MD_TEXT_ENTITY: write(decode_entity(s)); break;
      default: write(s); break; // code and HTML verbatim
    }
  }

  void write_table() {
    std::vector<std::size_t> widths;
    for (auto& row : table)
      for (std::size_t c = 0; c < row.size(); ++c) {
        widths.resize(std::max(widths.size(), c + 1));
        widths[c] = std::max(widths[c], columns(row[c]));
      }
    for (std::size_t r = 0; r < table.size(); ++r) {
      std::string line;
      for (std::size_t c = 0; c < table[r].size(); ++c) {
        if (c > 0)
          line += color ? " \x1b[2m│\x1b[0m " : " | ";
        auto gap = widths[c] - columns(table[r][c]);
        auto how = c < align.size() ? align[c] : MD_ALIGN_DEFAULT;
        auto left = how == MD_ALIGN_RIGHT ? gap : how == MD_ALIGN_CENTER ? gap / 2 : 0;
        line.append(left, ' ').append(table[r][c]);
        if (c + 1 < table[r].size()) // no spaces at a line's end
          line.append(gap - left, ' ');
      }
      start_line();
      out += line;
      end_line();
      if (r == 0)
        write_rule(widths);
    }
  }

  void write_rule(const std::vector<std::size_t>& widths) {
    std::string line = color ? "\x1b[2m" : "";
    for (std::size_t c = 0; c < widths.size(); ++c) {
      if (c > 0)
        line += color ? "─┼─" : "-|-";
      for (std::size_t i = 0; i < widths[c]; ++i)
        line += color ? "─" : "-";
    }
    line += color ? "\x1b[0m" : "";
    start_line();
    out += line;
    end_line();
  }
};

/// Renders a group of complete blocks; "" if it shows nothing.
std::string render_blocks(std::string_view markdown, bool color) {
  MD_PARSER parser{};
  parser.flags = MD_DIALECT_GITHUB; // tables, strikethrough, task lists, bare URLs
  parser.enter_block = [](MD_BLOCKTYPE t, void* d, void* r) { static_cast<Render*>(r)->enter_block(t, d); return 0; };
  parser.leave_block = [](MD_BLOCKTYPE t, void*, void* r) { static_cast<Render*>(r)->leave_block(t); return 0; };
  parser.enter_span = [](MD_SPANTYPE t, void* d, void* r) { static_cast<Render*>(r)->enter_span(t, d); return 0; };
  parser.leave_span = [](MD_SPANTYPE t, void*, void* r) { static_cast<Render*>(r)->leave_span(t); return 0; };
  parser.text = [](MD_TEXTTYPE t, const MD_CHAR* s, MD_SIZE n, void* r) {
    static_cast<Render*>(r)->text(t, {s, n});
    return 0;
  };
  Render r{.color = color};
  if (md_parse(markdown.data(), static_cast<MD_SIZE>(markdown.size()), &parser, &r) != 0) {
    // md4c gave up (out of memory): the text as it came is better than nothing.
    std::string text = terminal_safe(markdown);
    return text.ends_with('\n') ? text : text + '\n';
  }
  return std::move(r.out);
}

} // namespace

MarkdownStream::MarkdownStream(bool color) : color_(color) {}

std::string MarkdownStream::feed(std::string_view chunk) {
  partial_.append(chunk);
  std::string out;
  std::size_t start = 0;
  for (auto nl = partial_.find('\n'); nl != npos; nl = partial_.find('\n', start)) {
    out += take_line(std::string_view(partial_).substr(start, nl + 1 - start));
    start = nl + 1;
  }
  partial_.erase(0, start);
  // The next line's first character already decides, as take_line() would, that
  // it starts a new group: the finished one is shown now.
  if (after_blank_ && !partial_.empty() && !is_space(partial_[0]))
    out += flush();
  return out;
}

std::string MarkdownStream::finish() {
  std::string out;
  if (!partial_.empty()) {
    auto last = std::move(partial_);
    partial_.clear();
    out += take_line(last);
  }
  out += flush();
  reset();
  return out;
}

void MarkdownStream::reset() {
  partial_.clear();
  held_.clear();
  after_blank_ = false;
  fence_char_ = 0;
  fence_len_ = 0;
  printed_ = false;
}

// Decides on whole lines only, so that where the pieces were split does not matter.
std::string MarkdownStream::take_line(std::string_view line) {
  if (fence_char_ != 0) {
    held_ += line;
    if (closes_fence(line, fence_char_, fence_len_))
      fence_char_ = 0;
    return {};
  }
  if (is_blank(line)) {
    if (held_.empty())
      return {};
    held_ += line;
    after_blank_ = true;
    return {};
  }
  std::string out;
  if (after_blank_ && !is_space(line[0]))
    out = flush();
  after_blank_ = false;
  if (auto len = fence_opened(line); len > 0) {
    fence_char_ = without_indent(line)[0];
    fence_len_ = len;
  }
  held_ += line;
  return out;
}

std::string MarkdownStream::flush() {
  auto text = std::move(held_);
  held_.clear();
  after_blank_ = false;
  auto out = render_blocks(text, color_);
  if (out.empty())
    return out;
  if (printed_) // one blank line between blocks, wherever the groups ended
    out.insert(0, "\n");
  printed_ = true;
  return out;
}

std::string render_markdown(std::string_view markdown, bool color) {
  MarkdownStream stream(color);
  auto out = stream.feed(markdown);
  return out + stream.finish();
}

} // namespace jp
