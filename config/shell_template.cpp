#include "config/shell_template.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <span>
#include <utility>

#include "config/placeholder.hpp"

namespace jp {

namespace {

enum class frame {
  code, substitution, backtick, arithmetic, parameter, double_quotes, single_quotes, ansi_c,
  bracket_arithmetic, // $[ ... ], closed by ]
  subscript,          // name[ ... ] (an array element being assigned), closed by ]
  test,               // [[ ... ]]: -eq and the like evaluate their operands as arithmetic
  compound,           // name=( ... ): an array's elements, [i]=v among them
};

bool is_quotes(frame f) {
  return f == frame::double_quotes || f == frame::single_quotes || f == frame::ansi_c;
}

// Where bash is in the text read so far: just enough of its grammar to tell the
// quoting around the next placeholder.
class ShellLexer {
public:
  void read(char c) {
    After prev = after_;
    after_ = {};
    // Bash ends a backtick body at the first backtick no backslash escapes, whatever
    // quotes or comments are open inside it.
    if (c == '`' && !escaped_ && backtick_ > 0) {
      stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(backtick_), stack_.end());
      backtick_ = 0;
      backtick_backslash_ = false;
      comment_ = word_start_ = false; // the word goes on after it
      word_char(c);
      return;
    }
    if (comment_) {
      comment_ = c != '\n';
      word_start_ = !comment_;
      return;
    }
    if (escaped_) {
      escaped_ = false;
      if (c == '\n') { // a line continuation: bash reads on as if neither were there
        after_ = escape_after_;
        word_start_ = escape_word_start_;
        return;
      }
      word_start_ = false;
      word_char(c);
      return;
    }
    if (c == '\\' && backtick_ > 0) {
      // Bash strips some backslashes from a backtick body before reading it, so its
      // quoting is not what it looks like: placeholders after one are refused. Finding
      // the body's end, a backslash escapes the next character, in '...' too.
      backtick_backslash_ = true;
      escape(prev, word_start_);
      return;
    }
    switch (top()) {
      case frame::single_quotes:
        if (c == '\'')
          stack_.pop_back();
        else
          word_char(c);
        return;
      case frame::ansi_c:
        if (c == '\\')
          escape(prev);
        else if (c == '\'')
          stack_.pop_back();
        else
          word_char(c);
        return;
      case frame::double_quotes:
        if (c == '\\')
          escape(prev);
        else if (c == '"')
          stack_.pop_back();
        else if (c == '`')
          open_backtick();
        else if (c == '(' && prev.dollar)
          open_substitution();
        else if (c == '{' && prev.dollar)
          stack_.push_back({frame::parameter});
        else if (c == '[' && prev.dollar)
          stack_.push_back({frame::bracket_arithmetic});
        else {
          after_.dollar = c == '$';
          word_char(c);
        }
        return;
      default:
        read_code(c, prev);
    }
  }

  // The quoting of a placeholder that starts here, or why it cannot be passed safely.
  Result<bool> placeholder_double_quoted() const {
    if (escaped_ || after_.dollar)
      return Error{"a placeholder right after `\\` or `$` cannot be passed safely; put a "
                   "space or quote before it"};
    if (after_.less == 2)
      return Error{std::string(heredoc_error)};
    if (!unsure_.empty())
      return Error{std::string(unsure_)};
    if (comment_)
      return false;
    // Bash evaluates arithmetic, a ${...} expansion's subscript and an assigned
    // element's subscript as code: a value such as a[$(id)] would run. Whatever the
    // quoting inside, and even inside a $(...) within them (its output is evaluated
    // too), a placeholder there cannot be passed safely.
    for (auto& f : stack_)
      switch (f.kind) {
        case frame::arithmetic:
        case frame::bracket_arithmetic:
          return Error{"a placeholder inside (( )), $(( )) or $[ ] would be evaluated as code by "
                       "bash; pass it to a command instead"};
        case frame::parameter:
          return Error{"a placeholder inside ${...} cannot be passed safely (an array "
                       "subscript is evaluated as code); write it outside"};
        case frame::subscript:
          return Error{"a placeholder inside an array subscript (name[...]) would be evaluated "
                       "as code by bash; pass it to a command instead"};
        case frame::test:
          return Error{"a placeholder inside [[ ]] may be evaluated as code by bash (-eq and the "
                       "like take arithmetic); use [ ] or pass it to a command instead"};
        default:
          break;
      }
    // unset "a[$1]", printf -v "a[$1]", read, test -v, declare "a=([$1]=x)" and a
    // name=( [$1]=x ) evaluate the subscript they are given, quoted or not.
    for (auto& f : stack_)
      if (f.bracket)
        return Error{"a placeholder in a word after `name[` (as in \"a[...]\" or a=([...]=v)) may "
                     "be evaluated as code by bash: unset, printf -v, read and declare evaluate a "
                     "subscript, quoted or not; make the placeholder a word of its own (a `[` "
                     "starting a word or after `=` or a blank is fine)"};
    if (!positional_.empty())
      return Error{std::string(positional_)};
    if (auto why = name_operand(); !why.empty())
      return Error{std::string(why)};
    if (backtick_backslash_)
      return Error{"a placeholder inside `...` after a `\\` cannot be passed safely (bash strips "
                   "backslashes there before reading the command); use $(...) instead"};
    switch (top()) {
      case frame::single_quotes:
      case frame::ansi_c:
        return Error{"a placeholder inside single quotes cannot be passed safely; write it "
                     "outside quotes or in double quotes"};
      case frame::double_quotes:
        return true;
      default:
        return false;
    }
  }

