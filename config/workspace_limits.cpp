#include "config/workspace_limits.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

#include "config/assistant_model.hpp"

namespace jp {

namespace {

/// A limit where 0 means "none": the highest of all.
double unless_zero(uint64_t v) {
  return v == 0 ? std::numeric_limits<double>::infinity() : double(v);
}

// A limit and how to read it: every one here is safe when lower (a shorter wait, a
// smaller cap, fewer retries) and is what a workspace may only lower. A table as
// data, checked in one place (workspace_only_lowered); add a limit here.
//
// Not here, and why:
// - runtime.io_poll_us, runtime.worker_threads: tune this machine (its cores, what a
//   wake-up costs on it), which a repository knows nothing of; polling spins a core.
//   Your own config's alone (config_loader.cpp, users_only).
// - assistant.max_tokens: costs tokens, but neither holds a run nor fills memory
//   (assistant.request.max_response_bytes bounds the response).
// - the timeouts of a tool the workspace defines itself (await_timeout_secs,
//   background_after_secs): its own program can hold a call as long as it likes
//   anyway, and an abort still ends it within runtime.abort_grace_secs. Of your
//   tools it may set only wait_ms, settle_ms and limits.* (below) among the limits.
struct Limit {
  std::string_view key;
  double (*value)(const Config&);
};

constexpr Limit limits[] = {
  // Memory per response and per await, disk per spill file and per workspace.
  {"runtime.output_cap_bytes", [](const Config& c) { return double(c.runtime.output_cap_bytes); }},
  {"runtime.response_cap_bytes", [](const Config& c) { return double(c.runtime.response_cap_bytes); }},
  {"runtime.spill_max_bytes", [](const Config& c) { return double(c.runtime.spill_max_bytes); }},
  {"runtime.spill_budget_bytes", [](const Config& c) { return double(c.runtime.spill_budget_bytes); }},
  // How long every abort (and Ctrl-C, and exit) waits for a tool ignoring SIGTERM.
  {"runtime.abort_grace_secs", [](const Config& c) { return c.runtime.abort_grace_secs; }},
  // Sub-agents: how many live at once, how deep, how many responses each.
  {"agents.max_depth", [](const Config& c) { return double(c.agents.max_depth); }},
  {"agents.max_concurrent", [](const Config& c) { return double(c.agents.max_concurrent); }},
  {"agents.max_live", [](const Config& c) { return double(c.agents.max_live); }},
  {"agents.max_rounds", [](const Config& c) { return double(c.agents.max_rounds); }},
  // A provider request: how often and how long it is retried or waited for, and
  // how large a response is read into memory. 0 is never "unbounded" here (an idle
  // timeout of 0 gives up at once).
  {"assistant.request.max_retries", [](const Config& c) { return double(c.assistant.request.max_retries); }},
  {"assistant.request.base_backoff_ms", [](const Config& c) { return double(c.assistant.request.base_backoff_ms); }},
  {"assistant.request.max_backoff_secs", [](const Config& c) { return c.assistant.request.max_backoff_secs; }},
  {"assistant.request.max_response_bytes",
   [](const Config& c) { return double(c.assistant.request.max_response_bytes); }},
  // runtime.tool_limits: below, with a tool's own (kToolLimitKeys).
};

struct ToolLimit {
  std::string_view key;
  double (*value)(const ToolConfig&);
};

// Of a tool that was there before the workspace's layer: how long a spawn, fetch or
// apply that names no wait_ms waits (default_wait_ms: as the call sees it, the
// io's default when not set), and how long output must be quiet to end a wait.
constexpr ToolLimit tool_limits[] = {
  {"wait_ms", [](const ToolConfig& t) { return double(default_wait_ms(t)); }},
  {"settle_ms", [](const ToolConfig& t) { return double(t.settle_ms); }},
  // limits.*: below (kToolLimitKeys).
};

Status refuse(std::string_view origin, std::string_view key, double wanted, double limit) {
  return Status::fail(fmt::format("{}: {}: {} is more than the limit the layers before it set ({}, built in or "
                                  "from your own config); a workspace's config may only lower it: to raise it, "
                                  "set it in your own config ($XDG_CONFIG_HOME/jp-actors/config.toml, --config "
                                  "or --cfg)",
                                  origin, key, wanted, limit));
}

/// What a tool's processes may use (the runtime's, or a tool's own, under
/// `prefix`): not set is no limit, the highest.
Status only_lowered(const ToolLimits& before, const ToolLimits& after, std::string_view origin,
                    std::string_view prefix) {
  for (auto& k : kToolLimitKeys)
    if (unless_zero(after.*k.field) > unless_zero(before.*k.field))
      return refuse(origin, fmt::format("{}.{}", prefix, k.key), unless_zero(after.*k.field),
                    unless_zero(before.*k.field));
  return Status::success();
}

/// A file size limit on tools the workspace did not define: a write past it fails
/// part-way, and a file the tool rewrites (anywhere: the user's own, outside the
/// workspace) is left cut. Your own config may set it.
Status no_file_size(const ToolLimits& before, const ToolLimits& after, std::string_view origin,
                    std::string_view prefix) {
  if (after.file_size_mb == before.file_size_mb)
    return Status::success();
  return Status::fail(fmt::format("{}: {}.file_size_mb: may not be set by a workspace's config on tools it does not "
                                  "define: a write past it fails part-way, and a file the tool rewrites (yours, "
                                  "anywhere) is left cut; set it in your own config, or on the workspace's own "
                                  "tools",
                                  origin, prefix));
}

// Below this an abort is a KILL at once: a tool's clean-up (a lock file, an index
// being written) never runs. A workspace may lower the grace to it, not past it.
constexpr double kWorkspaceMinGraceSecs = 1;

} // namespace

Status workspace_only_lowered(const Config& before, const Config& after, std::string_view origin) {
  for (auto& limit : limits)
    if (limit.value(after) > limit.value(before))
      return refuse(origin, limit.key, limit.value(after), limit.value(before));
  if (auto floor = std::min(kWorkspaceMinGraceSecs, before.runtime.abort_grace_secs);
      after.runtime.abort_grace_secs != before.runtime.abort_grace_secs && after.runtime.abort_grace_secs < floor)
    return Status::fail(fmt::format("{}: runtime.abort_grace_secs: {} is below what a workspace's config may set "
                                    "({} s: less kills every tool of yours at once on an abort, before its "
                                    "clean-up runs); set it in your own config",
                                    origin, after.runtime.abort_grace_secs, floor));
  if (auto s = no_file_size(before.runtime.tool_limits, after.runtime.tool_limits, origin, "runtime.tool_limits"); !s)
    return s;
  if (auto s = only_lowered(before.runtime.tool_limits, after.runtime.tool_limits, origin, "runtime.tool_limits"); !s)
    return s;
  // The stream's idle timeout, where none is set, is the model's (assistant_model.hpp):
  // the limit is what the layers before give for the model now named, which a
  // workspace may choose.
  auto& a = after.assistant;
  auto limit = idle_timeout_for(a.provider, a.model, before.assistant.request.idle_timeout_secs);
  if (idle_timeout_for(a) > limit)
    return refuse(origin, "assistant.request.idle_timeout_secs", idle_timeout_for(a), limit);
  for (auto& [name, tool] : before.tools) {
    auto now = after.tools.find(name);
    if (now == after.tools.end())
      continue; // a layer adds tools, never removes one
    for (auto& limit : tool_limits)
      if (limit.value(now->second) > limit.value(tool))
        return refuse(origin, fmt::format("conversation.tools.{}.{}", name, limit.key), limit.value(now->second),
                      limit.value(tool));
    if (auto s = only_lowered(tool.limits, now->second.limits, origin, fmt::format("conversation.tools.{}.limits", name));
        !s)
      return s;
    if (auto s = no_file_size(tool.limits, now->second.limits, origin, fmt::format("conversation.tools.{}.limits", name));
        !s)
      return s;
  }
  return Status::success();
}

std::vector<std::string> workspace_lowered(const Config& before, const Config& after, const Config& final) {
  std::vector<std::string> lowered;
  for (auto& limit : limits)
    if (limit.value(after) != limit.value(before) && limit.value(final) == limit.value(after))
      lowered.push_back(fmt::format("{} = {}", limit.key, limit.value(after)));
  auto& r = after.assistant.request;
  if (r.idle_timeout_secs != before.assistant.request.idle_timeout_secs &&
      final.assistant.request.idle_timeout_secs == r.idle_timeout_secs)
    lowered.push_back(fmt::format("assistant.request.idle_timeout_secs = {}", r.idle_timeout_secs));
  return lowered;
}

} // namespace jp
