// The one main() shared by every CAF test runner.
#define CAF_TEST_NO_MAIN
#include <caf/test/unit_test_impl.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  // The jp-actors runs a test starts keep their crash records (the user's state,
  // $XDG_STATE_HOME) in a directory of this runner's own: never the user's, and no
  // runner sweeps another's.
  char tmpl[] = "/tmp/jp-actors-state-XXXXXX";
  std::string state = ::mkdtemp(tmpl) ? tmpl : "";
  if (!state.empty())
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  int rc = caf::test::main(argc, argv);
  if (!state.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(state, ec);
  }
  return rc;
}