  void after_placeholder() {
    after_ = {};
    word_start_ = false;
    word_frame().has_placeholder = true;
    word_char('}'); // the value may be a name: "{{a}}[{{i}}]" is a subscript
  }

private:
  // What the previous character was, unescaped and outside quotes unless said.
  struct After {
    bool dollar = false;        // `$` (in double quotes too)
    bool opened = false;        // the "(" of "$("
    bool paren = false;         // a "(" opening a subshell
    bool name = false;          // a letter, digit or '_'
    bool open_bracket = false;  // a "[" starting a word
    bool close_bracket = false; // a "]" inside [[ ]]
    int less = 0;               // the count of "<" ending here: 2 is a here-document
    bool redirect = false;      // a "<" or ">"
  };

  struct Word {
    std::string text;
    bool assignment = false;  // NAME=...
    bool placeholder = false; // holds a placeholder: any value, an option too
  };

  struct Frame {
    frame kind;
    int parens = 0; // open "(" of subshells and case patterns inside this frame
    bool command = false; // (( )) as a command, not $(( ))
    // The word being read here (quoted parts belong to the frame below the quotes):
    std::string text;      // its first characters, to spot `case`
    char last = 0;         // its last character, quotes and backslashes aside; 0 at its start
    bool compound = false; // it holds "=(", as in declare "a=([i]=x)"
    bool bracket = false;  // it holds a "[" bash may read as a subscript's
    bool assigns = false;  // it is NAME= so far: what follows is a value
    bool name_so_far = true; // letters, digits and '_' alone so far (quotes aside)
    bool has_placeholder = false;
    // The simple command being read here: its words so far (within-limits: the first
    // 16 characters of each, the first 32 words), and whether the next word is a
    // redirection's target (a file, no argument).
    std::vector<Word> words;
    bool redirect = false;
  };

  static constexpr std::string_view heredoc_error =
    "a placeholder after a here-document (<<) cannot be passed safely (the scan does not "
    "read here-document bodies); use a here-string (<<<) or put the placeholder before the <<";

  static constexpr std::string_view function_error =
    "a placeholder after a function's definition cannot be passed safely: a placeholder becomes a "
    "positional parameter (\"${1}\"), and in a function's body those are the function's own arguments; "
    "assign the values to variables before the definition (v={{tool.arguments.NAME}}) and use those";

  static constexpr std::string_view set_error =
    "a placeholder after `shift` or `set` with arguments cannot be passed safely: a placeholder becomes "
    "a positional parameter (\"${1}\"), which they change; assign the values to variables before it "
    "(v={{tool.arguments.NAME}}) and use those";

  static constexpr std::string_view name_operand_error =
    "a placeholder as an argument of read, mapfile, unset, getopts, let, eval, trap, declare, local, "
    "export (but as the value in NAME=value), printf -v, test -v or wait -p cannot be passed safely: "
    "these take a variable's name (or code), and bash evaluates a name's subscript, as in a[$(id)], as "
    "code; assign the value to a variable first (v={{tool.arguments.NAME}}) and pass \"$v\"";

  static constexpr std::string_view compound_error =
    "a placeholder after `(`, `;`, `&`, `|`, `<` or `>` inside name=( ... ) cannot be passed "
    "safely (bash drops the rest of that line); write them outside name=( ... )";

  frame top() const { return stack_.back().kind; }

  Frame& word_frame() {
    auto i = stack_.size() - 1;
    while (is_quotes(stack_[i].kind))
      --i;
    return stack_[i];
  }

