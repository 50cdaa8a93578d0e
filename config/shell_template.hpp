// The command of a `shell = true` tool as bash will read it: its shell text and, for
// each {{tool.arguments.NAME}} or {{tool.answers.ID}} placeholder (any other "{{" is
// shell text like the rest), whether it sits unquoted or inside double quotes. A value
// never becomes shell text: the placeholder is replaced by a positional parameter
// ("${N}" unquoted, ${N} inside "..."), and the value is passed after `bash -c`. Inside
// single quotes ('...' or $'...') a parameter would not expand, so a placeholder there
// is refused -- when the config loads, naming the key. So is one where bash evaluates
// a parameter's value as code: (( )), $(( )), $[ ], ${...}, [[ ]] and array subscripts,
// name[...] and a word with a `[` after a name or an expansion ("a[$1]", which unset,
// printf -v, read and declare evaluate, quoted or not) or in name=( ... ). And beyond
// quoting, a placeholder must be where bash takes it as a value: an argument of a
// program (a command written out that is no bash builtin) or of a builtin that takes
// values alone (echo, printf and test but -v, cd, ...), an assigned value (unless the
// template gives variables attributes: an integer's value is evaluated), a
// redirection's file; not a builtin's that takes a name or code (read, declare,
// eval, ...), a command's name, in a function's body, or after `shift` or `set` with
// arguments (which make "${N}" another value). A template that evaluates a variable
// anywhere (arithmetic with a variable, ${x@P}, declare -i, [[ -eq ]], a name-taking
// builtin given an expansion, an unquoted [ $v ]) takes no placeholder at all: a
// value reaches variables through assignments, read, pipes and substitutions, which
// no scan follows.
//
// The scan knows quotes, backslashes and line continuations, comments, $(...),
// backticks, (( )), ${...}, [[ ]] and quoted here-documents (<<'EOF', whose body is
// literal); not unquoted here-documents, case patterns inside $(...)
// or backslashes inside backticks: a placeholder after those is refused, as a wrong
// guess about quoting could put a value where bash evaluates it. What the author's
// script does with "$1" or a variable (eval "$v", read "$v") is the author's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "../messages/result.hpp"

namespace jp {

struct ShellSegment {
  size_t element = 0;         // 0: command.program, i: command.args[i - 1]
  std::string_view text;      // shell text, or the expression inside {{ }} (trimmed)
  bool placeholder = false;
  bool double_quoted = false; // a placeholder inside "..." (else unquoted)
};

/// Scans program and args, which bash reads joined by single spaces. The error starts
/// with the key of the element at fault ("command.program: ..." or "command.args[2]: ...").
Result<std::vector<ShellSegment>> scan_shell_template(std::string_view program,
                                                      const std::vector<std::string>& args);

/// The config key of element i: "command.program" or "command.args[i - 1]".
std::string shell_element_key(size_t element);

} // namespace jp
