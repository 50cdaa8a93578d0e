// The one main() shared by every CAF test runner.
#define CAF_TEST_NO_MAIN
#include <caf/test/unit_test_impl.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "owned_children.hpp"

namespace {

/// The directories of runners that are gone (a failed CAF_REQUIRE aborts, and
/// leaves its own): named with their runner's pid, removed once no such process is.
void sweep_gone_runners_dirs() {
  std::error_code ec;
  for (auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    auto name = entry.path().filename().string();
    for (std::string_view prefix : {"jp-actors-state-", "jp-actors-run-"}) {
      if (!name.starts_with(prefix))
        continue;
      auto rest = name.substr(prefix.size());
      auto dash = rest.find('-');
      if (dash == std::string::npos || dash == 0 ||
          rest.find_first_not_of("0123456789") != dash)
        continue;
      auto pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
      if (::kill(pid, 0) != 0 && errno == ESRCH)
        std::filesystem::remove_all(entry.path(), ec);
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  sweep_gone_runners_dirs();
  // The jp-actors runs a test starts keep their crash records (the user's state,
  // $XDG_STATE_HOME) in a directory of this runner's own: never the user's, and no
  // runner sweeps another's while it runs.
  auto own = std::to_string(::getpid());
  std::string tmpl = "/tmp/jp-actors-state-" + own + "-XXXXXX";
  std::string state = ::mkdtemp(tmpl.data()) ? tmpl : "";
  if (!state.empty())
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  // Nor is the user's config read ($XDG_CONFIG_HOME/jp-actors/config.toml): a
  // machine's own settings must not change what the tests see. (A test of user
  // config sets its own.)
  if (!state.empty()) {
    auto config = state + "/config";
    std::error_code made;
    std::filesystem::create_directory(config, made);
    ::setenv("XDG_CONFIG_HOME", config.c_str(), 1);
  }
  // A machine's NO_COLOR would take the styles out of what the terminal tests check.
  ::unsetenv("NO_COLOR");
  // So are their control sockets ($XDG_RUNTIME_DIR/jp-actors): a run a test kills
  // leaves its socket here, not in the user's runtime directory.
  std::string run_tmpl = "/tmp/jp-actors-run-" + own + "-XXXXXX";
  std::string run = ::mkdtemp(run_tmpl.data()) ? run_tmpl : "";
  if (!run.empty())
    ::setenv("XDG_RUNTIME_DIR", run.c_str(), 1);
  // A failing CAF_REQUIRE aborts: the processes the test started go with it.
  jp::testing::kill_children_at_abort();
  // CAF names a failed CAF_CHECK only at verbosity 4. Under ctest (output to a
  // file, shown only for a failed test) that is what a failure report needs; at a
  // terminal the default stays, and -v chooses.
  std::vector<char*> args(argv, argv + argc);
  char flag[] = "-v", level[] = "4";
  bool chosen = std::any_of(args.begin(), args.end(), [](const char* a) {
    return std::string_view(a).starts_with("-v") || std::string_view(a).starts_with("--console-verbosity");
  });
  if (!chosen && !::isatty(STDOUT_FILENO))
    args.insert(args.begin() + 1, {flag, level}); // before any "--"
  int rc = caf::test::main(static_cast<int>(args.size()), args.data());
  std::error_code ec;
  if (!state.empty())
    std::filesystem::remove_all(state, ec);
  if (!run.empty())
    std::filesystem::remove_all(run, ec);
  return rc;
}
