// shell = true tools: a value reaches bash as a positional parameter, whatever quotes
// surround its placeholder, so no value can end its quoting and run. Checked with real
// bash processes: hostile values create no file and arrive byte for byte.
#define CAF_SUITE shell_template
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <random>

#include "cli_run.hpp"
#include "run_argv.hpp"
#include "temp_dir.hpp"

#include "config/config_loader.hpp"
#include "config/shell_template.hpp"
#include "tools/argv_template.hpp"
#include "tools/builtin_tools.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

ToolConfig shell_tool(std::string program, std::vector<std::string> args = {}) {
  return ToolConfig{.name = "t", .program = std::move(program), .args = std::move(args), .shell = true};
}

// The scan's cases below write {{a}} for {{tool.arguments.a}}: this spells it out.
std::string spelled(std::string_view shorthand) {
  std::string out(shorthand);
  for (auto at = out.find("{{"); at != std::string::npos; at = out.find("{{", at + 2))
    out.insert(at + 2, "tool.arguments.");
  return out;
}

// The placeholders of a template: their name and whether they are double-quoted.
std::vector<std::pair<std::string, bool>> placeholders(std::string_view program,
                                                       std::vector<std::string> args = {}) {
  auto text = spelled(program);
  for (auto& a : args)
    a = spelled(a);
  auto scan = scan_shell_template(text, args); // its segments view text and args
  if (!scan.ok())
    CAF_MESSAGE(scan.error());
  CAF_REQUIRE(scan.ok());
  std::vector<std::pair<std::string, bool>> out;
  for (auto& s : *scan)
    if (s.placeholder)
      out.emplace_back(std::string(s.text.substr(std::string_view("tool.arguments.").size())), s.double_quoted);
  return out;
}

std::string scan_error(std::string_view program, std::vector<std::string> args = {}) {
  for (auto& a : args)
    a = spelled(a);
  auto scan = scan_shell_template(spelled(program), args);
  return scan.ok() ? "" : scan.error();
}

// Expands `tool` with {"x": value} and runs it in `dir`; returns what it printed.
std::string run_with(const ToolConfig& tool, const std::string& value, const temp_dir& dir) {
  auto args = Json::object().set("x", value);
  auto answers = Json::object();
  auto argv = expand_argv(tool, TemplateContext{args, answers});
  if (!argv.ok())
    CAF_FAIL(tool.program << ": " << argv.error());
  auto r = run_argv(*argv, dir.path.string());
  CAF_CHECK_EQUAL(r.status, 0);
  return r.out;
}

bool empty_dir(const temp_dir& dir) {
  return std::filesystem::is_empty(dir.path);
}

// Templates whose output is the value between known text, with the placeholder
// unquoted, in double quotes, as its own args element and inside "$(...)".
struct Case {
  ToolConfig tool;
  std::string before, after;
};

std::vector<Case> cases() {
  return {
    {shell_tool("printf '%s' {{tool.arguments.x}}"), "", ""},
    {shell_tool("printf '%s' \"<{{ tool.arguments.x }}>\""), "<", ">"},
    {shell_tool("printf", {"'%s'", "{{tool.arguments.x}}"}), "", ""},
    // Command substitution drops trailing newlines: the "." keeps them.
    {shell_tool(R"sh(printf '%s' "$(printf '%s.' "{{tool.arguments.x}}")" # it's {{tool.arguments.x}})sh"), "", "."},
    // A "[" that names no array element, and a line continuation before the placeholder.
    {shell_tool("printf '%s' \\\n \"[{{tool.arguments.x}}]\""), "[", "]"},
    // A value assigned by export, and a function given one through a variable (the
    // ways the scan's refusals below point to), a test's operand.
    {shell_tool("export X={{tool.arguments.x}}; printf '%s' \"$X\""), "", ""},
    {shell_tool("v={{tool.arguments.x}}; f() { printf '%s' \"$1\"; }; f \"$v\""), "", ""},
    {shell_tool("[ -n {{tool.arguments.x}} ] || [ -z \"{{tool.arguments.x}}\" ] && printf '%s' {{tool.arguments.x}}"), "", ""},
    // After a quoted here-document, whose body (quotes, $( ) and all) is literal.
    {shell_tool("cat <<'EOF'\nit's \"$1\" $(x) `y`\nEOF\nprintf '%s' {{tool.arguments.x}}"), "it's \"$1\" $(x) `y`\n", ""},
  };
}

} // namespace

CAF_TEST(the scan tells unquoted from double-quoted placeholders) {
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("echo {{a}} \"{{b}}\" x\"y{{c}}\""),
                  (P{{"a", false}, {"b", true}, {"c", true}}));
  CAF_CHECK_EQUAL(placeholders("echo \"$(cat {{a}})\" `ls {{b}}` \"`ls {{c}}`\""),
                  (P{{"a", false}, {"b", false}, {"c", false}}));
  CAF_CHECK_EQUAL(placeholders("echo 'it''s' \\' \"\\\"\" {{a}}"), (P{{"a", false}}));
  CAF_CHECK_EQUAL(placeholders("echo # it's a comment {{a}}\necho {{b}}"),
                  (P{{"a", false}, {"b", false}}));
  CAF_CHECK_EQUAL(placeholders("echo \"", {"{{a}}", "\"", "{{b}}"}), (P{{"a", true}, {"b", false}}));
  CAF_CHECK_EQUAL(placeholders("echo $(( 1 + 2 )) $(x); ((3 > 2)); ( (z) ); echo \"${#v[@]}\" {{a}}"),
                  (P{{"a", false}}));
}

