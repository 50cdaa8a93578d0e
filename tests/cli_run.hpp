// Running the jp-actors binary in a test, as a user would, and reading its JSONL.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <stdlib.h>
#include <map>
#include <string>
#include <tuple>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <caf/test/unit_test.hpp>

#include "messages/json.hpp"

namespace jp::testing {

struct Run {
  int status = -1;
  std::string out;         // stdout, then stderr
  std::string stdout_text; // stdout alone: what --json promises is JSON lines
};

/// Fails the test unless `r` exited 0, printing what it wrote (CAF 0.17's
/// CAF_REQUIRE_EQUAL does not print the values it compared).
#define JP_REQUIRE_OK(r)                                                                           \
  do {                                                                                             \
    const auto& jp_run_ = (r); /* once: `r` may be the run itself */                              \
    if (jp_run_.status != 0)                                                                       \
      CAF_FAIL("exited " << jp_run_.status << ":\n" << jp_run_.out);                              \
  } while (false)

/// Where runs in workspace `ws` keep the user's state (crash records): one place per
/// workspace, so a test sees only the records of its own runs.
inline std::string state_home_of(const std::string& ws) {
  return ws + "/.state";
}

/// Runs the shell command `command`, stdin from /dev/null, and collects stdout and
/// stderr (apart: a sanitizer's or a library's note on stderr is no JSON event).
inline Run run_command(const std::string& command) {
  char err_path[] = "/tmp/jp-actors-stderr-XXXXXX";
  int err_fd = ::mkstemp(err_path);
  if (err_fd >= 0)
    ::close(err_fd);
  auto cmd = fmt::format("{{ {} ; }} 2>'{}' </dev/null", command, err_path);
  Run r;
  if (auto* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 65536> buf{};
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
      r.stdout_text.append(buf.data(), n);
    auto st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  std::ifstream err(err_path, std::ios::binary);
  r.out = r.stdout_text + std::string((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  ::unlink(err_path);
  return r;
}

// Runs the CLI (through sh, for the redirection only) in workspace `ws`.
inline Run cli_in(const std::string& ws, const std::string& args) {
  return run_command(fmt::format("cd '{}' && XDG_STATE_HOME='{}' '{}' --workspace '{}' {}", JP_SOURCE_DIR,
                                 state_home_of(ws), JP_CLI_BINARY, ws, args));
}

// Runs the CLI in a fresh workspace, removed afterwards.
inline Run cli(const std::string& args) {
  char tmpl[] = "/tmp/jp-actors-cli-XXXXXX";
  std::string ws = ::mkdtemp(tmpl);
  auto r = cli_in(ws, args);
  std::error_code ec;
  std::filesystem::remove_all(ws, ec);
  return r;
}

inline std::vector<Json> events(const std::string& out) {
  std::vector<Json> evs;
  size_t pos = 0;
  while (pos < out.size()) {
    auto end = out.find('\n', pos);
    auto line = out.substr(pos, end - pos);
    pos = end == std::string::npos ? out.size() : end + 1;
    if (line.empty())
      continue;
    auto j = Json::parse(line);
    if (!j.ok())
      CAF_FAIL("a line that is not JSON: " << line << "\nin:\n" << out);
    evs.push_back(std::move(*j));
  }
  return evs;
}

/// The tool_result events of a `--json` run by (agent path, step, index).
using ResultsByCall = std::map<std::tuple<std::string, int64_t, int64_t>, Json>;
inline ResultsByCall results_of(const Run& r) {
  ResultsByCall out;
  for (auto& e : events(r.stdout_text))
    if (e.find("event")->as_string() == "tool_result")
      out[{e.find("agent")->as_string(), e.find("step")->as_int(), e.find("index")->as_int()}] = e;
  return out;
}

/// What call (agent, step, index) answered ("(no result)" if it did not).
inline std::string content(const ResultsByCall& res, const std::string& agent, int64_t step, int64_t index) {
  auto it = res.find({agent, step, index});
  return it == res.end() ? std::string("(no result)") : it->second.find("content")->as_string();
}

/// Whether call (agent, step, index) succeeded.
inline bool ok(const ResultsByCall& res, const std::string& agent, int64_t step, int64_t index) {
  auto it = res.find({agent, step, index});
  return it != res.end() && it->second.find("ok")->as_bool();
}

} // namespace jp::testing
