#include "config/shell_template.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <span>
#include <utility>

#include "config/code_variable.hpp"
#include "config/placeholder.hpp"
#include "messages/json.hpp"

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
    // A quoted here-document's body: literal lines up to its delimiter's.
    if (heredoc_body_) {
      if (c != '\n') {
        if (heredoc_line_.size() <= heredoc_delim_.size())
          heredoc_line_ += c;
        else
          heredoc_line_ = "\n"; // longer than the delimiter: not it
        return;
      }
      std::string_view line = heredoc_line_;
      while (heredoc_strip_ && !line.empty() && line.front() == '\t')
        line.remove_prefix(1);
      heredoc_body_ = line != heredoc_delim_;
      heredoc_line_.clear();
      return;
    }
    After prev = after_;
    after_ = {};
    // ${n}, "$n" inside $(( )), (( )), a subscript or an offset: a variable evaluated.
    if (c == '$' && !escaped_ && !comment_) {
      auto& w = word_frame(); // a=([$i]=x): an element's index too
      if (in_arithmetic() ||
          (w.kind == frame::compound && w.text.starts_with("[") && w.text.find(']') == std::string::npos))
        arithmetic_ = noted("a variable in an arithmetic expression or a subscript");
    }
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
      if (!comment_) { // the line's end ends the command too
        end_command(stack_.back());
        start_heredoc_body();
      }
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
        else if (c == '`') {
          word_frame().expands = true;
          open_backtick();
        } else if (c == '(' && prev.dollar)
          open_substitution();
        else if (c == '{' && prev.dollar)
          stack_.push_back({frame::parameter});
        else if (c == '[' && prev.dollar)
          push_arithmetic({frame::bracket_arithmetic});
        else {
          after_.dollar = c == '$';
          word_char(c);
          if (c == '$')
            word_frame().expands = true;
        }
        return;
      default:
        read_code(c, prev);
    }
  }

  // The quoting of a placeholder that starts here, or why it cannot be passed safely.
  Result<bool> placeholder_double_quoted() {
    if (escaped_ || after_.dollar)
      return Error{"a placeholder right after `\\` or `$` cannot be passed safely; put a "
                   "space or quote before it"};
    if (after_.less == 2 || heredoc_word_)
      return Error{std::string(heredoc_error)};
    if (heredoc_body_)
      return Error{"a placeholder inside a quoted here-document (<<'EOF') is passed as its text (\"${1}\"), not "
                   "its value: such a body expands nothing; pass the value as an argument or a here-string (<<<)"};
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
    auto assigned = assignment::none;
    if (auto why = context_error(assigned); !why.empty())
      return Error{std::string(why)};
    last_assigned_ = assigned != assignment::none;
    assigned_plain_ = assigned_plain_ || assigned == assignment::plain;
    assigned_declared_ = assigned_declared_ || assigned == assignment::declared;
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

  // Whether a placeholder was an assigned value, and the template gives a variable
  // attributes anywhere (the loop of a script may come back to the assignment):
  // bash evaluates what is assigned to an integer or a name reference, and declare
  // reads a value assigned to an array as a compound assignment's.
  bool assigned_value_may_be_evaluated() const {
    return ((assigned_plain_ || assigned_declared_) && arithmetic_) || (assigned_declared_ && arrays_);
  }
  /// Sets a flag (true), noting the first construct that set one: the refusal names it.
  bool noted(std::string what) {
    if (trigger_.empty())
      trigger_ = std::move(what);
    return true;
  }
  /// noted(), where `when` holds; else leaves the flag as it may be set later.
  bool noted_if(bool when, std::string what) {
    if (when)
      noted(std::move(what));
    return true;
  }
  const std::string& trigger() const { return trigger_; }
  bool evaluates_anywhere() const {
    return integers_ || evaluated_assigned_ || arithmetic_ || (declared_expansion_ && arrays_);
  }
  bool last_assigned() const { return last_assigned_; }

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
    bool amp = false;           // an "&" not part of a redirection
  };

  enum class assignment { none, plain, declared };

  struct Word {
    std::string text;         // its first characters (kMaxWordText), quotes aside
    bool assignment = false;  // NAME=... or NAME+=...
    bool placeholder = false; // holds a placeholder: any value, an option too
    bool plain = false;       // written out: no quotes, escapes, expansions, braces or globs
    bool path = false;        // holds a '/': a program's path, whatever else it holds
    bool expands = false;     // an expansion, braces or a glob: its text may be another
    bool unquoted_expansion = false;
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
    bool name_so_far = true; // letters, digits and '_' alone so far, unquoted
    bool plus = false;       // a '+' after the name: NAME+= follows, or no name
    bool plain = true;       // no quote, escape, expansion, brace or glob so far
    bool slash = false;      // a '/' in it
    bool expands = false;    // an expansion, braces or a glob in it
    bool unquoted_expansion = false; // $x, ${x}, $(...) outside quotes: split into words
    bool process_substitution = false; // it is <( ... ): a file's name
    bool read_from = false;  // that file is a redirection's (< <( ... )): the command reads it
    int braces = 0;          // unquoted `{` open in it
    bool has_placeholder = false;
    // The simple command being read here: its words so far (their first characters;
    // past kMaxWords, `too_many`), and whether the next word is a redirection's
    // target (a file, no argument).
    std::vector<Word> words;
    bool too_many = false;
    bool redirect = false;
    bool to_stdout = false;   // the redirection is `>` or `1>`
    bool stdout_dup = false;  // ... and `&` came after it: >&, 1>& (its word an fd, or a file)
    bool target_pending = false; // a redirection came before this one's `<`/`>` with no file yet
    bool herestring = false; // the redirection is a here-string (<<<): its word is input
    // Function definitions: a "(" with only blanks after it so far (name( ) {...}),
    // a definition whose body is to come, the { } groups open at command position,
    // and the depth of the group that is a function's body (0: none open).
    bool empty_parens = false;
    bool function_pending = false;
    int groups = 0;
    int body = 0;
    bool closed_body = false; // this command is a function body's `}`: its redirections are the function's
    // ${...} and name[...]: the characters read so far, the last a ':'.
    size_t expansion_chars = 0;
    bool expansion_colon = false;
    bool expansion_at = false;
    bool offset = false; // in ${x:...}'s offset or length
    // case ... in: the patterns up to `)` are no command's words.
    bool case_patterns = false;
    int cases = 0;
    bool semicolon = false; // the last character was a ';' (;; ends an arm)
  };

  static constexpr size_t kMaxWords = 256;
  static constexpr size_t kMaxWordText = 64;

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

  static constexpr std::string_view body_error =
    "a placeholder inside a function's body cannot be passed safely: a placeholder becomes a positional "
    "parameter (\"${1}\"), and there those are the function's own arguments; assign the values to "
    "variables before the definition (v={{tool.arguments.NAME}}) and use those";

  static constexpr std::string_view name_operand_error =
    "a placeholder as an argument of a bash builtin that takes a variable's name or code (read, mapfile, "
    "unset, getopts, let, eval, trap, source, declare, local, export but as the value in NAME=value, "
    "printf -v, test -v, wait -p and the like) cannot be passed safely: bash evaluates a name's subscript, "
    "as in a[$(id)], as code; pass it to a program, or echo, printf, test, cd; an assigned value "
    "(v={{tool.arguments.NAME}}) is one too";

  static constexpr std::string_view command_name_error =
    "a placeholder as a command's name cannot be passed safely (a value such as `eval` would run the "
    "next as code); write the program's name out";

  static constexpr std::string_view unknown_command_error =
    "a placeholder as an argument of a command whose name is not written out (quoted, escaped, an "
    "expansion, braces) cannot be passed safely: the scan cannot tell which command takes it; write "
    "the command's name as a plain word";

  static constexpr std::string_view long_command_error =
    "a placeholder in a command of more than 256 words cannot be passed safely (the scan does not "
    "follow it); split the command";

  static constexpr std::string_view evaluated_variable_error =
    "a placeholder assigned to PS0-PS4, PROMPT_COMMAND, BASH_ENV, ENV, SHELLOPTS, BASHOPTS, "
    "BASH_XTRACEFD, PATH, HOME, LD_PRELOAD and the like, to a variable that chooses code a program runs "
    "(GIT_SSH_COMMAND, PYTHONPATH, NODE_OPTIONS, EDITOR, ...), or to one of bash's integers (RANDOM, SRANDOM, "
    "OPTIND, HISTCMD, ...) or arrays (DIRSTACK, BASH_ALIASES, ...) cannot be passed safely: bash expands, runs "
    "or evaluates what those hold, or programs find or run code by them";

  static constexpr std::string_view model_error =
    "a placeholder after coproc, alias, expand_aliases, set -o posix, set -k or extglob cannot be passed "
    "safely: bash reads what follows those otherwise than the scan does; move the placeholder before them";

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
    if (c == '=' && w.name_so_far && w.last != 0 && !w.assigns)
      w.assigns = true;
    // NAME[...]= (+=) assigns too: bash takes it before a command as an assignment
    // (refused there, and runs the command after it), never as a command's name.
    if (c == '=' && !w.assigns && element_assignment(w.text))
      w.assigns = true;
    bool name_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!w.assigns) {
      bool plus = c == '+' && w.name_so_far && w.last != 0 && !w.plus; // NAME+=
      w.name_so_far = w.name_so_far && (name_char || plus || (c == '=' && w.last != 0)) && !(w.plus && c != '=');
      w.plus = plus;
    }
    bool plain_char = name_char || c == '.' || c == '/' || c == '-' || c == '+' || c == ':' || c == ',' ||
                      c == '@' || c == '%' || c == '=' || c == '^' || (c == '[' && w.last == 0) || // `[`
                      (c == '~' && w.last == 0); // ~/bin/tool
    // A command word with a '/' is a path, never a builtin's or a function's name.
    w.slash = w.slash || c == '/';
    w.plain = w.plain && plain_char;
    w.last = c;
    if (w.text.size() < kMaxWordText)
      w.text += c;
  }

  /// Whether `text` is NAME[...] or NAME[...]+, what an `=` next makes an array
  /// element's assignment.
  static bool element_assignment(std::string_view text) {
    if (text.ends_with('+'))
      text.remove_suffix(1);
    auto open = text.find('[');
    if (open == 0 || open == std::string_view::npos || !text.ends_with(']') || !is_name_start(text[0]))
      return false;
    return std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(open), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
  }

  // What makes the current word not written out: a quote, an escape, an expansion.
  void not_plain() {
    auto& w = word_frame();
    w.plain = false;
    if (!w.assigns)
      w.name_so_far = false; // "X"=1 assigns nothing: a quoted name is no name
  }

  // At a word's end, outside quotes.
  void end_word(Frame& f) {
    // A `case` pattern's ")" would end a $(...) early to this scan (`case` as an
    // argument is caught too: refusing more is safe).
    if (f.kind == frame::substitution && f.text == "case")
      unsure_ = "a placeholder after `case` inside $(...) cannot be passed safely (the scan "
                "does not match its patterns' `)`); write the case outside $(...) or put the "
                "placeholder before it";
    bool empty = f.last == 0 && !f.has_placeholder && f.plain;
    if (f.case_patterns && !empty) {
      // A pattern (or esac, which ends the case).
      if (f.text == "esac" && f.plain) {
        f.case_patterns = false;
        --f.cases;
      }
      clear_word(f);
      return;
    }
    if (!empty && std::exchange(f.redirect, false)) {
      // A redirection's file: no word of the command (a here-document's delimiter).
      f.herestring = false;
      // `>& WORD` (`1>& WORD`) where WORD is no fd number is `&> WORD`, and bash
      // expands WORD again then: a value there ("$1", or a variable assigned one)
      // runs its $(...).
      if (std::exchange(f.stdout_dup, false) && (f.has_placeholder || f.expands))
        arithmetic_ = noted("an expansion after `>&` (bash expands the word after `>&` or `1>&` a second time "
                            "where it is no fd number; write `> FILE 2>&1` or `&> FILE`)");
      if (std::exchange(heredoc_word_, false)) {
        if (f.plain || f.has_placeholder)
          unsure_ = heredoc_error; // unquoted: its body expands, which the scan does not follow
        else {
          heredoc_delim_ = f.text;
          heredoc_pending_ = true;
        }
      }
    } else if (!empty) {
      if (f.words.size() < kMaxWords)
        f.words.push_back({f.text, f.assigns, f.has_placeholder, f.plain && !f.has_placeholder,
                           f.slash && !f.has_placeholder, f.expands, f.unquoted_expansion});
      else
        f.too_many = true;
      if (f.kind == frame::code || f.kind == frame::substitution || f.kind == frame::backtick)
        note_command_word(f);
      else if (f.kind == frame::test && (f.text == "-eq" || f.text == "-ne" || f.text == "-lt" || f.text == "-le" ||
                                         f.text == "-gt" || f.text == "-ge" || f.text == "-v" || f.text == "-R"))
        arithmetic_ = noted(fmt::format("`[[ ... {} ... ]]`", f.text)); // [[ $n -eq 3 ]] evaluates $n; [[ -v $x ]] a subscript
    }
    clear_word(f);
  }

  static void clear_word(Frame& f) {
    f.text.clear();
    f.last = 0;
    f.compound = f.bracket = f.assigns = f.has_placeholder = f.plus = f.slash = f.expands = false;
    f.unquoted_expansion = f.process_substitution = f.read_from = false;
    f.braces = 0;
    f.name_so_far = f.plain = true;
  }

  // At a command's end (`;`, `&`, `|`, a line's end, a subshell's parentheses).
  void end_command(Frame& f) {
    end_word(f);
    f.words.clear();
    f.too_many = f.redirect = f.to_stdout = f.stdout_dup = f.herestring = f.closed_body = false;
  }

  // Where a simple command's name is among its words: after reserved words,
  // assignments and `command` / `builtin` / `time` (and their options); words.size()
  // when none is yet.
  static size_t command_at(const std::vector<Word>& words) {
    size_t i = 0;
    bool runner = false; // after command, builtin, exec: NAME=... is a command's name
    for (; i < words.size(); ++i) {
      auto& w = words[i].text;
      // command -v NAME: NAME is looked up, not run (`command` is the command then).
      if (w == "command" && i + 1 < words.size() && (words[i + 1].text == "-v" || words[i + 1].text == "-V"))
        break;
      bool prefix = w == "!" || w == "{" || w == "}" || w == "if" || w == "then" || w == "else" || w == "elif" ||
                    w == "fi" || w == "do" || w == "done" || w == "esac" || w == "while" || w == "until" ||
                    w == "time" || w == "command" || w == "builtin" || w == "exec" || w == "coproc";
      auto& before = i > 0 ? words[i - 1].text : w;
      bool prefix_option = i > 0 && !w.empty() && w[0] == '-' &&
                           (before == "command" || before == "time" || before == "builtin" || before == "exec");
      if (!prefix && !prefix_option && (runner || !words[i].assignment))
        break;
      runner = runner || w == "command" || w == "builtin" || w == "exec";
    }
    return i;
  }

  static bool declares(std::string_view name) {
    return name == "declare" || name == "typeset" || name == "local" || name == "readonly" || name == "export";
  }

  // A word of a command, just ended: { } groups and function bodies, what changes
  // the positional parameters, what gives variables attributes.
  void note_command_word(Frame& f) {
    auto& word = f.words.back();
    auto at = command_at(f.words);
    bool first = at + 1 == f.words.size() ||
                 (at == f.words.size() && f.words.size() >= 1 && (word.text == "{" || word.text == "}"));
    // A group at command position: `{` among the prefixes, `}` at a command's start.
    if (word.text == "{" && at == f.words.size()) {
      ++f.groups;
      if (std::exchange(f.function_pending, false))
        f.body = f.groups;
    } else if (word.text == "}" && f.words.size() == 1 && f.groups > 0) {
      if (f.body == f.groups) {
        f.body = 0;
        f.closed_body = true;
      }
      --f.groups;
    } else if (f.function_pending && first) {
      // A body other than { ... }: not followed; every placeholder after is refused.
      f.function_pending = false;
      if (positional_.empty())
        positional_ = function_error;
    }
    // Where the scan's model of bash ends: coproc (a named one's body is no command
    // it reads as one), aliases, set -k (assignments anywhere on a line), extglob's
    // !( ... ).
    if (word.plain && (word.text == "coproc" || word.text == "alias" || word.text == "expand_aliases" ||
                       word.text == "posix" || word.text.find("POSIXLY_CORRECT") != std::string::npos ||
                       word.text == "extglob" || word.text == "keyword"))
      unsure_ = model_error;
    // PS4="$p", OPTIND=$n, export HISTCMD=$x, env BASH_ENV=...: a value bash evaluates
    // (or runs), from an expansion that may hold a placeholder's value (p={{x}} before
    // it), or one that chooses code (PATH, LD_PRELOAD) from a placeholder where it is
    // no assignment but env's argument. No placeholder anywhere then.
    // (PATH="$HOME/bin:$PATH" is left: where programs are found, not code bash
    // evaluates, and what templates write.)
    // env after the command (timeout 5 env X=..., nohup env X=...) too.
    bool env_argument = false;
    for (size_t i = at; i + 1 < f.words.size(); ++i)
      env_argument = env_argument || f.words[i].text == "env" || f.words[i].text.ends_with("/env");
    // Where bash or env assigns it: a prefix (no command yet), declare's and export's
    // arguments, env's. (`echo SECONDS=$SECONDS` assigns nothing.)
    bool assigned_here = at >= f.words.size() || (at + 1 < f.words.size() && declares(f.words[at].text)) ||
                         env_argument;
    if (word.assignment && assigned_here &&
        ((word.expands && evaluating_variable(word.text)) || (word.placeholder && env_argument &&
                                                              evaluated_variable(word.text))))
      evaluated_assigned_ = noted(fmt::format("{} given a value that is not written out, which {}",
                                              cut_text(word.text.substr(0, word.text.find_first_of("+="))),
                                              evaluating_variable(word.text) ? "bash evaluates" : "chooses code"));
    if (at >= f.words.size())
      return;
    auto& name = f.words[at].text;
    if (name == "case" && word.text == "in" && word.plain && at + 2 < f.words.size() + 1 && f.words.size() == at + 3) {
      ++f.cases;
      f.case_patterns = true;
      f.words.clear();
      return;
    }
    if (word.text == "esac" && word.plain && at + 1 == f.words.size() && f.cases > 0)
      --f.cases;
    // A command whose name is not written out may be declare -i: any variable may
    // have become an integer.
    if (at + 1 == f.words.size() && word.expands && !word.path)
      integers_ = arrays_ = noted(fmt::format("the command `{}`, whose name is not written out", cut_text(word.text)));
    if (name == "let" && at + 1 == f.words.size())
      arithmetic_ = noted("`let`");
    // A name or code that comes from an expansion (a variable, a substitution) may be
    // a value's: eval $x, . <(...), export $x, read $x, printf -v $x; mapfile -C runs
    // a callback with its input. No placeholder anywhere then.
    bool arg = at + 1 < f.words.size();
    bool names_taker = name == "eval" || declares(name) || name == "read" || name == "unset" ||
                       name == "getopts" || name == "trap" || name == "alias" || name == "compgen" ||
                       name == "complete" || name == "wait";
    if (arg && names_taker && word.expands && !word.assignment)
      evaluated_assigned_ = noted(fmt::format("`{} {}`", name, cut_text(word.text)));
    // declare y="$x" where y is (or is made) an array: declare reads the value as a
    // compound assignment's, ([$(id)]=1), whatever its quotes.
    // (export's when it is given -a or -A, which make one.) Bash's own arrays
    // (DIRSTACK, BASH_ALIASES) are arrays whatever the template says.
    bool export_arrays = name == "export" && std::any_of(f.words.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                                                         f.words.end(), [](const Word& w) {
                                                           return w.text[0] == '-' &&
                                                                  w.text.find_first_of("aA") != std::string::npos;
                                                         });
    if (arg && declares(name) && (name != "export" || export_arrays) && word.assignment && word.expands) {
      if (bash_array(word.text) || export_arrays)
        arrays_ = true;
      declared_expansion_ = noted_if(arrays_, fmt::format("`{} {}`", name, cut_text(word.text)));
    }
    // [ $v = yes ]: an unquoted expansion splits, and a value "-v a[...]" becomes a
    // name test -v evaluates (printf's -v alike).
    if (arg && (name == "[" || name == "test" || name == "printf") && word.unquoted_expansion)
      evaluated_assigned_ = noted(fmt::format("the unquoted `{}` given to `{}`", cut_text(word.text), name));
    // [ "$@" ]: quoted, it is still one word per placeholder, "-v" among them.
    if (arg && (name == "[" || name == "test" || name == "printf") &&
        word.text.find("$@") != std::string::npos)
      evaluated_assigned_ = noted(fmt::format("`{}` given to `{}`, one word per value", cut_text(word.text), name));
    // [ -v "$name" ]: the name is a value's, and its subscript is evaluated.
    if (arg && (name == "[" || name == "test") && word.expands && f.words.size() >= 2 &&
        (f.words[f.words.size() - 2].text == "-v" || f.words[f.words.size() - 2].text == "-R"))
      evaluated_assigned_ = noted(fmt::format("`{} {} {}`", name, f.words[f.words.size() - 2].text, cut_text(word.text)));
    // unset 'a[$i]', printf -v 'a[$i]', read 'a[i]': these evaluate the subscript of
    // the name they get, whatever its quotes.
    bool takes_names = names_taker || name == "printf" || name == "[" || name == "test" || name == "wait" ||
                       name == "mapfile" || name == "readarray";
    if (arg && takes_names)
      for (auto at_bracket = word.text.find('['); at_bracket != std::string::npos;
           at_bracket = word.text.find('[', at_bracket + 1)) {
        arrays_ = true; // printf -v 'a[0]', read 'a[0]': a makes an array
        if (at_bracket + 1 < word.text.size() &&
            (word.text[at_bracket + 1] == '$' || is_name_start(word.text[at_bracket + 1])))
          arithmetic_ = noted(fmt::format("the subscript of `{}` given to `{}`", cut_text(word.text), name));
      }
    if (arg && name == "printf" && f.words.size() >= 2 && f.words[f.words.size() - 2].text == "-v" &&
        (word.expands || evaluated_variable(word.text)))
      evaluated_assigned_ = noted(fmt::format("`printf -v {}`", cut_text(word.text))); // printf -v PS4 / -v $x
    // A name joined to its option (printf -vPS4, read -raPS4): not read apart here, so
    // taken as any name.
    bool joined_name = (name == "printf" && word.text.starts_with("-v") && word.text.size() > 2) ||
                       (name == "read" && word.text.starts_with("-") && word.text.find('a') != std::string::npos &&
                        word.text.find('a') + 1 < word.text.size());
    if (arg && joined_name)
      evaluated_assigned_ = noted(fmt::format("`{} {}`, a name joined to its option", name, cut_text(word.text)));
    // . /dev/stdin, source /dev/fd/3: what the template reads in is run, from a pipe
    // or a substitution that may hold a value.
    if (arg && (name == "." || name == "source") &&
        (word.text.starts_with("/dev/") || word.text.starts_with("/proc/")))
      evaluated_assigned_ = noted(fmt::format("`{} {}`", name, cut_text(word.text)));
    if (arg && (name == "mapfile" || name == "readarray") && word.text.starts_with("-") &&
        word.text.find('C') != std::string::npos)
      evaluated_assigned_ = noted(fmt::format("`{} {}`", name, cut_text(word.text)));
    // read PS4, for RANDOM in ...: a value bash evaluates, from input or a list that
    // may hold a placeholder's value (a pipe, a substitution): no placeholder anywhere.
    // (read PATH, read LD_PRELOAD: what programs run by, however the read is fed.)
    bool reads_names = name == "read" || name == "mapfile" || name == "readarray";
    if ((reads_names || name == "for" || name == "select") && at + 1 < f.words.size() && word.plain &&
        (reads_names ? evaluated_variable(word.text, true) : evaluating_variable(word.text)))
      evaluated_assigned_ = noted(fmt::format("`{} {}`", name, cut_text(word.text)));
    if (name == "set" && at + 1 < f.words.size() && word.text.size() > 1 &&
        (word.text[0] == '-' || word.text[0] == '+') && word.text[1] != '-' &&
        word.text.find('k') != std::string::npos)
      unsure_ = model_error; // set -k
    // for NAME do ...: `do` starts a command.
    if (word.text == "do" && at + 1 < f.words.size() && (name == "for" || name == "select")) {
      f.words.clear();
      f.words.push_back({"do", false, false, true, false});
      return;
    }
    // export's options give no attributes, but -a and -A (bash takes declare's).
    bool option = declares(name) && at + 1 < f.words.size() && (word.text[0] == '-' || word.text[0] == '+');
    // An option not read whole, or not written out (o=-i; declare $o n): any.
    if (declares(name) && name != "export" && at + 1 < f.words.size() &&
        (!word.plain || word.text.size() >= kMaxWordText) && !word.assignment)
      integers_ = arrays_ = noted(fmt::format("`{} {}`", name, cut_text(word.text)));
    if (option && name != "export" && word.text.find_first_of("in") != std::string::npos)
      integers_ = noted(fmt::format("`{} {}`", name, cut_text(word.text))); // an integer, a name reference
    if (option && word.text.find_first_of("aA") != std::string::npos)
      arrays_ = true;
    if ((name == "read" && at + 1 < f.words.size() && word.text.starts_with("-") &&
         word.text.find('a') != std::string::npos) ||
        ((name == "mapfile" || name == "readarray") && first))
      arrays_ = true;
    if (name == "function" && at + 1 == f.words.size())
      f.function_pending = true;
    // A placeholder is a positional parameter ("${1}"): `set` with arguments and
    // `shift` change them (in a function's body, the function's own).
    if (!positional_.empty() || f.body > 0)
      return;
    if (name == "shift" && at + 1 == f.words.size()) {
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

  static bool is_builtin_or_keyword(std::string_view name) {
    static constexpr std::string_view names[] = {
      ".",       ":",       "[",        "alias",   "bg",      "bind",     "break",   "builtin", "caller",
      "cd",      "command", "compgen",  "complete", "compopt", "continue", "declare", "dirs",    "disown",
      "echo",    "enable",  "eval",     "exec",    "exit",    "export",   "false",   "fc",      "fg",
      "getopts", "hash",    "help",     "history", "jobs",    "kill",     "let",     "local",   "logout",
      "mapfile", "popd",    "printf",   "pushd",   "pwd",     "read",     "readarray", "readonly", "return",
      "set",     "shift",   "shopt",    "source",  "suspend", "test",     "times",   "trap",    "true",
      "type",    "typeset", "ulimit",   "umask",   "unalias", "unset",    "wait",    "!",       "[[",
      "]]",      "case",    "coproc",   "do",      "done",    "elif",     "else",    "esac",    "fi",
      "for",     "function", "if",      "in",      "select",  "then",     "time",    "until",   "while",
      "{",       "}"};
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
  }

  // Whether bash expands, runs or evaluates what `assignment` (NAME=..., or a NAME)
  // assigns: prompts and startup files, its own integers; `declared` (declare, local,
  // export): its own arrays too, whose value declare reads as a compound assignment's.
  static bool evaluating_variable(std::string_view assignment) {
    auto name = assignment.substr(0, assignment.find_first_of("+="));
    for (std::string_view v : {"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "SHELLOPTS",
                               "BASHOPTS", "BASH_XTRACEFD", "RANDOM", "SRANDOM", "OPTIND", "HISTCMD", "SECONDS",
                               "BASHPID", "PPID", "UID", "EUID", "BASH_COMPAT", "TEXTDOMAIN", "TEXTDOMAINDIR"})
      if (name == v)
        return true;
    return false;
  }

  static bool evaluated_variable(std::string_view assignment, bool declared = false) {
    auto name = assignment.substr(0, assignment.find_first_of("+="));
    if (evaluating_variable(name))
      return true;
    // Where bash and programs find what they run (PATH, LD_PRELOAD, GIT_SSH_COMMAND,
    // PYTHONPATH): a model's choice of code.
    if (!code_variable_reader(name).empty())
      return true;
    return declared && bash_array(name);
  }

  /// Bash's own arrays: a value declare gives one is a compound assignment's.
  static bool bash_array(std::string_view assignment) {
    auto name = assignment.substr(0, assignment.find_first_of("+="));
    for (std::string_view v : {"DIRSTACK", "BASH_ALIASES", "BASH_CMDS", "BASH_ARGV", "BASH_ARGC", "BASH_LINENO",
                               "BASH_SOURCE", "BASH_VERSINFO", "FUNCNAME", "GROUPS", "PIPESTATUS", "BASH_REMATCH",
                               "COMP_WORDS", "COMPREPLY"})
      if (name == v)
        return true;
    return false;
  }

  // Why bash may take a placeholder starting here for something else than a value:
  // a variable's name, code, a command; "" when it is a value. Allowed: an argument
  // of a program (a command written out that is no bash builtin), of echo, printf,
  // test, cd and the like (printf -v and test -v aside), an assigned value, a
  // redirection's file. `assigned`: what assigned value it is (attributes given
  // anywhere in the template may make it evaluated: checked at the end).
  std::string_view context_error(assignment& assigned) const {
    assigned = assignment::none;
    // Inside $( ), ` ` or <( ): its output is a word (a file's name) of the command
    // around it, which must take it as a value too (not export $(...), read $(...),
    // . <(...), PS4=$(...)).
    for (size_t k = 1; k < stack_.size(); ++k)
      if (stack_[k].kind == frame::substitution || stack_[k].kind == frame::backtick) {
        auto j = k - 1;
        while (j > 0 && is_quotes(stack_[j].kind))
          --j;
        auto outer = assignment::none;
        if (auto why = word_context(stack_[j], outer); !why.empty())
          return why;
      }
    auto i = stack_.size() - 1;
    while (is_quotes(stack_[i].kind))
      --i;
    return word_context(stack_[i], assigned);
  }

  // The command around the word being read in `f`, and where in it the word is.
  std::string_view word_context(const Frame& f, assignment& assigned) const {
    if (f.body > 0 || f.function_pending || f.closed_body)
      return body_error;
    if (f.kind == frame::compound) { // name=( ... )'s element (a [i]= is refused before)
      assigned = assignment::plain;
      return {};
    }
    if (!positional_.empty())
      return positional_;
    if (f.too_many)
      return long_command_error;
    auto at = command_at(f.words);
    if (at == f.words.size()) {
      // No command yet: a redirection's file, an assignment's value, or the name.
      if (f.redirect || f.process_substitution) // done < <(grep ...): a file
        return {};
      // After command, builtin or exec a NAME=... word is the command's name.
      bool runner = std::any_of(f.words.begin(), f.words.end(), [](const Word& w) {
        return !w.assignment && (w.text == "command" || w.text == "builtin" || w.text == "exec");
      });
      if (f.assigns && !runner) {
        assigned = assignment::plain;
        return evaluated_variable(f.text) ? evaluated_variable_error : std::string_view();
      }
      return command_name_error;
    }
    auto& command = f.words[at];
    auto& name = command.text;
    // A word matched (case WORD in), or assigned in turn (for NAME in WORDS).
    if (command.plain && name == "case")
      return {};
    if (command.plain && (name == "for" || name == "select")) {
      assigned = assignment::plain;
      bool named = at + 1 < f.words.size();
      return named && evaluated_variable(f.words[at + 1].text) ? evaluated_variable_error : std::string_view();
    }
    if (!command.plain && !command.path)
      return unknown_command_error;
    // read's and mapfile's input becomes a variable's value: a file's name is
    // none, a here-string's word is (evaluated where the variable is an integer).
    if (!command.path && (name == "read" || name == "mapfile" || name == "readarray")) {
      // Its names: no value. Its input: a file's name is one; a here-string is the
      // value itself, which mapfile -C would run a callback with (and any -C
      // refuses every placeholder).
      // mapfile -t a < <( ... ): the substitution's output is input too, read as a
      // file's is (its names checked as a here-string's).
      bool read_from = f.process_substitution && f.read_from;
      if (!(f.redirect || read_from) || (name != "read" && f.herestring))
        return name_operand_error;
      if (f.herestring || read_from) {
        assigned = assignment::plain;
        for (auto w = f.words.begin() + static_cast<std::ptrdiff_t>(at) + 1; w != f.words.end(); ++w)
          if (evaluated_variable(w->text, true))
            return evaluated_variable_error;
      }
      return {};
    }
    if (f.redirect || command.path || !is_builtin_or_keyword(name))
      return {};
    std::span<const Word> args(f.words.begin() + static_cast<std::ptrdiff_t>(at) + 1, f.words.end());
    auto has = [&](auto pred) { return std::any_of(args.begin(), args.end(), pred); };
    bool after_placeholder = !args.empty() && args.back().placeholder;
    for (std::string_view safe : {"echo", ":", "true", "false", "cd", "pushd", "popd", "pwd", "dirs", "exit",
                                  "return", "kill", "umask", "ulimit", "type", "times",
                                  "command"}) // command -v NAME (command_at stops there only then)
      if (name == safe)
        return {};
    if (declares(name)) {
      // A value assigned (export X={{v}}) is a value, unless an option (-i, -n, -a,
      // or a placeholder, which may be one) makes it evaluated or a name.
      bool evaluating = has([](const Word& w) {
        return (w.placeholder && !w.assignment) ||
               ((w.text[0] == '-' || w.text[0] == '+') && w.text.find_first_of("inaA") != std::string::npos);
      });
      if (!f.assigns || evaluating)
        return name_operand_error;
      // Only declare and typeset read a value as a compound assignment's.
      assigned = name == "declare" || name == "typeset" ? assignment::declared : assignment::plain;
      return evaluated_variable(f.text, true) ? evaluated_variable_error : std::string_view();
    }
    if (name == "printf") {
      // printf -v NAME; or where an option may still be (-vNAME), no -- before; a
      // word that expands may be either.
      bool options_only = std::all_of(args.begin(), args.end(), [](const Word& w) {
        return w.placeholder || w.expands || (w.text[0] == '-' && w.text != "--");
      });
      if (options_only)
        return name_operand_error;
      // printf -v x FORMAT {{v}}: x is assigned what the value makes.
      if (has([](const Word& w) { return w.text.starts_with("-v"); }))
        assigned = assignment::plain;
      return {};
    }
    if (name == "test" || name == "[") {
      // test -v NAME, test -R NAME; or after a placeholder or a word that expands,
      // which may be "-v".
      auto& before = args.empty() ? name : args.back().text;
      bool may_be_v = after_placeholder || (!args.empty() && args.back().expands);
      return before == "-v" || before == "-R" || may_be_v ? name_operand_error : std::string_view();
    }
    return name_operand_error; // wait too: -pNAME may be its value
  }

  void escape(const After& prev, bool starts_word = false) {
    escaped_ = true;
    escape_after_ = prev;
    escape_word_start_ = starts_word;
  }

  bool in_arithmetic() const {
    return std::any_of(stack_.begin(), stack_.end(), [](const Frame& f) {
      return f.kind == frame::arithmetic || f.kind == frame::bracket_arithmetic || f.kind == frame::subscript ||
             (f.kind == frame::parameter && f.offset);
    });
  }

  static bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

  // A line's end: the here-document whose delimiter was on it begins.
  void start_heredoc_body() {
    if (std::exchange(heredoc_pending_, false)) {
      heredoc_body_ = true;
      heredoc_line_.clear();
    }
  }

  void push_arithmetic(Frame f) {
    stack_.push_back(std::move(f)); // a name read inside it sets arithmetic_
  }

  // Inside ${...} and a subscript: what makes bash evaluate a variable's value as
  // arithmetic (${x:n}, ${a[i]}, ${!x}: the indirection's name may be a[i]); not
  // ${x:-default}, ${a[@]}.
  void note_expansion_char(Frame& f, char c) {
    if (f.kind == frame::parameter) {
      // ${x@P} expands the value as a prompt: its $( ) runs, as evaluated as code.
      // ${x:n:m} evaluates n and m: a variable among them is evaluated.
      if (f.expansion_colon && c != '-' && c != '=' && c != '+' && c != '?')
        f.offset = true;
      if ((f.expansion_chars == 0 && c == '!') || (f.offset && is_name_start(c)) || (f.expansion_at && c == 'P'))
        arithmetic_ = noted("`${!x}`, `${x:n}` or `${x@P}`");
      f.expansion_colon = c == ':';
      f.expansion_at = c == '@';
    } else if (f.kind == frame::subscript && is_name_start(c)) {
      arithmetic_ = noted("a variable in a subscript (`${a[i]}`, `a[i]=`)"); // not ${a[0]}, ${a[@]}
    }
    ++f.expansion_chars;
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
    // A lone `&` (or `&&`) ended the command; `&>` is a redirection.
    if (prev.amp && c != '>')
      end_command(stack_.back());
    // An unquoted $x, ${x}, $(...) splits ($#, $?, $$, $! do not).
    if (prev.dollar && c != '#' && c != '?' && c != '$' && c != '!' && c != '-')
      word_frame().unquoted_expansion = true;
    if ((kind == frame::parameter && c != '}') || (kind == frame::subscript && c != ']'))
      note_expansion_char(stack_.back(), c);
    if ((kind == frame::arithmetic || kind == frame::bracket_arithmetic) && is_name_start(c))
      arithmetic_ = noted("a variable in `(( ))` or `$(( ))`"); // (( n > 5 )), $((n+1))
    if (c != ';' && c != ' ' && c != '\t' && c != '&')
      stack_.back().semicolon = false;
    if (c != ' ' && c != '\t' && c != '\n' && c != ')')
      stack_.back().empty_parens = false;
    // Bash reads no here-document or comment inside arithmetic or ${...}; in name[...]
    // and [[ ]] it may (as an argument), so those count.
    bool code_like = kind != frame::arithmetic && kind != frame::bracket_arithmetic && kind != frame::parameter;
    if (prev.less == 2 && c != '<') {
      // A here-document: its body is followed only when its delimiter is quoted (the
      // body is then literal), one at a time, outside $( ) and the like.
      if (heredoc_word_ || heredoc_pending_ || stack_.size() != 1) {
        unsure_ = heredoc_error;
      } else {
        heredoc_word_ = true;
        heredoc_strip_ = c == '-';
        if (c == '-')
          return; // <<-: the operator's, no part of the delimiter
      }
    }
    switch (c) {
      case '[':
        if (prev.dollar) {
          push_arithmetic({frame::bracket_arithmetic});
          break;
        }
        word_char(c);
        if (prev.name) { // a[...]=x: the subscript is arithmetic (a glob's [...] too: refused alike)
          stack_.push_back({frame::subscript}); // its index: arithmetic unless @ or * (below)
          arrays_ = true; // a[0]=x makes an array (a glob too, to this scan)
        }
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
        not_plain();
        escape(prev, starts_word);
        break;
      case '\'':
        not_plain();
        stack_.push_back({prev.dollar ? frame::ansi_c : frame::single_quotes});
        break;
      case '"':
        not_plain();
        stack_.push_back({frame::double_quotes});
        break;
      case '`':
        not_plain();
        word_frame().expands = word_frame().unquoted_expansion = true;
        open_backtick();
        break;
      case '(':
        if (stack_.back().case_patterns && kind == frame::code) { // (pattern): part of the pattern's syntax
          word_start_ = true;
          break;
        }
        if (prev.opened) { // "$((": arithmetic, closed by "))"
          stack_.back() = {.kind = frame::arithmetic, .parens = 1};
        } else if (prev.dollar) {
          open_substitution();
        } else if (prev.paren) { // "((": arithmetic too
          --stack_.back().parens;
          push_arithmetic({.kind = frame::arithmetic, .parens = 1, .command = true});
        } else if (stack_.back().last == '=' &&
                   (kind == frame::code || kind == frame::substitution || kind == frame::backtick)) {
          stack_.push_back({frame::compound}); // name=( ... )
          arrays_ = true;
        } else if (prev.redirect && kind != frame::compound) {
          // <( ... ), >( ... ): a file's name, an argument of the command around it,
          // whose own command is read as $( ... )'s.
          auto& outer = stack_.back();
          outer.redirect = outer.stdout_dup = false;
          outer.process_substitution = true;
          outer.read_from = std::exchange(outer.target_pending, false);
          not_plain();
          outer.last = '(';
          open_substitution();
          after_.opened = false;
        } else {
          if (kind == frame::compound)
            unsure_ = compound_error;
          // name( ) {: a function's definition, once only blanks come before ")".
          auto& words = stack_.back().words;
          bool named = stack_.back().last != 0 ||
                       (!words.empty() && words.back().plain && command_at(words) + 1 == words.size());
          ++stack_.back().parens;
          end_command(stack_.back());
          stack_.back().empty_parens = named;
          after_.paren = true;
        }
        word_start_ = true;
        break;
      case ')':
        if (stack_.back().parens > 0) {
          auto& f = stack_.back();
          --f.parens;
          if (std::exchange(f.empty_parens, false)) // name( ): a function's definition, its body next
            f.function_pending = true;
          end_command(f);
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
        } else if (kind == frame::code) {
          // A case pattern's end: a command starts.
          auto& f = stack_.back();
          if (f.case_patterns)
            clear_word(f);
          f.case_patterns = false;
          end_command(f);
        }
        word_start_ = true;
        break;
      case '{':
        if (prev.dollar) {
          stack_.push_back({frame::parameter});
        } else {
          word_char(c);
          ++word_frame().braces; // {a,b} or {1..3} expand; {x} does not
        }
        break;
      case '}':
        if (kind == frame::parameter) {
          // ${@}, ${@:2}, and "$@" inside (${x:-$@}, ${1+"$@"}, ${x-${@}}): one word per
          // positional, as "$@"; the word keeps the `@`.
          auto& inside = stack_.back().text;
          bool positionals = inside.starts_with("@") || inside.find("$@") != std::string::npos;
          stack_.pop_back();
          if (positionals)
            word_char('@');
        }
        else if (word_frame().braces > 0)
          --word_frame().braces;
        word_char(c);
        break;
      case '$':
        after_.dollar = true;
        word_char(c);
        not_plain();
        word_frame().expands = true;
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
        if (c == '<' || c == '>') {
          // 2>file, {fd}>file: the word before is the redirection's fd, no argument.
          auto& f = stack_.back();
          bool fd = !f.text.empty() && f.plain && !f.has_placeholder &&
                    f.text.find_first_not_of("0123456789") == std::string::npos;
          bool named_fd = f.text.size() > 2 && f.text.front() == '{' && f.text.back() == '}';
          bool to_stdout = c == '>' && (!(fd || named_fd) || f.text == "1");
          if (fd || named_fd)
            clear_word(f);
          end_word(f);
          f.to_stdout = to_stdout;
          f.stdout_dup = false;
          // `< <(`: the first `<`'s file is the substitution (not `<<`, `<<<`).
          f.target_pending = f.redirect && f.text.empty() && after_.less == 1;
          f.redirect = true;
          f.herestring = c == '<' && after_.less == 3;
        } else if (prev.redirect && (c == '&' || c == '|')) { // 2>&1, >|: still the redirection
          stack_.back().redirect = true;
          stack_.back().stdout_dup = c == '&' && stack_.back().to_stdout;
        } else if (c == '&') {
          end_word(stack_.back()); // the command ends, unless `>` follows (&>)
          after_.amp = true;
        } else {
          auto& f = stack_.back();
          end_command(f);
          // ;; (;& ;;&) in a case: the next arm's patterns come.
          if (c == ';' && f.semicolon && f.cases > 0)
            f.case_patterns = true;
          f.semicolon = c == ';';
          word_start_ = true;
          break;
        }
        word_start_ = true;
        break;
      case '\n':
        end_command(stack_.back());
        start_heredoc_body();
        word_start_ = true;
        break;
      case ' ': case '\t':
        end_word(stack_.back());
        word_start_ = true;
        break;
      default: {
        after_.name = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        auto& w = word_frame();
        if (c == '*' || c == '?' || (w.braces > 0 && (c == ',' || (c == '.' && w.last == '.'))))
          w.expands = true; // a glob, a brace expansion
        word_char(c);
        break;
      }
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
  // A quoted here-document: its delimiter word being read, read and its body next,
  // or its body being skipped (<<- strips leading tabs from the delimiter's line).
  bool heredoc_word_ = false;
  bool heredoc_pending_ = false;
  bool heredoc_body_ = false;
  bool heredoc_strip_ = false;
  std::string heredoc_delim_;
  std::string heredoc_line_;
  std::string_view positional_;   // why no later one can: the positional parameters may have changed
  bool integers_ = false;         // a variable is made an integer or a name reference (declare -i, -n)
  bool evaluated_assigned_ = false; // PS4, RANDOM, PATH and the like are assigned
  bool arithmetic_ = false;       // a value evaluated anywhere: (( )), $(( )), [[ -eq ]], ${x:n}, ${a[i]}, ${x@P}, let
  bool arrays_ = false;           // or an array (declare -a, -A, read -a, mapfile, name=( ))
  bool declared_expansion_ = false; // declare NAME="$x": an array's is a compound assignment
  std::string trigger_;             // the first construct that set one of the flags above
  bool assigned_plain_ = false;   // a placeholder was the value of an assignment, or an array's element
  bool assigned_declared_ = false; // of declare, local, export's NAME=value
  bool last_assigned_ = false;    // the last one was
};

} // namespace

std::string shell_element_key(size_t element) {
  return element == 0 ? "command.program" : fmt::format("command.args[{}]", element - 1);
}

Result<std::vector<ShellSegment>> scan_shell_template(std::string_view program,
                                                      const std::vector<std::string>& args) {
  std::vector<ShellSegment> out;
  ShellLexer lexer;
  std::optional<size_t> first_assigned; // the element of the first assigned placeholder
  std::optional<size_t> first_placeholder;
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
      if (!first_placeholder)
        first_placeholder = element;
      if (lexer.last_assigned() && !first_assigned)
        first_assigned = element;
      lexer.after_placeholder();
      pos = p.offset + p.length;
    }
    read_plain(text.substr(pos));
  }
  lexer.read('\n'); // the last command's last word counts too (read PS4, declare -i n)
  if (lexer.evaluates_anywhere() && std::any_of(out.begin(), out.end(), [](auto& seg) { return seg.placeholder; }))
    return Error{fmt::format("{}: a placeholder cannot be passed safely where the template makes a variable an "
                             "integer or a name reference (declare -i, -n; or a command whose name is not "
                             "written out, which may), evaluates a variable as arithmetic or a prompt "
                             "((( x )), $(( x )), [[ -eq ]], ${{x:n}}, ${{a[i]}}, ${{!x}}, ${{x@P}}, let), reads PS4, "
                             "RANDOM and the like, or takes a name or code from an expansion (eval $x, export $x, "
                             "read $x, trap \"... $x\", compgen -W \"$x\", [ -v \"$x\" ], printf -v $x, mapfile -C, "
                             "an unquoted [ $x ], declare y=\"$x\" where the template makes arrays): a value may reach it through an assignment, a "
                             "substitution, a pipe or a file, and bash evaluates it (a[$(id)] runs){}",
                             shell_element_key(first_placeholder.value_or(0)),
                             lexer.trigger().empty() ? std::string() : "; here: " + lexer.trigger())};
  if (lexer.assigned_value_may_be_evaluated())
    return Error{fmt::format("{}: a placeholder assigned to a variable cannot be passed safely where the "
                             "template evaluates arithmetic ((( )), $(( )), [[ -eq ]], ${{x:n}}, ${{a[i]}}, ${{!x}}, ${{x@P}}, "
                             "let), where bash evaluates a variable's value as code (a[$(id)] runs), or makes "
                             "arrays (declare -a, -A, read -a, mapfile, name=( ... )), whose value declare reads "
                             "as a compound assignment's; pass the value to a command instead",
                             shell_element_key(first_assigned.value_or(0)))};
  return out;
}

} // namespace jp
