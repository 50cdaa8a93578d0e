// The environment a tool runs with: the runtime's own, minus what would hand a
// model a secret. Provider keys and secret-looking variables (*_API_KEY, *_TOKEN,
// *_SECRET, ...) are left out unless the config passes them by name; a tool's own
// `env` settings are added last.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "secret_value.hpp" // secret_looking_value

namespace jp {

/// Whether a variable's name looks like it holds a secret (case-insensitive):
/// API_KEY, TOKEN, SECRET, PASSWORD, ... alone or as the end of the name
/// (OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY).
bool secret_looking_name(std::string_view name);

/// `path` (a PATH's value) without its empty and relative entries, which name the
/// working directory (the workspace, someone's repository: its `git` would run for
/// `git` with PATH=/usr/bin: or PATH=bin:...); "/bin:/usr/bin" (execvp's default)
/// when none is left.
std::string absolute_search_path(std::string_view path);

/// What a tool gets: each "KEY=VALUE" of `parent` except the names in `drop`,
/// secret-looking names and values, unless named in `pass`, and PATH as
/// absolute_search_path makes it (a shell the tool runs looks its commands up
/// there); then `extra` ("KEY=VALUE") added or overriding.
std::vector<std::string> tool_environment(char** parent, const std::vector<std::string>& extra,
                                          const std::vector<std::string>& pass,
                                          const std::vector<std::string>& drop);

/// One spawn's environment: the runtime's, filtered (shared, kept between spawns),
/// with the tool's own variables over it.
struct SpawnEnvironment {
  std::shared_ptr<const std::vector<std::string>> base;
  std::vector<std::string> extra; // "KEY=VALUE", added or overriding, in order

  /// What the child gets, null-terminated, as tool_environment orders it: pointers
  /// into `base` and `extra`, valid while this lives.
  std::vector<char*> c_strings() const;
  /// The same entries as strings.
  std::vector<std::string> strings() const;
};

/// tool_environment(environ, extra, pass, drop) for a spawn on this thread. The
/// filtered part of the runtime's environment is kept from the last spawn while
/// `environ` holds the same entries (each compared: a setenv or putenv since is
/// seen) and `pass` and `drop` are the same, so that a spawn neither filters nor
/// copies every variable again (bench/README.md, "Issue 18 on this VM (2026-11-28,
/// session 33)").
SpawnEnvironment spawn_environment(std::vector<std::string> extra, const std::vector<std::string>& pass,
                                   const std::vector<std::string>& drop);

} // namespace jp
