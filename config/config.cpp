#include "config/config.hpp"
#include "config/tls_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <thread>

namespace jp {

// The spellings here are the ones the TOML config and the wire formats use.

std::string_view to_string(run_mode m) {
  switch (m) {
    case run_mode::ask: return "ask";
    case run_mode::unattended: return "unattended";
    case run_mode::skip: return "skip";
  }
  return "?";
}

int64_t default_wait_ms(const ToolConfig& tool) {
  // A terminal's program answers input with output (its echo at least): waiting for
  // it to settle saves the assistant a fetch. Pipes answer at once unless asked.
  return tool.wait_ms >= 0 ? tool.wait_ms : tool.io == io_mode::pty ? 1000 : 0;
}

bool can_go_on_as_handle(const ToolConfig& tool) {
  auto declares = [&](action_kind a) {
    return tool.actions.empty() || std::find(tool.actions.begin(), tool.actions.end(), a) != tool.actions.end();
  };
  return tool.stateful && tool.io == io_mode::pipe && tool.node.empty() && declares(action_kind::fetch) &&
         declares(action_kind::abort);
}

double background_after_secs(const ToolConfig& tool) {
  if (tool.background_after_secs >= 0)
    return tool.background_after_secs;
  // A server or a watcher run without `action` would hold the turn up for good.
  return tool.source == "builtin" && tool.name == "shell" && can_go_on_as_handle(tool) ? 120 : 0;
}

size_t worker_threads_for_cores(unsigned cores) {
  return std::clamp<size_t>(cores / 4, 1, 4);
}

namespace {

/// The cores this process may run on (a container or `taskset` allows fewer than
/// the machine has).
unsigned usable_cores() {
  cpu_set_t allowed;
  return ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? static_cast<unsigned>(CPU_COUNT(&allowed))
                                                              : std::thread::hardware_concurrency();
}

} // namespace

size_t worker_threads(uint64_t configured) {
  return configured > 0 ? configured : worker_threads_for_cores(usable_cores());
}

int64_t io_poll_us_for_cores(unsigned cores) {
  return cores >= 8 ? 100 : 0;
}

std::chrono::microseconds io_poll(const RuntimeConfig& runtime) {
  return std::chrono::microseconds{runtime.io_poll_us >= 0 ? runtime.io_poll_us
                                                           : io_poll_us_for_cores(usable_cores())};
}

std::string_view to_string(io_mode m) {
  switch (m) {
    case io_mode::pipe: return "pipe";
    case io_mode::pty: return "pty";
    case io_mode::control: return "control";
  }
  return "?";
}

namespace {

/// `a / b` as std::filesystem::path joins them on POSIX, without building paths (a
/// spawn asks for its spill directory: ~5k instructions that way).
std::string join_path(std::string a, std::string_view b) {
  if (b.starts_with('/'))
    return std::string(b);
  if (!a.empty() && a.back() != '/')
    a += '/';
  a += b;
  return a;
}

} // namespace

std::string state_path(const Config& config, std::string_view sub) {
  const auto& dir = config.runtime.state_dir;
  return join_path(dir.starts_with('/') ? dir : join_path(config.workspace, dir), sub);
}

const TlsConfig* client_tls(const Config& config) {
  for (auto& [name, tool] : config.tools)
    if (auto it = config.nodes.find(tool.node); !tool.node.empty() && it != config.nodes.end() && it->second.tls.enabled())
      return &it->second.tls;
  return nullptr;
}

std::string check_tls(const TlsConfig& tls, const std::string& where) {
  auto pinned = PinnedTls::pin(tls, where);
  return pinned ? std::string() : pinned.error();
}

std::string check_node_tls(const Config& config) {
  const TlsConfig* first = nullptr;
  std::string first_name;
  for (auto& [name, node] : config.nodes) {
    if (!node.tls.enabled())
      continue;
    if (auto why = check_tls(node.tls, "nodes." + name + ".tls"); !why.empty())
      return why;
    if (first && (first->certificate != node.tls.certificate || first->key != node.tls.key || first->ca != node.tls.ca))
      return fmt::format("nodes.{}.tls and nodes.{}.tls differ: this process has one TLS identity, so every node "
                         "it reaches with TLS takes the same certificate, key and ca",
                         first_name, name);
    first = &node.tls;
    first_name = name;
  }
  return {};
}

bool uses_nodes(const Config& config) {
  for (auto& [name, tool] : config.tools)
    if (!tool.node.empty())
      return true;
  return false;
}

} // namespace jp