  // A character of the current word, as bash will pass it on (quotes aside).
  void word_char(char c) {
    auto& w = word_frame();
    // A "[" at a word's start, after `=` or after a blank names no array element (x=[1],
    // "[info] msg"); anywhere else it might, as it does in a compound assignment.
    bool plain = w.last == 0 || w.last == '=' || w.last == ' ' || w.last == '\t' || w.last == '\n';
    if (c == '[' && (!plain || w.compound || w.kind == frame::compound))
      w.bracket = true;
    if (c == '(' && w.last == '=')
      w.compound = true;
    if (c == '=' && w.name_so_far && w.last != 0)
      w.assigns = true;
    bool name_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    w.name_so_far = w.name_so_far && name_char;
    w.last = c;
    if (w.text.size() < 16)
      w.text += c;
  }

  // At a word's end, outside quotes.
  void end_word(Frame& f) {
    // A `case` pattern's ")" would end a $(...) early to this scan (`case` as an
    // argument is caught too: refusing more is safe).
    if (f.kind == frame::substitution && f.text == "case")
      unsure_ = "a placeholder after `case` inside $(...) cannot be passed safely (the scan "
                "does not match its patterns' `)`); write the case outside $(...) or put the "
                "placeholder before it";
    bool empty = f.last == 0 && !f.has_placeholder;
    if (!empty && std::exchange(f.redirect, false)) {
      // A redirection's file: no word of the command.
    } else if (!empty) {
      if (f.words.size() < 32)
        f.words.push_back({f.text, f.assigns, f.has_placeholder});
      note_positional_change(f);
    }
    f.text.clear();
    f.last = 0;
    f.compound = f.bracket = f.assigns = f.has_placeholder = false;
    f.name_so_far = true;
  }

  // At a command's end (`;`, `&`, `|`, a line's end, a subshell's parentheses).
  void end_command(Frame& f) {
    end_word(f);
    f.words.clear();
    f.redirect = false;
  }

  // Where a simple command's name is among its words: after reserved words,
  // assignments and `command` / `builtin` / `time` (and their options); words.size()
  // when none is yet.
  static size_t command_at(const std::vector<Word>& words) {
    size_t i = 0;
    for (; i < words.size(); ++i) {
      auto& w = words[i].text;
      bool prefix = w == "!" || w == "{" || w == "if" || w == "then" || w == "else" || w == "elif" || w == "do" ||
                    w == "while" || w == "until" || w == "time" || w == "command" || w == "builtin";
      bool prefix_option = i > 0 && !w.empty() && w[0] == '-' &&
                           (words[i - 1].text == "command" || words[i - 1].text == "time");
      if (!prefix && !prefix_option && !words[i].assignment)
        break;
    }
    return i;
  }

  // A placeholder is a positional parameter ("${1}"): a function's body has its own,
  // and `set` with arguments and `shift` change them.
  void note_positional_change(const Frame& f) {
    if (!positional_.empty())
      return;
    auto at = command_at(f.words);
    if (at >= f.words.size())
      return;
    auto& name = f.words[at].text;
    if (name == "function" && at + 1 == f.words.size()) {
      positional_ = function_error;
    } else if (name == "shift" && at + 1 == f.words.size()) {
      positional_ = set_error;
    } else if (name == "set" && at + 1 < f.words.size()) {
      // set -e, set -o pipefail keep them; set -- x, set x replace them.
      auto& arg = f.words.back();
      auto& before = f.words[f.words.size() - 2].text;
      bool option_name = before.size() >= 2 && (before[0] == '-' || before[0] == '+') && before != "--" &&
                         before.back() == 'o'; // -o pipefail, -euo pipefail
      if (arg.text == "--" || arg.text == "-" || arg.placeholder ||
          (!option_name && arg.text[0] != '-' && arg.text[0] != '+'))
        positional_ = set_error;
    }
  }

