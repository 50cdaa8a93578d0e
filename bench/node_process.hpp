// W9's node: `jp-actors node` started as its own process (its own process group) on
// loopback, with the tools its config file gives, until this object goes (TERM to the
// group, then reaped).
#pragma once

#include <memory>
#include <string>
#include <sys/types.h>

#include "messages/result.hpp"

namespace jp::bench {

class NodeProcess {
public:
  /// Starts `jp_actors` (the CLI binary) as a node in `workspace` with `config_file`;
  /// returns once it says where it listens.
  static Result<std::unique_ptr<NodeProcess>> start(const std::string& jp_actors, const std::string& workspace,
                                                    const std::string& config_file);
  ~NodeProcess();
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  const std::string& address() const { return address_; } // "127.0.0.1:PORT"

private:
  NodeProcess(pid_t pid, int out, std::string address) : pid_(pid), out_(out), address_(std::move(address)) {}
  pid_t pid_;
  int out_; // its stdout
  std::string address_;
};

} // namespace jp::bench
