#include "runtime/embedding/runtime_access.hpp"

#include <cstdio>
#include <cstdlib>

#include <caf/all.hpp>
#include <caf/policy/work_sharing.hpp>
#include <caf/policy/work_stealing.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <thread>
#include <fmt/format.h>
#include <regex>

#include "actors/function_handle.hpp"
#include "actors/mcp_tools.hpp"
#include "actors/turn_actor.hpp"
#include "config/config_loader.hpp"
#include "jp/executor.hpp"
#include "runtime/actor_scheduler.hpp"
#include "runtime/embedding/caller_thread_guard.hpp"
#include "runtime/process/process.hpp"
#include "runtime/store/conversation_store.hpp"
#include "tools/builtin_tools.hpp"

namespace jp {

Config builtin_config() {
  return default_config();
}

Result<Config> config_from_file(const std::string& path) {
  ConfigSources sources;
  sources.config_files = {path};
  sources.use_user_config = false;
  return load_config(sources, default_config());
}

Result<Config> config_from_toml(std::string_view toml, std::string_view origin) {
  return apply_config_text(default_config(), toml, origin);
}

Runtime::Impl::Impl(Config c, caf::actor_system* system)
  : io(io_poll(c.runtime)), config(std::move(c)), store(std::make_shared<MemoryConversationStore>()) {
  CallerThreadGuard caller; // caller_thread_guard.hpp
  if (!config.mcp_servers.empty()) {
    auto mcp = start_mcp_tools(std::make_shared<const Config>(config), io,
                               [this](const std::string& note) { notes.push_back(note); });
    config = *mcp.config;
    executors = std::move(mcp.executors);
    mcp_clients = std::move(mcp.clients);
    mcp_now = std::move(mcp.now);
    mcp_first = mcp_now ? mcp_now() : nullptr;
  }
  if (system) {
    sys = system;
    return;
  }
  own_config = std::make_unique<RuntimeActorConfig>(config.runtime.worker_threads,
                                                    uses_nodes(config) ? &config.node : nullptr,
                                                    client_tls(config));
  own_system = std::make_unique<caf::actor_system>(*own_config);
  sys = own_system.get();
}

namespace {

/// Whether this thread is one of `sys`'s scheduler workers (one that runs its actors,
/// and a session's callbacks), for RuntimeActorConfig's scheduler and CAF's.
bool on_worker_of(caf::actor_system& sys) {
  auto here = std::this_thread::get_id();
  auto among = [&](auto* coordinator) {
    if (!coordinator)
      return false;
    for (size_t i = 0; i < coordinator->num_workers(); ++i)
      if (coordinator->worker_by_id(i)->get_thread().get_id() == here)
        return true;
    return false;
  };
  auto& scheduler = sys.scheduler();
  return among(dynamic_cast<caf::scheduler::coordinator<wake_after_unlock>*>(&scheduler)) || // ours
         among(dynamic_cast<caf::scheduler::coordinator<caf::policy::work_stealing>*>(&scheduler)) ||
         among(dynamic_cast<caf::scheduler::coordinator<caf::policy::work_sharing>*>(&scheduler));
}

} // namespace

Runtime::Impl::~Impl() {
  // On a thread of its own (a callback dropped the last Runtime: its io thread, an
  // actor's) the waits below would wait for that thread: said, rather than a
  // program that hangs unsaid. (A system given: its workers run a session's
  // callbacks too; its only worker waiting would wait for good.)
  if (io.on_this_thread() || (own_system && caf::logger::current_logger() == &own_system->logger()) ||
      (!own_system && sys->scheduler().num_workers() == 1 && on_worker_of(*sys))) {
    std::fputs("jp-actors: the last jp::Runtime was destroyed inside one of its own callbacks, where its "
               "end would wait for itself forever; drop it from a thread of your own\n",
               stderr);
    std::abort();
  }
  {
    std::lock_guard lock(reach->mtx);
    reach->impl = nullptr;
  }
  if (own_system) {
    own_system.reset(); // waits for every actor of it
    return;
  }
  // Someone else's system: end this runtime's turns (and with them their handles)
  // before the io thread their processes use goes away.
  CallerThreadGuard caller; // caller_thread_guard.hpp
  caf::scoped_actor self{*sys};
  for (auto& addr : started)
    if (auto a = caf::actor_cast<caf::actor>(addr)) {
      self->monitor(a);
      self->send_exit(a, caf::exit_reason::user_shutdown);
      self->receive([](const caf::down_msg&) {});
    }
}

std::shared_ptr<const Config> Runtime::Impl::snapshot() {
  std::lock_guard lock(mtx);
  return std::make_shared<const Config>(config);
}

std::map<std::string, HandleFactory> Runtime::Impl::executors_now() {
  std::lock_guard lock(mtx);
  return executors;
}

ToolsNow Runtime::Impl::tools_now() {
  if (!mcp_now)
    return {};
  return [reach = reach]() -> std::shared_ptr<const ToolSet> {
    std::lock_guard lock(reach->mtx);
    return reach->impl ? reach->impl->tools_merged() : nullptr;
  };
}

std::shared_ptr<const ToolSet> Runtime::Impl::tools_merged() {
  auto set = mcp_now();
  if (!set || set == mcp_first)
    return nullptr; // as at the start: the turn's own config is current
  std::lock_guard lock(mtx);
  if (set == merged_from && own_changes == merged_changes)
    return merged;
  auto with_own = std::make_shared<Config>(*set->config);
  auto out = std::make_shared<ToolSet>(*set);
  for (auto& [name, tool] : config.tools)
    if (!tool.source.starts_with("mcp.")) {
      with_own->tools.insert_or_assign(name, tool);
      if (auto it = executors.find(name); it != executors.end())
        out->executors[name] = it->second;
    }
  out->config = std::move(with_own);
  merged_from = std::move(set);
  merged = std::move(out);
  merged_changes = own_changes;
  return merged;
}

void Runtime::Impl::track(const caf::actor_addr& a) {
  std::lock_guard lock(mtx);
  // Forget the ones that ended: a long-lived runtime starts many.
  std::erase_if(started, [](const caf::actor_addr& x) { return !caf::actor_cast<caf::actor>(x); });
  started.push_back(a);
}

void kill_all_tools() noexcept {
  kill_all_process_groups();
}

Runtime::Runtime(Config config) : impl_(std::make_shared<Impl>(std::move(config), nullptr)) {}
Runtime::Runtime(Config config, caf::actor_system& system)
  : impl_(std::make_shared<Impl>(std::move(config), &system)) {}
Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

Status Runtime::add_function_tool(ToolConfig definition, FunctionTool fn) {
  static const std::regex valid_name("[A-Za-z0-9_-]{1,64}");
  auto& name = definition.name;
  if (!std::regex_match(name, valid_name))
    return Error{fmt::format("function tool name {}: expected 1 to 64 of A-Z a-z 0-9 _ - (a name every "
                             "provider accepts)",
                             json_quote_cut(name))};
  if (!fn)
    return Error{fmt::format("function tool `{}`: no function given", name)};
  // What the config loader asks of a tool's parameters: else the schema goes to the
  // provider as it is, and every turn is refused for it, naming no tool.
  if (auto ok = check_tool_parameters(definition, "definition"); !ok)
    return Error{fmt::format("function tool `{}`: {}", name, ok.error)};
  definition.source = function_tool_source;
  std::lock_guard lock(impl_->mtx);
  if (impl_->config.tools.count(name))
    return Error{fmt::format("function tool `{}`: a tool of that name exists already ({}); choose another name",
                             name, impl_->config.tools.at(name).source)};
  impl_->executors[name] = function_handle_factory(std::move(fn));
  impl_->config.tools[name] = std::move(definition);
  ++impl_->own_changes;
  return Status::success();
}

Status set_executor(Runtime& runtime, const std::string& tool, HandleFactory factory) {
  auto& impl = RuntimeAccess::of(runtime);
  std::lock_guard lock(impl->mtx);
  if (!impl->config.tools.count(tool))
    return Error{fmt::format("set_executor: no tool `{}` in this runtime's config", tool)};
  if (!factory)
    return Error{fmt::format("set_executor: no executor given for `{}`", tool)};
  impl->executors[tool] = std::move(factory);
  ++impl->own_changes;
  return Status::success();
}

Config Runtime::config() const {
  std::lock_guard lock(impl_->mtx); // add_function_tool may change it on another thread
  return impl_->config;
}

std::vector<std::string> Runtime::notes() const {
  std::lock_guard lock(impl_->mtx);
  return impl_->notes;
}

caf::actor_system& Runtime::system() {
  return *impl_->sys;
}

Session Runtime::session() {
  CallerThreadGuard caller; // caller_thread_guard.hpp
  auto s = std::make_shared<Session::Impl>();
  s->rt = impl_;
  TurnContext ctx;
  ctx.config = impl_->snapshot();
  ctx.io = &impl_->io;
  // The program's own calls: a tool's `run = "ask"` does not apply to them.
  ctx.permissions = PermissionPolicy{false, {}};
  ctx.executors = impl_->executors_now();
  ctx.tools_now = impl_->tools_now();
  ctx.agent = "session";
  s->turn = spawn_turn(*impl_->sys, std::move(ctx));
  impl_->track(s->turn.address());
  return RuntimeAccess::session(std::move(s));
}

} // namespace jp