CAF_TEST(placeholders that cannot be passed safely are errors naming the element) {
  CAF_CHECK(scan_error("echo '{{a}}'").starts_with(
    "command.program: a placeholder inside single quotes cannot be passed safely"));
  CAF_CHECK(scan_error("echo $'x{{a}}'").find("inside single quotes") != std::string::npos);
  CAF_CHECK(scan_error("echo \"'\" '", {"x", "{{a}}"}).starts_with("command.args[1]: a placeholder "
                                                                  "inside single quotes"));
  CAF_CHECK(scan_error("echo \\{{a}}").find("right after `\\` or `$`") != std::string::npos);
  CAF_CHECK(scan_error("echo \"${{a}}\"").find("right after `\\` or `$`") != std::string::npos);
  CAF_CHECK(scan_error("echo $(( {{a}} + 1 ))").find("inside (( )), $(( ))") != std::string::npos);
  CAF_CHECK(scan_error("(( x = {{a}} ))").find("inside (( )), $(( ))") != std::string::npos);
  CAF_CHECK(scan_error("echo \"${arr[{{a}}]}\"").find("inside ${...}") != std::string::npos);
  CAF_CHECK(scan_error("echo ${x:-{{a}}}").find("inside ${...}") != std::string::npos);
  CAF_CHECK(scan_error("echo {{a").starts_with("command.program: unterminated `{{`"));
}

CAF_TEST(a placeholder bash would evaluate as arithmetic is refused whatever the quotes around it) {
  // A value such as a[$(id)] runs `id` wherever bash evaluates it as arithmetic: a
  // review ran code through the first three of these.
  for (auto program : {"echo $(( \"{{a}}\" + 1 ))", "echo \"${x[\"{{a}}\"]}\"", "echo $[ {{a}} ]",
                       "echo \"$[{{a}}]\"", "a[{{a}}]=x", "a[\"{{a}}\"]=x; echo ${a[@]}",
                       "echo $(( $(printf %s \"{{a}}\") ))", "[[ {{a}} -eq 1 ]]", "[[ \"{{a}}\" -eq 1 ]] && echo"})
    CAF_CHECK_EQUAL(scan_error(program).empty() ? program : "", "");
  CAF_CHECK(scan_error("a[{{a}}]=x").find("array subscript") != std::string::npos);
  CAF_CHECK(scan_error("[[ {{a}} -eq 1 ]]").find("inside [[ ]]") != std::string::npos);
  CAF_CHECK(scan_error("echo $[ {{a}} ]").find("$[ ]") != std::string::npos);
  // Where bash does not: a test's strings, a glob-free bracket in quotes, after [[ ]].
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("[ \"{{a}}\" = x ] && echo \"[{{b}}]\"; [[ -n x ]] && echo {{c}}; x=[{{d}}]"),
                  (P{{"a", true}, {"b", true}, {"c", false}, {"d", false}}));
}

CAF_TEST(a placeholder or a variable after a redirection of stdout with an ampersand is refused) {
  // `>& WORD` with WORD no fd number is `&> WORD`, and bash expands WORD a second
  // time: a value "x$(touch pwned)" after `>&` ran (a review did so through jp-actors).
  for (auto program : {"make >& {{a}}", "make >&{{a}}", "make 1>& {{a}}", "make >&\"{{a}}\"",
                       "v={{a}}; make >& \"$v\"", "v={{a}}; make 1>&$v"})
    CAF_CHECK_EQUAL(scan_error(program).find("after `>&`") != std::string::npos ? "" : program, "");
  // An fd or a file written out stays; so do `&>`, `> FILE 2>&1` and other fds' `>&`.
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("make >&2 {{a}}; make >& out.log {{b}}; make &> {{c}}; make > {{d}} 2>&1"),
                  (P{{"a", false}, {"b", false}, {"c", false}, {"d", false}}));
  CAF_CHECK_EQUAL(placeholders("echo x 2>&{{a}} keep"), (P{{"a", false}}));
}

CAF_TEST(an array element assigned before a command is an assignment and the command the word after it) {
  // a[0]=/x was taken for a program's path and what came after for its arguments;
  // bash refuses the assignment and runs the next word: eval ran the value.
  for (auto program : {"a[0]=/ eval {{a}}", "a[1]+=/x eval {{a}}", "a[0]=/ read {{a}} <<< hi"})
    CAF_CHECK_EQUAL(scan_error(program).empty() ? program : "", "");
}

CAF_TEST(a placeholder in a word bash may read as an array element is refused) {
  // unset, printf -v, read, test -v and declare evaluate the subscript of the name they
  // are given, quoted or not, as does a compound assignment: a value such as
  // x[$(id)] can run through each of these.
  for (auto program : {"a=([{{a}}]=v)", "a+=( [{{a}}]=v )", "a=(1 2); unset \"a[{{a}}]\"",
                       "printf -v \"a[{{a}}]\" x", "read \"a[{{a}}]\" <<< x", "test -v \"a[{{a}}]\"",
                       "declare -a \"a=([{{a}}]=1)\"", "declare -a a=\"( [{{a}}]=1)\"",
                       "x=\"a[{{a}}]\"; echo \"${!x}\"", "unset a'['{{a}}']'", "unset a\\[{{a}}\\]",
                       "unset \"${n}[{{a}}]\"", "unset \"$(echo a)[{{a}}]\"", "echo \"{{b}}[{{a}}]\""})
    CAF_CHECK_EQUAL(scan_error(program).find("a word of its own") == std::string::npos ? program : "", "");
  // A "[" at a word's start, after `=` or after a blank names no element; nor do a
  // compound assignment's elements without one.
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("echo \"[{{a}}] level [{{b}}]\" [{{c}}] x=[{{d}}]; a=( {{e}} \"{{f}}\" [0]=x )"),
                  (P{{"a", true}, {"b", true}, {"c", false}, {"d", false}, {"e", false}, {"f", true}}));
}