  // Why a placeholder starting here would be a variable's name to the command it is
  // an argument of (bash evaluates a name's subscript, a[$(id)], as code), if it
  // may be.
  std::string_view name_operand() const {
    auto i = stack_.size() - 1;
    while (is_quotes(stack_[i].kind))
      --i;
    auto& f = stack_[i];
    if (f.redirect)
      return {};
    auto at = command_at(f.words);
    if (at >= f.words.size())
      return {};
    auto& name = f.words[at].text;
    std::span<const Word> args(f.words.begin() + static_cast<std::ptrdiff_t>(at) + 1, f.words.end());
    auto has = [&](auto pred) { return std::any_of(args.begin(), args.end(), pred); };
    bool after_placeholder = !args.empty() && args.back().placeholder;
    if (name == "read" || name == "mapfile" || name == "readarray" || name == "unset" || name == "getopts" ||
        name == "let" || name == "eval" || name == "trap")
      return name_operand_error;
    if (name == "declare" || name == "typeset" || name == "local" || name == "readonly" || name == "export") {
      // A value assigned (export X={{v}}) is a value, unless an option (-i, -n, or
      // a placeholder, which may be one) makes it evaluated or a name.
      bool evaluating = has([](const Word& w) {
        return w.placeholder ||
               ((w.text[0] == '-' || w.text[0] == '+') && w.text.find_first_of("in") != std::string::npos);
      });
      return f.assigns && !evaluating ? std::string_view() : name_operand_error;
    }
    if (name == "printf") {
      // printf -v NAME; or a first argument that may be "-v".
      bool options_only = std::all_of(args.begin(), args.end(), [](const Word& w) {
        return w.placeholder || (w.text[0] == '-' && w.text != "--");
      });
      if (has([](const Word& w) { return w.text.starts_with("-v"); }) || f.text.starts_with("-v") ||
          (after_placeholder && options_only))
        return name_operand_error;
    }
    if (name == "test" || name == "[") {
      // test -v NAME, test -R NAME; or after a placeholder, which may be "-v".
      auto& before = args.empty() ? f.words[at].text : args.back().text;
      if (before == "-v" || before == "-R" || after_placeholder)
        return name_operand_error;
    }
    if (name == "wait" && has([](const Word& w) { return w.placeholder || (w.text[0] == '-' && w.text.find('p') != std::string::npos); }))
      return name_operand_error;
    return {};
  }

  void escape(const After& prev, bool starts_word = false) {
    escaped_ = true;
    escape_after_ = prev;
    escape_word_start_ = starts_word;
  }

  void open_substitution() {
    stack_.push_back({frame::substitution});
    after_.opened = true;
  }

  void open_backtick() {
    stack_.push_back({frame::backtick});
    backtick_ = stack_.size() - 1;
    backtick_backslash_ = false;
  }

  void read_code(char c, const After& prev) {
    bool starts_word = word_start_;
    word_start_ = false;
    auto kind = top();
    // Bash reads no here-document or comment inside arithmetic or ${...}; in name[...]
    // and [[ ]] it may (as an argument), so those count.
    bool code_like = kind != frame::arithmetic && kind != frame::bracket_arithmetic && kind != frame::parameter;
    if (prev.less == 2 && c != '<')
      unsure_ = heredoc_error;
    switch (c) {
      case '[':
        if (prev.dollar) {
          stack_.push_back({frame::bracket_arithmetic});
          break;
        }
        word_char(c);
        if (prev.name) // a[...]=x: the subscript is arithmetic (a glob's [...] too: refused alike)
          stack_.push_back({frame::subscript});
        else if (prev.open_bracket) // "[[" at a word's start
          stack_.push_back({frame::test});
        else
          after_.open_bracket = starts_word;
        break;
      case ']':
        if (kind == frame::bracket_arithmetic || kind == frame::subscript)
          stack_.pop_back();
        else if (kind == frame::test && prev.close_bracket)
          stack_.pop_back();
        else
          after_.close_bracket = kind == frame::test;
        word_char(c);
        break;
      case '\\':
        escape(prev, starts_word);
        break;
      case '\'':
        stack_.push_back({prev.dollar ? frame::ansi_c : frame::single_quotes});
        break;
      case '"':
        stack_.push_back({frame::double_quotes});
        break;
      case '`':
        open_backtick();
        break;
      case '(':
        if (prev.opened) { // "$((": arithmetic, closed by "))"
          stack_.back() = {.kind = frame::arithmetic, .parens = 1};
        } else if (prev.dollar) {
          open_substitution();
        } else if (prev.paren) { // "((": arithmetic too
          --stack_.back().parens;
          stack_.push_back({.kind = frame::arithmetic, .parens = 1, .command = true});
        } else if (stack_.back().last == '=' &&
                   (kind == frame::code || kind == frame::substitution || kind == frame::backtick)) {
          stack_.push_back({frame::compound}); // name=( ... )
        } else {
          if (kind == frame::compound)
            unsure_ = compound_error;
          ++stack_.back().parens;
          end_command(stack_.back());
          after_.paren = true;
        }
        word_start_ = true;
        break;
      case ')':
        if (stack_.back().parens > 0) {
          --stack_.back().parens;
          if (prev.paren && positional_.empty()) // name(): a function's definition
            positional_ = function_error;
          end_command(stack_.back());
        } else if (kind == frame::substitution || kind == frame::arithmetic || kind == frame::compound) {
          // The word goes on after $(...), $((...)) and a=(...): a "#" next starts no
          // comment. After the "))" of a (( )) command it does.
          bool command = stack_.back().command;
          end_word(stack_.back());
          stack_.pop_back();
          word_char(c);
          word_start_ = command;
          break;
        } else if (kind == frame::subscript || kind == frame::test) {
          // As an argument (echo a[ ) or echo [[ ) ), bash ends the word there, and
          // the ")" may end a $(...) this scan stays in.
          unsure_ = "a placeholder after a `)` inside [[ ]] or name[...] cannot be passed safely "
                    "(bash reads it differently in a command's arguments); write it in quotes";
        }
        word_start_ = true;
        break;
      case '{':
        if (prev.dollar)
          stack_.push_back({frame::parameter});
        else
          word_char(c);
        break;
      case '}':
        if (kind == frame::parameter)
          stack_.pop_back();
        word_char(c);
        break;
      case '$':
        after_.dollar = true;
        word_char(c);
        break;
      case '#':
        // No comment inside arithmetic or ${...}; inside name[...] bash reads one only
        // as an argument (echo a[ #]), so the scan cannot tell.
        if (starts_word && kind == frame::subscript)
          unsure_ = "a placeholder after a `#` inside name[...] cannot be passed safely (bash "
                    "reads a comment there only in a command's arguments); write it in quotes";
        else if (starts_word && code_like)
          comment_ = true;
        else
          word_char(c);
        break;
      case '<':
        after_.less = code_like ? prev.less + 1 : 0;
        [[fallthrough]];
      case ';': case '&': case '|': case '>':
        // In name=( ... ) these are syntax errors after which bash drops the rest of
        // the line and reads on: its quotes are not the scan's.
        if (kind == frame::compound)
          unsure_ = compound_error;
        after_.redirect = c == '<' || c == '>';
        if (c == '<' || c == '>' || (c == '&' && prev.redirect)) { // 2>&1: still the redirection
          end_word(stack_.back());
          stack_.back().redirect = true;
        } else {
          end_command(stack_.back());
        }
        word_start_ = true;
        break;
      case '\n':
        end_command(stack_.back());
        word_start_ = true;
        break;
      case ' ': case '\t':
        end_word(stack_.back());
        word_start_ = true;
        break;
      default:
        after_.name = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        word_char(c);
        break;
    }
  }

