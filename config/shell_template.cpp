#include "config/shell_template.hpp"

#include <fmt/format.h>

namespace jp {

namespace {

enum class frame {
  code, substitution, backtick, arithmetic, parameter, double_quotes, single_quotes, ansi_c,
  bracket_arithmetic, // $[ ... ], closed by ]
  subscript,          // name[ ... ] (an array element being assigned), closed by ]
  test,               // [[ ... ]]: -eq and the like evaluate their operands as arithmetic
};

// Where bash is in the text read so far: just enough of its grammar to tell the
// quoting around the next placeholder.
class ShellLexer {
public:
  void read(char c) {
    bool after_dollar = dollar_;
    bool opened = just_opened_;
    bool after_paren = paren_;
    bool after_name = name_char_;
    bool after_open_bracket = open_bracket_;
    bool after_close_bracket = close_bracket_;
    dollar_ = just_opened_ = paren_ = name_char_ = open_bracket_ = close_bracket_ = false;
    if (comment_) {
      comment_ = c != '\n';
      word_start_ = !comment_;
      return;
    }
    if (escaped_) {
      escaped_ = false;
      word_start_ = false;
      return;
    }
    switch (top()) {
      case frame::single_quotes:
        if (c == '\'')
          stack_.pop_back();
        return;
      case frame::ansi_c:
        if (c == '\\')
          escaped_ = true;
        else if (c == '\'')
          stack_.pop_back();
        return;
      case frame::double_quotes:
        if (c == '\\')
          escaped_ = true;
        else if (c == '"')
          stack_.pop_back();
        else if (c == '`')
          stack_.push_back({frame::backtick});
        else if (c == '(' && after_dollar)
          open_substitution();
        else if (c == '{' && after_dollar)
          stack_.push_back({frame::parameter});
        else if (c == '[' && after_dollar)
          stack_.push_back({frame::bracket_arithmetic});
        else if (c == '$')
          dollar_ = true;
        return;
      default:
        read_code(c, after_dollar, opened, after_paren, after_name, after_open_bracket, after_close_bracket);
    }
  }

  // The quoting of a placeholder that starts here, or why it cannot be passed safely.
  Result<bool> placeholder_double_quoted() const {
    if (escaped_ || dollar_)
      return Error{"a placeholder right after `\\` or `$` cannot be passed safely; put a "
                   "space or quote before it"};
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

  void after_placeholder() { dollar_ = just_opened_ = paren_ = word_start_ = false; }

private:
  struct Frame {
    frame kind;
    int parens = 0; // open "(" of subshells and case patterns inside this frame
  };

  frame top() const { return stack_.back().kind; }

  void open_substitution() {
    stack_.push_back({frame::substitution});
    just_opened_ = true;
  }

  void read_code(char c, bool after_dollar, bool opened, bool after_paren, bool after_name,
                 bool after_open_bracket, bool after_close_bracket) {
    bool starts_word = word_start_;
    word_start_ = false;
    switch (c) {
      case '[':
        if (after_dollar)
          stack_.push_back({frame::bracket_arithmetic});
        else if (after_name) // a[...]=x: the subscript is arithmetic (a glob's [...] too: refused alike)
          stack_.push_back({frame::subscript});
        else if (after_open_bracket) // "[[" at a word's start
          stack_.push_back({frame::test});
        else
          open_bracket_ = starts_word;
        break;
      case ']':
        if (top() == frame::bracket_arithmetic || top() == frame::subscript)
          stack_.pop_back();
        else if (top() == frame::test && after_close_bracket)
          stack_.pop_back();
        else
          close_bracket_ = top() == frame::test;
        break;
      case '\\':
        escaped_ = true;
        break;
      case '\'':
        stack_.push_back({after_dollar ? frame::ansi_c : frame::single_quotes});
        break;
      case '"':
        stack_.push_back({frame::double_quotes});
        break;
      case '`':
        if (top() == frame::backtick)
          stack_.pop_back();
        else
          stack_.push_back({frame::backtick});
        break;
      case '(':
        if (opened) { // "$((": arithmetic, closed by "))"
          stack_.back() = {frame::arithmetic, 1};
        } else if (after_dollar) {
          open_substitution();
        } else if (after_paren) { // "((": arithmetic too
          --stack_.back().parens;
          stack_.push_back({frame::arithmetic, 1});
        } else {
          ++stack_.back().parens;
          paren_ = true;
        }
        word_start_ = true;
        break;
      case ')':
        if (stack_.back().parens > 0)
          --stack_.back().parens;
        else if (top() == frame::substitution || top() == frame::arithmetic)
          stack_.pop_back();
        word_start_ = true;
        break;
      case '{':
        if (after_dollar)
          stack_.push_back({frame::parameter});
        break;
      case '}':
        if (top() == frame::parameter)
          stack_.pop_back();
        break;
      case '$':
        dollar_ = true;
        break;
      case '#':
        comment_ = starts_word;
        break;
      case ' ': case '\t': case '\n': case ';': case '&': case '|': case '<': case '>':
        word_start_ = true;
        break;
      default:
        name_char_ = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        break;
    }
  }

  std::vector<Frame> stack_{Frame{frame::code}};
  bool escaped_ = false;     // the previous character was an unescaped backslash
  bool dollar_ = false;      // ... an unescaped `$`
  bool just_opened_ = false; // ... the "(" of "$("
  bool paren_ = false;       // ... a "(" opening a subshell
  bool comment_ = false;
  bool word_start_ = true;
  bool name_char_ = false;   // ... a letter, digit or '_' read as code
  bool open_bracket_ = false;  // ... a "[" starting a word
  bool close_bracket_ = false; // ... a "]" inside [[ ]]
};

} // namespace

std::string_view placeholder_expression(std::string_view inner) {
  while (!inner.empty() && (inner.front() == ' ' || inner.front() == '\t'))
    inner.remove_prefix(1);
  while (!inner.empty() && (inner.back() == ' ' || inner.back() == '\t'))
    inner.remove_suffix(1);
  return inner;
}

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
    size_t pos = 0;
    while (pos < text.size()) {
      auto open = text.find("{{", pos);
      auto plain = text.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
      for (char c : plain)
        lexer.read(c);
      if (!plain.empty())
        out.push_back({element, plain, false, false});
      if (open == std::string_view::npos)
        break;
      auto close = text.find("}}", open + 2);
      if (close == std::string_view::npos)
        return Error{fmt::format("{}: unterminated `{{{{` in template `{}`",
                                 shell_element_key(element), text)};
      auto quoted = lexer.placeholder_double_quoted();
      if (!quoted)
        return Error{fmt::format("{}: {} (in `{}`)", shell_element_key(element), quoted.error(),
                                 text.substr(open, close + 2 - open))};
      out.push_back({element, placeholder_expression(text.substr(open + 2, close - open - 2)), true, *quoted});
      lexer.after_placeholder();
      pos = close + 2;
    }
  }
  return out;
}

} // namespace jp