CAF_TEST(a placeholder bash may take as a variable s name or as code is refused) {
  // read, printf -v, test -v, declare and the like take a name and evaluate its
  // subscript: a value such as a[$(id)] ran through each of these in reviews. So may
  // a placeholder after another (printf {{fmt}} {{x}} with "-v" as the first), and
  // one given to a builtin that is not known to take values alone.
  for (auto program : {"[ -v {{a}} ]", "test -v \"{{a}}\"", "printf -v {{a}} %s hi", "printf -v\"{{a}}\" x",
                       "echo x | { read -r {{a}}; }", "read -p {{a}} x", "mapfile -t {{a}} < f", "unset {{a}}",
                       "unset -v \"{{a}}\"", "declare {{a}}", "declare -i x={{a}}", "local -n r={{a}}",
                       "declare -a X={{a}}", "export {{a}}", "export {{a}} X={{b}}", "getopts ab {{a}}", "let {{a}}",
                       "eval \"{{a}}\"", "trap {{a}} EXIT", "printf {{a}} {{b}}", "[ {{a}} {{b}} ]",
                       "test {{a}} \"{{b}}\"", "command read {{a}}", "X=1 read {{a}}", "if read {{a}}; then :; fi",
                       "echo \"$(read {{a}})\"", "echo `unset {{a}}`", "wait -p {{a}}", "x=1; ! read {{a}}",
                       "cat f | readarray {{a}}",
                       // Where the command was found wrongly: after a case pattern, an fd's
                       // redirection, >|, a process substitution, coproc, builtin --.
                       "case x in x) read {{a}};; esac", "2>/dev/null read {{a}}", "for x do eval {{a}}; done",
                       "select x do eval {{a}}; done <<< 1", "2>/dev/null printf -v {{a}} x",
                       "3>&- [ -v {{a}} ]", "{fd}>/dev/null read {{a}}", "read >|/dev/null {{a}}",
                       "printf -v >|/dev/null {{a}} x", "[ -e <(:) -a -v {{a}} ]", "builtin -- read {{a}}", "read &>/dev/null {{a}}",
                       "source {{a}}", ". {{a}}", "enable -f {{a}} x", "hash -p {{a}} ls",
                       "compgen -W {{a}}",
                       // -vNAME or -pNAME as a value where an option may be.
                       "printf {{a}} x", "printf {{a}} %s x", "sleep 0.1 & wait -n {{a}}", "wait {{a}} $!",
                       // A word that expands may be -v; mapfile -C runs a callback.
                       "op={{b}}; [ $op {{a}} ]", "op=-v; [ \"$op\" {{a}} ]", "[ {,-v} {{a}} ]",
                       "printf {,-v} {{a}} x", "f=-v; printf $f {{a}} x", "mapfile -t -C unset -c 1 b <<< {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("takes a variable's name or code") == std::string::npos ? program : "",
                    "");
  // A command whose name is not written out, or that is the placeholder.
  for (auto program : {"$'read' {{a}}", "$\"read\" {{a}}", "{read,} {{a}}", "${x:-read} {{a}}", "r=read; $r {{a}}",
                       "\"read\" {{a}}", "\\read {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("whose name is not written out") == std::string::npos ? program : "", "");
  for (auto program : {"{{a}} {{b}}", "command {{a}} {{b}}", "exec {{a}}", "X=1 {{a}}", "command x={{a}}",
                       "exec x={{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("as a command's name") == std::string::npos ? program : "", "");
  // Assigned where bash expands it, or where the template gives variables attributes
  // (an integer's, a name reference's value is evaluated; declare reads an array's
  // as a compound assignment): anywhere, as a loop may come back.
  // bash's own integers (a "seed" template), arrays, a for loop's or read's variable.
  for (auto program : {"PS4={{a}}; set -x; ls", "export BASH_ENV={{a}}; bash b.sh", "PROMPT_COMMAND={{a}}",
                       "RANDOM={{a}}; echo $RANDOM", "export OPTIND={{a}}", "read -r SRANDOM <<< {{a}}",
                       "for HISTCMD in {{a}}; do :; done", "declare DIRSTACK={{a}}", "declare BASH_ALIASES={{a}}",
                       "for PS4 in {{a}}; do set -x; :; done", "read -r PS4 <<< {{a}}; set -x; :"})
    CAF_CHECK_EQUAL(scan_error(program).find("bash expands, runs or evaluates") == std::string::npos ? program : "",
                    "");
  // Where the scan's model of bash ends: coproc (a named one's body), aliases, set -k,
  // extglob.
  for (auto program : {"coproc printf -v {{a}} x", "coproc { read {{a}}; }", "coproc X { eval {{a}}; }; wait",
                       "coproc X while eval {{a}}; do break; done", "alias x={{a}}",
                       "shopt -s expand_aliases\nalias r=read\nr {{a}} <<< x", "set -o posix\nalias r=read\nr {{a}}",
                       "set -kx; echo PS4={{a}}", "shopt -s extglob; eval !(zz) x {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("reads what follows those otherwise") == std::string::npos ? program : "",
                    "");
  // A variable made an integer or a name reference anywhere: a value may reach it
  // through a substitution, a pipe or a file, so no placeholder anywhere.
  for (auto program : {"declare -i n; n={{a}}", "n+={{a}}; declare -i n", "declare -i n; export n={{a}}",
                       "declare -n r; r={{a}}", "declare -ai a; a=( {{a}} )", "while :; do v={{a}}; local -i v; done",
                       "declare -i n; read -r n <<< {{a}}", "declare -i n; for n in {{a}}; do :; done",
                       "declare -i n; select n in {{a}}; do break; done <<< 1",
                       "declare -n r; for r in {{a}}; do echo \"$r\"; done",
                       "declare -xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxi n; n={{a}}",
                       "o=-i; declare $o n; n={{a}}", "declare -i n; n=$(echo {{a}})",
                       "declare -i n; n=\"$(cat <<< {{a}})\"",
                       "shopt -s lastpipe; declare -i n; echo {{a}} | read n", "d=declare; $d -i n; n={{a}}",
                       "echo {{a}} | read PS4"})
    CAF_CHECK_EQUAL(scan_error(program).find("makes a variable an integer") == std::string::npos ? program : "", "");
  for (auto program : {"declare -i n=$(echo {{a}})", "declare -i n; read n < <(echo {{a}})",
                       "for RANDOM in $(echo {{a}}); do :; done"}) // refused as the command's word
    CAF_CHECK_EQUAL(scan_error(program).empty() ? program : "", "");
  // An assigned value where the template evaluates arithmetic (bash evaluates the
  // variable's value there), or makes arrays (declare reads the value as a compound
  // assignment's).
  for (auto program : {"X=(a); declare X={{a}}", "declare -a X=(); declare X={{a}}", "x[0]=1; declare x={{a}}",
                       "n={{a}}; (( n > 5 ))", "n={{a}}; echo $((n+1))", "n={{a}}; [[ $n -gt 3 ]]",
                       "n={{a}}; for ((i=0;i<n;i++)); do :; done", "n={{a}}; echo \"${s:n}\"",
                       "n={{a}}; echo \"${a[n]}\"", "x={{a}}; echo \"${!x}\"", "n={{a}}; let n+1",
                       "for n in {{a}}; do echo $((n)); done", "x={{a}}; echo \"${x@P}\""})
    CAF_CHECK_EQUAL(scan_error(program).find("arithmetic") == std::string::npos ? program : "", "");
  // A value reaching such a variable otherwise than by an assignment of its own: a
  // here-string, a pipe, a substitution, a file; a name or code from an expansion.
  for (auto program : {"while read n; do echo $((n+1)); done <<< {{a}}", "echo {{a}} | while read n; do echo $((n+1)); done",
                       "n=$(echo {{a}}); echo $((n+1))", "x=$(echo {{a}}); [[ $x -gt 3 ]] && echo big",
                       "exec 3<<<{{a}}; read -u 3 n; echo $((n))", "for n in $(echo {{a}}); do echo $((n)); done",
                       "read x <<< {{a}}; echo \"${x@P}\"", "echo {{a}} | mapfile -C eval -c1 arr",
                       "printf -v PS4 %s {{a}}; set -x; true", "printf -v PATH %s {{a}}; ls",
                       "x=$(echo {{a}}); eval $x", "x=$(echo {{a}}); export $x; set -x; :",
                       // A fifth review: ${n} and "$n" inside arithmetic, an unquoted
                       // expansion test splits into -v NAME, a quoted 'a[$i]' given to a
                       // name-taking builtin, (pattern) case arms, [[ -v $x ]], a=([$i]=).
                       "n={{a}}; echo $(( ${n} * 2 ))", "n={{a}}; (( ${n} > 5 )) && echo big",
                       "n={{a}}; echo $(( \"$n\" + 1 ))", "i={{a}}; echo \"${a[${i}]}\"", "i={{a}}; a[${i}]=q",
                       "len={{a}}; echo \"${s:0:${len}}\"", "x={{a}}; y=$x; echo $(( ${y} ))",
                       "v={{a}}; if [ $v = yes ]; then :; fi", "v={{a}}; [ $v ] && :", "v={{a}}; test $v",
                       "i={{a}}; a=(x y); unset 'a[$i]'", "i={{a}}; printf -v 'a[$i]' %s x",
                       "i={{a}}; read -r 'a[$i]' <<< x", "i={{a}}; [ -v 'a[$i]' ]",
                       "case y in (y) declare -i n;; esac; n={{a}}", "n={{a}}; case x in (x) let n++ ;; esac",
                       "name={{a}}; [[ -v $name ]]", "i={{a}}; a=([$i]=q)",
                       // A sixth: [ -v "$name" ] quoted, compgen -W "$x", wait -p "$x".
                       "name={{a}}; if [ -v \"$name\" ]; then printenv \"$name\"; fi",
                       "for v in {{a}}; do [ -v \"$v\" ] || echo missing; done", "x={{a}}; [ ! -v \"cfg_$x\" ]",
                       "words={{a}}; compgen -W \"$words\" -- a", "x={{a}}; sleep 0 & wait -n -p \"$x\""})
    CAF_CHECK_EQUAL(scan_error(program).find("a value may reach it") == std::string::npos ? program : "", "");
  // A substitution's output is a word of the command around it.
  // (What a command reads from one, `read n < <(...)`, is a value: not a word.)
  for (auto program : {"export $(echo {{a}}); set -x; :", "read $(echo {{a}}) <<< 5", ". <(echo {{a}})",
                       "source <(printf %s {{a}})", "eval $(echo {{a}})"})
    CAF_CHECK_EQUAL(scan_error(program).find("takes a variable's name or code") == std::string::npos ? program : "",
                    "");
  // Through a substitution assigned to what bash evaluates.
  for (auto program : {"RANDOM=$(echo {{a}})", "OPTIND=$(echo {{a}}); getopts a x", "PS4=$(echo {{a}}); set -x; echo",
                       "PATH={{a}} make", "HOME={{a}}; ~/bin/tool", "export LD_PRELOAD=`echo {{a}}`"})
    CAF_CHECK_EQUAL(scan_error(program).find("find or run code by them") == std::string::npos ? program : "", "");
  // A placeholder is "${N}": a function's body has its own, set and shift change them.
  for (auto program : {"f() { echo \"{{a}}\"; }", "function f { echo {{a}}; }", "f( ) { echo {{a}}; }",
                       "f ( ) { echo {{a}}; }", "f (\n) { echo {{a}}; }", "f() ( echo x ); echo {{a}}",
                       "f() { echo x; } > {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("function") == std::string::npos ? program : "", "");
  for (auto program : {"set -- x; echo {{a}}", "shift; echo {{a}}", "set x y; echo {{a}}", "set -e -- {{a}}",
                       "case x in x) set -- y;; esac; echo {{a}}",
                       "2>/dev/null set -- y; echo {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program).find("positional parameter") == std::string::npos ? program : "", "");
  CAF_CHECK(scan_error("read {{a}}").starts_with("command.program: a placeholder as an argument of a bash builtin"));
  CAF_CHECK(!scan_error("set {{b}}; echo {{a}}").empty());
  // A value, an operand, a file, an argument of a program are fine: after a function's
  // body too, and a set or shift inside it.
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("export X={{a}}; declare -r Y=\"{{b}}\"; [ -n {{c}} ] && [ {{c}} = {{d}} ]; "
                               "read -r line < {{e}}; while read -r l; do :; done < \"{{f}}\"; "
                               "printf '%s' {{g}} {{h}}; echo read {{i}} shift {{j}}"),
                  (P{{"a", false}, {"b", true}, {"c", false}, {"c", false}, {"d", false}, {"e", false},
                     {"f", true}, {"g", false}, {"h", false}, {"i", false}, {"j", false}}));
  CAF_CHECK_EQUAL(placeholders("set -euo pipefail; set -o errexit +o nounset; grep {{a}} f 2>&1 | sort; "
                               "test -f {{b}}; x=$(printf '%s' {{c}}); cleanup() { set -- x; shift; rm -f t; }; "
                               "trap cleanup EXIT; grep -e {{d}} f >|out; export A={{e}} B={{f}}; export F+={{g}}"),
                  (P{{"a", false}, {"b", false}, {"c", false}, {"d", false}, {"e", false}, {"f", false},
                     {"g", false}}));
  CAF_CHECK_EQUAL(placeholders("diff <(ls) <(ls {{a}}); case {{b}} in x) echo {{c}};; esac; for f in {{d}}; do "
                               "cat \"$f\"; done; arr=( {{e}} \"{{f}}\" ); cd {{g}} && git log --grep={{h}} "
                               "&>/dev/null; kill {{i}}; awk -v x={{j}} 1 f; ~/bin/tool {{k}}; \"$HOME/bin/t\" {{l}}; "
                               "printf -- {{m}} x; command -v {{n}}; export -n FOO; x={{o}}; printf \"%s\\n\" {{p}}; "
                               "export PATH=\"$HOME/bin:$PATH\"; source .venv/bin/activate; pytest {{q}}; "
                               "y={{r}}; echo \"${y}\" \"${#y}\" \"${y:-d}\" \"${y:0:10}\" $((1+2)); args=( {{s}} ); "
                               "cmd \"${args[@]}\"; case {{t}} in a) echo a;; *.py|*) echo o;; esac; "
                               "printf '%s' \"$(cat {{u}})\"; while read -r l; do echo \"$l\"; done < <(grep {{w}} .); "
                               "readarray -t lines < {{x}}; source \"$HOME/.venv/bin/activate\"; [ $# -gt 0 ] && echo {{y}}; "
                               "case {{z}} in (a) echo a;; *) echo b;; esac; export AWS_PROFILE={{A}}; "
                               "readonly R={{B}}; opts=(--region x); aws s3 ls \"${opts[@]}\""),
                  (P{{"a", false}, {"b", false}, {"c", false}, {"d", false}, {"e", false}, {"f", true}, {"g", false},
                     {"h", false}, {"i", false}, {"j", false}, {"k", false}, {"l", false}, {"m", false},
                     {"n", false}, {"o", false}, {"p", false}, {"q", false}, {"r", false}, {"s", false},
                     {"t", false}, {"u", false}, {"w", false}, {"x", false}, {"y", false}, {"z", false},
                     {"A", false}, {"B", false}}));
}

CAF_TEST(what a command reads from a process substitution is a value) {
  // mapfile -t a < <(git ls-files {{a}}): the output is read, not a name (refused
  // once as an argument of mapfile).
  for (auto program : {"mapfile -t files < <(git ls-files {{a}})", "read -r first < <(git log --format=%s {{a}})",
                       "readarray -t l < <(grep -- {{a}} f); printf '%s\\n' \"${l[@]}\""})
    CAF_CHECK_EQUAL(scan_error(program), "");
  // The command's own arguments are still its: names, and what evaluates them.
  CAF_CHECK(!scan_error("mapfile -t files < <(git ls-files) {{a}}").empty());
  CAF_CHECK(!scan_error("source <(echo {{a}})").empty());
  CAF_CHECK(!scan_error("mapfile -C eval -c 1 arr < <(echo {{a}})").empty());
  CAF_CHECK(!scan_error("read n < <(echo {{a}}); echo $((n))").empty());
  CAF_CHECK(!scan_error("read PS4 < <(echo {{a}}); set -x; :").empty());
  // Only read's and mapfile's input: other commands that read one run it, or take
  // names; and a function's body has its own positional parameters.
  CAF_CHECK(!scan_error(". /dev/stdin < <(printf %s {{a}})").empty());
  CAF_CHECK(!scan_error("source /dev/stdin < <(printf %s {{a}})").empty());
  CAF_CHECK(!scan_error("read -r GIT_SSH_COMMAND < <(printf %s {{a}}); export GIT_SSH_COMMAND; git fetch").empty());
  CAF_CHECK(!scan_error("read -r PATH < <(printf %s {{a}})").empty());
  CAF_CHECK(!scan_error("f() { read -r x < <(printf %s {{a}}); }; f").empty());
  CAF_CHECK(!scan_error("f() { cat < <(printf %s {{a}}); }; f").empty());
}

CAF_TEST(a refusal of every placeholder names what in the template set it off) {
  CAF_CHECK(scan_error("(( $# )); make {{a}}").ends_with("; here: a variable in an arithmetic expression or a subscript"));
  CAF_CHECK(scan_error("let n=1; make {{a}}").ends_with("; here: `let`"));
  CAF_CHECK(scan_error("x={{a}}; eval \"$x\"").ends_with("; here: `eval $x`")); // its quotes left out
  CAF_CHECK(scan_error("declare -i n; make {{a}}").ends_with("; here: `declare -i`"));
  CAF_CHECK(scan_error("x={{a}}; declare -a y=\"$x\"").ends_with("; here: `declare y=$x`"));
}

CAF_TEST(a value declare may read as a compound assignment is refused) {
  // declare y="$x" where y is an array: ([$(id)]=1) runs, quoted or not.
  for (auto program : {"x={{a}}; declare -a y=\"$x\"", "x={{a}}; y=(); declare y=\"$x\"",
                       "x={{a}}; readonly -a y=\"$x\"", "x=$(printf %s {{a}}); declare -a y=\"$x\"",
                       "read -r x < <(printf %s {{a}}); declare -a y=\"$x\"", "x={{a}}; local -A y=\"$x\""})
    CAF_CHECK_EQUAL(scan_error(program).find("declare y=\"$x\" where the template makes arrays") ==
                        std::string::npos
                      ? program
                      : "",
                    "");
  CAF_CHECK_EQUAL(scan_error("x={{a}}; declare y=\"$x\""), ""); // no array: a value
  // Arrays the template makes otherwise: export -a, bash's own, a quoted subscript.
  for (auto program : {"x={{a}}; export -a y=\"$x\"", "y={{a}}; declare DIRSTACK=\"$y\"",
                       "printf -v 'a[0]' %s x; y={{a}}; declare a=\"$y\"", "read -r 'a[0]' <<< q; y={{a}}; declare a=\"$y\""})
    CAF_CHECK_EQUAL(scan_error(program).find("; here: `") == std::string::npos ? program : "", "");
}

CAF_TEST(names joined to options and input read in by a loop are checked too) {
  // A review ran code through each (bash 5.2).
  for (auto program : {"printf -vPS4 %s {{a}}; set -x; :", "read -raPS4 <<< {{a}}; set -x; :",
                       "read -raPS4 < <(echo {{a}}); set -x; :", "while read -r PATH; do ls; done < <(echo {{a}})",
                       "while read -r LD_PRELOAD; do :; done < <(echo {{a}})", "{ . /dev/stdin; } < <(echo {{a}})",
                       "while . /dev/stdin; do break; done < <(echo {{a}})", "echo {{a}} | { read -r PATH; ls; }"})
    CAF_CHECK_EQUAL(scan_error(program).find("; here: `") == std::string::npos ? program : "", "");
  // As written usually, they stay allowed.
  for (auto program : {"read -ra parts <<< {{a}}", "printf -v out %s {{a}}",
                       "while read -r f; do echo \"$f\"; done < <(git ls-files {{a}})"})
    CAF_CHECK_EQUAL(scan_error(program), "");
}

CAF_TEST(a value bash evaluates given through a variable or env and test given every value are refused) {
  // A review ran code through each (bash 5.2): the placeholder's value one hop away.
  for (auto program : {"p={{a}}; PS4=\"$p\"; set -x; true", "n={{a}}; OPTIND=$n; echo ok",
                       "x={{a}}; OPTIND=${x}", "x={{a}}; RANDOM=$x", "x={{a}}; export HISTCMD=$x",
                       "x=$(echo {{a}}); OPTIND=$x", "f={{a}}; BASH_ENV=$f bash -c 'echo child'",
                       "env BASH_ENV={{a}} bash -c true", "/usr/bin/env LD_PRELOAD={{a}} true",
                       "timeout 5 env BASH_ENV={{a}} bash -c :", "nohup env BASH_ENV={{a}} bash -c :",
                       "echo {{a}} {{b}}; [ \"$@\" ] && echo set", "echo {{a}}; test \"$@\"",
                       "echo {{a}}; [ \"${@}\" ]", "echo {{a}}; test \"${@:1}\"",
                       "echo {{a}}; [ \"${x:-$@}\" ]", "echo {{a}}; [ \"${1+\"$@\"}\" ]",
                       "echo {{a}}; test \"${x-${@}}\""})
    CAF_CHECK_EQUAL(scan_error(program).find("; here: ") == std::string::npos ? program : "", "");
  CAF_CHECK(scan_error("x={{a}}; OPTIND=$x").ends_with("; here: OPTIND given a value that is not written out, which "
                                                      "bash evaluates"));
  // As written usually, they stay allowed.
  for (auto program : {"d={{a}}; PATH=\"$HOME/bin:$PATH\"; ls \"$d\"", "echo OPTIND={{a}}",
                       "env FOO={{a}} printenv FOO", "OPTIND=1; echo {{a}}", "echo SECONDS=$SECONDS {{a}}",
                       "docker run -e PS1=\"$p\" img {{a}}", "[ -n \"$1\" ] && echo {{a}}", "[ -n \"${1}\" ] && echo {{a}}"})
    CAF_CHECK_EQUAL(scan_error(program), "");
}

CAF_TEST(placeholders after text the scan cannot follow are refused) {
  // A case pattern's ")" inside $(...) and a here-document's body (here with one `"`)
  // would mislead the scan about what comes after: a review ran code through both.
  CAF_CHECK(scan_error("echo \"$(case x in a) :;; esac; (( {{n}} > 3 )))\"").find("after `case` inside $(...)")
            != std::string::npos);
  CAF_CHECK(scan_error("cat <<EOF\n27\" monitor\nEOF\n(( {{n}} ))").find("after a here-document")
            != std::string::npos);
  CAF_CHECK(scan_error("cat <\\\n<EOF\nx\nEOF\necho {{a}}").find("after a here-document") != std::string::npos);
  CAF_CHECK(scan_error("cat <<{{a}}").find("after a here-document") != std::string::npos);
  // A quoted here-document's body is literal: followed up to its delimiter's line; a
  // placeholder inside it would be its text. An unquoted one's expands: not followed.
  CAF_CHECK(scan_error("cat <<'EOF'\nx {{a}}\nEOF").find("inside a quoted here-document") != std::string::npos);
  CAF_CHECK(scan_error("cat <<-\"END\"\n\tEND2\n\tEND\necho {{a}}").empty());
  CAF_CHECK(scan_error("cat <<\\EOF\nit's $(x)\nEOF\nls {{a}}").empty());
  CAF_CHECK(scan_error("cat <<'EOF'\nEOF \nls {{a}}").find("inside a quoted here-document") != std::string::npos);
  CAF_CHECK(scan_error("cat <<'A' <<'B'\nx\nA\ny\nB\nls {{a}}").find("after a here-document") != std::string::npos);
  CAF_CHECK(scan_error("echo $(cat <<'A'\nx\nA\n) {{a}}").find("after a here-document") != std::string::npos);
  // As an argument bash ends name[ and [[ at a blank: a ")" or "#" there may end a
  // $(...) or start a comment the scan would miss.
  CAF_CHECK(!scan_error("echo \"$(echo a[ )\" \"]\" ; (( {{n}} )) #\"").empty());
  CAF_CHECK(!scan_error("echo \"$(echo [[ )\" \"]]\" ; (( {{n}} )) #\"").empty());
  CAF_CHECK(!scan_error("a[1 #]=x echo \"\n] \"; (( {{n}} ))").empty());
  // After a syntax error inside name=( ... ) bash drops the rest of the line, quotes too.
  CAF_CHECK(scan_error("x=( a; b )\"\n(( {{n}} ))").find("inside name=( ... )") != std::string::npos);
  CAF_CHECK(scan_error("declare -a x=(@()\"\n(( {{n}} ))").find("inside name=( ... )") != std::string::npos);
  // Placeholders before them, here-strings and case outside $(...) are fine.
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("echo {{a}}; cat <<EOF\nx\nEOF"), (P{{"a", false}}));
  CAF_CHECK_EQUAL(placeholders("cat <<< \"{{a}}\"; case {{b}} in x) echo \"{{c}}\";; esac; echo $((1 << 2)) {{d}}"),
                  (P{{"a", true}, {"b", false}, {"c", true}, {"d", false}}));
}

CAF_TEST(line continuations comments and backticks are read as bash reads them) {
  // Each of these put a value where bash evaluates it, the scan thinking otherwise.
  for (auto program : {"(\\\n( {{n}} ))", "echo \"$\\\n{a[{{n}}]}\"", "echo \"$\\\n(( {{n}} ))\"",
                       "a\\\n[{{n}}]=1",
                       "echo ${x:- #} ; (( {{n}} ))", "echo \"${x:- #}\"; (( {{n}} ))",
                       "(( 1 # )); echo \"\n))\"; (( {{n}} ))", "echo $(echo)# ; (( {{n}} ))",
                       "echo $((1))# ; (( {{n}} ))", "a=(1)# ; (( {{n}} ))",
                       "echo `echo # ` ; (( {{n}} ))", "echo `echo \"` `(( {{n}} ))`",
                       "echo `echo \"\\$(( {{n}} ))\"`", "echo \"`\\\" \"; (( {{n}} )) #\\\"`\""})
    CAF_CHECK_EQUAL(scan_error(program).empty() ? program : "", "");
  CAF_CHECK(scan_error("echo `echo \"\\$(( {{n}} ))\"`").find("use $(...) instead") != std::string::npos);
  // Comments after a (( )) command or a subshell, and backticks without backslashes.
  using P = std::vector<std::pair<std::string, bool>>;
  CAF_CHECK_EQUAL(placeholders("(( 1 ))# \"{{a}}\n(echo)# '{{b}}\necho `echo {{c}}` \"{{d}}\" \\\n {{e}}"),
                  (P{{"a", false}, {"b", false}, {"c", false}, {"d", true}, {"e", false}}));
}

CAF_TEST(double braces not opening with tool are shell text) {
  // A program's own template (docker --format, gh --template), quoted as bash wants it.
  temp_dir dir;
  auto tool = shell_tool("printf '%s|' '{{.Names}}' \"{{ json . }}\" {{.Names}} \"{{tool.arguments.x}}\"",
                         {"'{{range .}}'"});
  CAF_CHECK_EQUAL(run_with(tool, "v", dir), "{{.Names}}|{{ json . }}|{{.Names}}|v|{{range .}}|");
  // Read as shell text, they leave the quoting of the placeholders after them as it is.
  auto quoting = [](std::string program) {
    auto scan = scan_shell_template(program, {});
    std::vector<std::string> out;
    if (!scan)
      return std::vector<std::string>{scan.error()};
    for (auto& s : *scan)
      if (s.placeholder)
        out.push_back(s.double_quoted ? "quoted" : "unquoted");
    return out;
  };
  using S = std::vector<std::string>;
  CAF_CHECK_EQUAL(quoting("echo '{{.a}}' {{tool.arguments.a}} \"{{.b}}{{tool.arguments.b}}\""),
                  (S{"unquoted", "quoted"}));
  CAF_CHECK_EQUAL(quoting("echo '{{.a}} {{ tool.arguments.a }}'"),
                  (S{"command.program: a placeholder inside single quotes cannot be passed safely; write it "
                     "outside quotes or in double quotes (in `{{ tool.arguments.a }}`)"}));
  CAF_CHECK(quoting("echo $(( {{.a}} + {{tool.arguments.a}} ))").front().find("inside (( ))") != std::string::npos);
}

CAF_TEST(a single-quoted placeholder is refused when the config loads naming the key) {
  auto c = apply_config_text(default_config(),
                             "[conversation.tools.T]\n"
                             "command = { program = \"printf '%s|' '{{tool.arguments.x}}'\", shell = true }\n",
                             "c.toml");
  CAF_REQUIRE(!c.ok());
  CAF_CHECK(c.error().starts_with("c.toml: conversation.tools.T.command.program: a placeholder "
                                  "inside single quotes cannot be passed safely; write it outside "
                                  "quotes or in double quotes"));
  // Without shell = true nothing is shell, so quotes are the program's business.
  auto plain = apply_config_text(default_config(),
                                 "[conversation.tools.T]\n"
                                 "command = { program = \"echo\", args = [\"'{{tool.arguments.x}}'\"] }\n"
                                 "parameters.x = { type = \"string\" }\n",
                                 "c.toml");
  CAF_CHECK(plain.ok());
}

CAF_TEST(hostile values run nothing and arrive byte for byte) {
  temp_dir dir;
  auto marker = (dir.path / "p").string();
  std::vector<std::string> values = {
    fmt::format("$(touch {})", marker),
    fmt::format("`touch {}`", marker),
    fmt::format("; touch {}", marker),
    fmt::format("\ntouch {}\n", marker),
    fmt::format("'; touch {}; '", marker),
    fmt::format("\"; touch {}; \"", marker),
    fmt::format("\\\"; touch {} #", marker),
    fmt::format("\" $(touch {}) \"", marker),
    fmt::format("${{IFS}}touch${{IFS}}{}", marker),
    "\\", "\\\\", "'", "\"", "", " ", "*", "-n", "{{tool.arguments.x}}", "${1}", "$0",
  };
  for (auto& c : cases())
    for (auto& v : values) {
      CAF_CHECK_EQUAL(run_with(c.tool, v, dir), c.before + v + c.after);
      CAF_CHECK(empty_dir(dir));
    }
}

CAF_TEST(an absent value joins no text around it and a hostile one next to it runs nothing) {
  // Gone, `({{x}}(` would be `((`: arithmetic, in which bash runs a subscript's $(...).
  temp_dir dir;
  auto marker = (dir.path / "p").string();
  for (auto program : {"({{tool.arguments.x}}(0+{{tool.arguments.y}})); echo done",
                       "[{{tool.arguments.x}}[ {{tool.arguments.y}} -eq 1 ]]; echo done"}) {
    auto args = Json::object().set("y", fmt::format("a[$(touch {})]", marker));
    auto answers = Json::object();
    auto argv = expand_argv(shell_tool(program), TemplateContext{args, answers});
    // A placeholder as a command's name is refused by now; were it not, nothing runs.
    if (!argv.ok()) {
      CAF_CHECK(argv.error().find("as a command's name") != std::string::npos);
      continue;
    }
    run_argv(*argv, dir.path.string());
    CAF_CHECK(empty_dir(dir));
  }
  // A word of its own still goes: no empty argument in its place.
  auto args = Json::object();
  auto answers = Json::object();
  for (auto [tool, said] : {std::pair{shell_tool("printf '<%s>' a {{tool.arguments.x}} b"), "<a><b>"},
                            std::pair{shell_tool("printf", {"'<%s>'", "a", "{{tool.arguments.x}}", "b"}), "<a><b>"},
                            std::pair{shell_tool("printf '<%s>' a --x={{tool.arguments.x}} b"), "<a><--x=><b>"},
                            std::pair{shell_tool("printf '<%s>' a{{tool.arguments.x}}b"), "<ab>"},
                            std::pair{shell_tool("printf '<%s>' {{tool.arguments.x}}"), "<>"},
                            // Beside an operator a word ends too.
                            std::pair{shell_tool("(printf '<%s>' a {{tool.arguments.x}})"), "<a>"},
                            std::pair{shell_tool("printf '<%s>' a {{tool.arguments.x}}; printf '<%s>' b"), "<a><b>"},
                            std::pair{shell_tool("printf '<%s>' a {{tool.arguments.x}}|cat"), "<a>"}}) {
    auto argv = expand_argv(tool, TemplateContext{args, answers});
    CAF_REQUIRE(argv.ok());
    CAF_CHECK_EQUAL(run_argv(*argv, dir.path.string()).out, said);
  }
  // A redirection's target stays an empty word: gone, the next word would be the
  // file written (`sort -u >{{out}} {{file}}` truncating its input).
  dir.write("keep", "kept\n");
  for (auto tool : {shell_tool("echo x >{{tool.arguments.x}} keep"), shell_tool("echo x > {{tool.arguments.x}} keep"),
                    shell_tool("echo x 2>&{{tool.arguments.x}} keep"), shell_tool("cat <<<{{tool.arguments.x}} keep"),
                    // the target an args element of its own
                    shell_tool("echo", {"x", ">", "{{tool.arguments.x}}", "keep"}), shell_tool("echo x >", {"{{tool.arguments.x}}", "keep"})}) {
    auto argv = expand_argv(tool, TemplateContext{args, answers});
    CAF_REQUIRE(argv.ok());
    run_argv(*argv, dir.path.string());
    std::ifstream kept(dir.path / "keep");
    CAF_CHECK_EQUAL(std::string(std::istreambuf_iterator<char>(kept), {}), "kept\n");
  }
}

CAF_TEST(generated hostile values arrive verbatim through real bash) {
  // Deterministic: the same 200 values every run.
  std::mt19937 rng(12345);
  const std::string specials = "$`'\"\\;&|<>()[]{}*?~#!%^=, \t\n-";
  auto value = [&] {
    std::string v;
    auto len = std::uniform_int_distribution<int>(0, 24)(rng);
    for (int i = 0; i < len; ++i) {
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0: // any byte but NUL (refused elsewhere)
          v += static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng));
          break;
        case 1:
          v += "$(touch p)";
          break;
        default:
          v += specials[std::uniform_int_distribution<size_t>(0, specials.size() - 1)(rng)];
      }
    }
    return v;
  };
  temp_dir dir;
  auto all = cases();
  for (int i = 0; i < 200; ++i) {
    auto v = value();
    auto& c = all[static_cast<size_t>(i) % all.size()];
    auto out = run_with(c.tool, v, dir);
    CAF_CHECK_EQUAL(out, c.before + v + c.after);
    if (out != c.before + v + c.after)
      CAF_MESSAGE("value: " << json_quote(v) << " template: " << c.tool.program);
  }
  CAF_CHECK(empty_dir(dir));
}

CAF_TEST(the CLI runs the quoted template of the issue without running the value) {
  temp_dir dir;
  auto marker = (dir.path / "p").string();
  dir.write("c.toml", "[conversation.tools.T]\n"
                      "command = { program = \"printf '%s|' \\\"{{tool.arguments.x}}\\\"\", shell = true }\n"
                      "run = \"unattended\"\n"
                      "[conversation.tools.T.parameters.x]\ntype = \"string\"\n");
  auto r = cli_in(dir.path.string(),
                  fmt::format(R"x(--config {}/c.toml call T '{{"x":"$(touch {})"}}')x", dir.path.string(), marker));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, fmt::format("$(touch {})|\n", marker)); // call ends the content with a newline
  CAF_CHECK(!std::filesystem::exists(marker));

  dir.write("q.toml", "[conversation.tools.T]\n"
                      "command = { program = \"printf '%s|' '{{tool.arguments.x}}'\", shell = true }\n");
  auto refused = cli_in(dir.path.string(), fmt::format("--config {}/q.toml tools", dir.path.string()));
  CAF_CHECK_NOT_EQUAL(refused.status, 0);
  CAF_CHECK(refused.out.find("conversation.tools.T.command.program: a placeholder inside single quotes")
            != std::string::npos);
}

CAF_TEST(the CLI loads and runs a shell template holding a program template) {
  temp_dir dir;
  dir.write("c.toml", "[conversation.tools.T]\n"
                      "command = { program = \"printf '%s|' '{{.Names}}' {{tool.arguments.x}}\", shell = true }\n"
                      "run = \"unattended\"\n"
                      "[conversation.tools.T.parameters.x]\ntype = \"string\"\n");
  auto r = cli_in(dir.path.string(), fmt::format(R"(--config {}/c.toml call T '{{"x":"v"}}')", dir.path.string()));
  CAF_CHECK_EQUAL(r.status, 0);
  CAF_CHECK_EQUAL(r.out, "{{.Names}}|v|\n");
}