  std::vector<Frame> stack_{Frame{frame::code}};
  After after_;
  After escape_after_;            // after_ before the last `\`: a line continuation restores it
  bool escape_word_start_ = false;
  bool escaped_ = false;          // the previous character was an unescaped backslash
  bool comment_ = false;
  bool word_start_ = true;
  size_t backtick_ = 0;           // the index of the open `...` frame (at most one), or 0
  bool backtick_backslash_ = false; // it holds a `\`
  std::string_view unsure_;       // why no later placeholder can be passed: the scan may be lost
  std::string_view positional_;   // why no later one can: the positional parameters may have changed
};

} // namespace

std::string shell_element_key(size_t element) {
  return element == 0 ? "command.program" : fmt::format("command.args[{}]", element - 1);
}

Result<std::vector<ShellSegment>> scan_shell_template(std::string_view program,
                                                      const std::vector<std::string>& args) {
  std::vector<ShellSegment> out;
  ShellLexer lexer;
  for (size_t element = 0; element <= args.size(); ++element) {
    std::string_view text = element == 0 ? program : std::string_view(args[element - 1]);
    if (element > 0) {
      out.push_back({element, " ", false, false});
      lexer.read(' ');
    }
    auto found = find_placeholders(text);
    if (!found)
      return Error{fmt::format("{}: {}", shell_element_key(element), found.error())};
    auto read_plain = [&](std::string_view plain) {
      for (char c : plain)
        lexer.read(c);
      if (!plain.empty())
        out.push_back({element, plain, false, false});
    };
    size_t pos = 0;
    for (auto& p : *found) {
      read_plain(text.substr(pos, p.offset - pos));
      auto quoted = lexer.placeholder_double_quoted();
      if (!quoted)
        return Error{fmt::format("{}: {} (in `{}`)", shell_element_key(element), quoted.error(),
                                 text.substr(p.offset, p.length))};
      out.push_back({element, p.expression, true, *quoted});
      lexer.after_placeholder();
      pos = p.offset + p.length;
    }
    read_plain(text.substr(pos));
  }
  return out;
}

} // namespace jp
