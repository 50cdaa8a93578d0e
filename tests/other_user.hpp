// Running the CLI as a user who does not own the test's files. Root writes
// anywhere, so a read-only directory means something only to another user: as root
// the run drops to another uid (`nobody` unless the test names one; setpriv, from
// util-linux); as anyone else it runs as that user, for whom a 0555 directory is
// already read-only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.hpp"
#include "temp_dir.hpp"

namespace jp::testing {

class other_user_area {
public:
  temp_dir dir; // 0755; what the test creates for the other user lives here

  /// `uid`: the other user (as root); `nobody` unless a test needs one whose tasks
  /// are its own alone (a task limit counts every process of the user).
  explicit other_user_area(uid_t uid = 65534) : uid_(uid) {
    ::chmod(dir.path.c_str(), 0755);
    if (::geteuid() != 0)
      return;
    drop_ = fmt::format("setpriv --reuid={0} --regid={0} --clear-groups ", uid);
    // The binary may sit where nobody cannot reach it (a home directory): copy it.
    if (std::system(fmt::format("{}test -x '{}'", drop_, bin_).c_str()) != 0) {
      auto copy = dir.path / "jp-actors";
      std::filesystem::copy_file(JP_CLI_BINARY, copy);
      ::chmod(copy.c_str(), 0755);
      bin_ = copy.string();
    }
  }
  ~other_user_area() {
    // A read-only directory would keep its content from being removed.
    std::error_code ec;
    for (auto& e : std::filesystem::recursive_directory_iterator(dir.path, ec))
      if (e.is_directory(ec) && !e.is_symlink(ec))
        ::chmod(e.path().c_str(), 0755);
  }

  /// A directory of the other user's: writable by them, or read-only (0555).
  std::string make_dir(const std::string& name, bool writable) const {
    auto p = dir.path / name;
    std::filesystem::create_directories(p);
    if (writable && ::geteuid() == 0)
      (void)!::chown(p.c_str(), uid_, uid_);
    ::chmod(p.c_str(), writable ? 0755 : 0555);
    return p.string();
  }

  /// jp-actors ARGS in workspace `ws` as the other user, with its own HOME and
  /// XDG_STATE_HOME=`state`, and `env` (NAME=VALUE ...) added.
  Run run(const std::string& ws, const std::string& state, const std::string& args,
          const std::string& env = "") const {
    auto home = make_dir("home", true);
    auto cmd = fmt::format("cd '{}' && {}env HOME='{}' XDG_STATE_HOME='{}' XDG_CONFIG_HOME='{}/config' {} '{}' "
                           "--workspace '{}' {}",
                           ws, drop_, home, state, home, env, bin_, ws, args);
    return run_command(cmd);
  }

  /// The setpriv command that runs what follows it as the other user ("" when this
  /// is not root: then the runs are as this user) and the jp-actors they can run.
  const std::string& drop() const { return drop_; }
  const std::string& binary() const { return bin_; }

private:
  uid_t uid_;
  std::string drop_;
  std::string bin_ = JP_CLI_BINARY;
};

} // namespace jp::testing
