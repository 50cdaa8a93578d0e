#include "config/config.hpp"

#include <filesystem>

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

std::string_view to_string(io_mode m) {
  switch (m) {
    case io_mode::pipe: return "pipe";
    case io_mode::pty: return "pty";
    case io_mode::control: return "control";
  }
  return "?";
}

std::string state_path(const Config& config, std::string_view sub) {
  std::filesystem::path dir(config.runtime.state_dir);
  if (dir.is_relative())
    dir = std::filesystem::path(config.workspace) / dir;
  return (dir / sub).string();
}

bool uses_nodes(const Config& config) {
  for (auto& [name, tool] : config.tools)
    if (!tool.node.empty())
      return true;
  return false;
}

} // namespace jp
