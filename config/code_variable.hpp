// Environment variables whose value chooses code a program runs: a library the
// loader loads, a shell's startup file, an interpreter's options or module path, a
// command git or a pager runs, where programs are looked up. A tool whose env (or
// whose shell template) puts a call's argument there lets the model run its own code
// however the command line is quoted.
#pragma once

#include <string_view>

namespace jp {

/// Who runs code chosen by `name`'s value ("the dynamic loader", "git", "Python");
/// "" when no program known here does. A list of the well-known, not a proof.
std::string_view code_variable_reader(std::string_view name);

} // namespace jp
