// A small MCP client for the tests: `jp-actors mcp` (or any stdio MCP server) as a
// child in its own session, JSON-RPC 2.0 one message per line over its stdin and
// stdout, stderr to a file. Its whole group is killed by the end of the test.
#pragma once

#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "child_wait.hpp"
#include "marked_processes.hpp"
#include "messages/json.hpp"

namespace jp::testing {

struct McpClient {
  pid_t pid = -1;
  int to = -1, from = -1;
  std::string buffered;
  std::vector<Json> seen; // every message read, in order
  int64_t next_id = 0;

  McpClient(const std::vector<std::string>& argv, const std::string& state_home, const std::string& err_path) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      return;
    pid = ::fork();
    if (pid == 0) {
      ::setsid();
      int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err, 2);
      exec_child(argv, state_home);
    }
    own_child(-pid, SIGTERM); // a jp-actors MCP server: it ends its tools
    ::close(in[0]);
    ::close(out[1]);
    to = in[1];
    from = out[0];
  }
  ~McpClient() {
    close_input();
    if (from >= 0)
      ::close(from);
    end_cli(pid);
  }

  void send(const Json& message) { send_line(message.dump()); }
  /// A line as it is (what Json would write otherwise, such as 1e2).
  void send_line(const std::string& text) {
    auto line = text + "\n";
    if (to >= 0 && ::write(to, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      close_input();
  }
  /// A request; its id.
  int64_t request(const std::string& method, Json params = Json::object()) {
    auto id = ++next_id;
    send(Json::object().set("jsonrpc", "2.0").set("id", id).set("method", method).set("params", std::move(params)));
    return id;
  }
  void notify(const std::string& method, Json params = Json::object()) {
    send(Json::object().set("jsonrpc", "2.0").set("method", method).set("params", std::move(params)));
  }
  /// Ends the session: the server sees its stdin end.
  void close_input() {
    if (to >= 0)
      ::close(to);
    to = -1;
  }
  /// Reads no more: the server's stdout has no reader.
  void close_output() {
    if (from >= 0)
      ::close(from);
    from = -1;
  }

  /// The next line of its output; "" at its end, or after a minute with none (bounded
  /// only against a hang).
  std::string next_line() {
    for (;;) {
      if (auto nl = buffered.find('\n'); nl != std::string::npos) {
        auto line = buffered.substr(0, nl);
        buffered.erase(0, nl + 1);
        return line;
      }
      pollfd p{from, POLLIN, 0};
      if (::poll(&p, 1, 60000) <= 0)
        return "";
      char buf[65536];
      auto n = ::read(from, buf, sizeof buf);
      if (n <= 0)
        return "";
      buffered.append(buf, static_cast<size_t>(n));
    }
  }
  /// The next message; null at the end of its output.
  Json next() {
    auto line = next_line();
    if (line.empty())
      return Json();
    auto j = Json::parse(line);
    seen.push_back(j ? *j : Json("not JSON: " + line));
    return seen.back();
  }
  /// The response to request `id` (null if none came); what came before it stays in `seen`.
  Json response(int64_t id) {
    for (auto m = next(); !m.is_null(); m = next())
      if (auto* i = m.find("id"); i && i->is_int() && i->as_int() == id && !m.find("method"))
        return m;
    return Json();
  }
  /// Sends a request and waits for its response.
  Json call(const std::string& method, Json params = Json::object()) {
    return response(request(method, std::move(params)));
  }
  /// The process's exit status once its output ended (-1: it did not end).
  int wait_exit() {
    while (from >= 0 && !next().is_null()) { // what it said last, unless nobody reads it
    }
    int st = 0;
    if (reap_child(pid, &st) != pid)
      return -1;
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
};

/// What `jp-actors mcp --listen` says first, read: its url, its port, and the token
/// in the file it names (all empty when it said something else).
struct Listening {
  std::string url; // http://127.0.0.1:PORT/mcp
  uint16_t port = 0;
  std::string token;
  std::string said; // the line
};

inline Listening listening(McpClient& server) {
  Listening l;
  l.said = server.next_line();
  auto at = l.said.find("http://127.0.0.1:");
  auto token_at = l.said.find("the token in ");
  if (at == std::string::npos || token_at == std::string::npos)
    return l;
  l.url = l.said.substr(at, l.said.find("/mcp", at) + 4 - at);
  l.port = static_cast<uint16_t>(std::stoi(l.said.substr(at + 17)));
  std::ifstream in(l.said.substr(token_at + 13));
  std::getline(in, l.token);
  return l;
}

} // namespace jp::testing
