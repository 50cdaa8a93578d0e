// The control socket of a running jp-actors (`handles ls`, `handles abort` from
// another terminal). Each process that holds handles listens on a Unix socket of
// its own, `<pid>.sock`, in the user's runtime directory: $XDG_RUNTIME_DIR/jp-actors,
// else /tmp/jp-actors-<uid>. The directory is the user's (0700, checked) and the
// socket 0600, so only the user's own processes get in; nothing is ever put in the
// workspace, which may be a stranger's repository.
//
// One request per connection, one JSON line each way:
//   {"op":"ls"}              -> {"pid","command","workspace","holder","abort_secs","handles":[
//                                 {"id","tool","state","elapsed_secs","last_line","agent"}]}
//   {"op":"abort","id":"x"}  -> {"ok":true,"state":{...}} or {"ok":false,"error":"..."}
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../messages/json.hpp"
#include "../messages/result.hpp"

namespace jp {

/// The user's runtime directory for control sockets, created 0700 when missing.
/// Refused (with why) when it is not a directory of this user's, or others may
/// enter it.
Result<std::filesystem::path> control_dir();

/// Answers one request; called on the server's own thread (it may block).
using ControlHandler = std::function<Json(const Json& request)>;

/// Listens on control_dir()/<pid>.sock until destroyed (then the socket is removed).
class ControlServer {
public:
  /// nullptr with `error` set when it cannot listen (the caller says so and goes on:
  /// the run itself does not need the socket).
  static std::unique_ptr<ControlServer> start(ControlHandler handler, std::string& error);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;
  const std::filesystem::path& path() const;

private:
  struct Impl;
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// One running jp-actors' answer, or why it could not be asked.
struct ControlAnswer {
  std::filesystem::path socket;
  Result<Json> answer;
};

/// Sends `request` to every control socket in control_dir() (a socket nobody
/// listens on any more is removed) and collects the answers, each within
/// `timeout_ms`.
Result<std::vector<ControlAnswer>> ask_every_control_socket(const Json& request, int timeout_ms = 5000);

/// Sends `request` to one socket; its answer within `timeout_ms`.
Result<Json> ask_control_socket(const std::filesystem::path& socket, const Json& request, int timeout_ms = 5000);

} // namespace jp
