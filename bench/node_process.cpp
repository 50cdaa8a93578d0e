#include "bench/node_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace jp::bench {

namespace {

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

} // namespace

Result<std::unique_ptr<NodeProcess>> NodeProcess::start(const std::string& jp_actors, const std::string& workspace,
                                                        const std::string& config_file) {
  if (::access(jp_actors.c_str(), X_OK) != 0)
    return Error{fmt::format("W9 needs the jp-actors binary as its node, and {} is missing; build the jp-actors "
                             "target",
                             jp_actors)};
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    return Error{fmt::format("pipe: {}", std::strerror(errno))};
  std::vector<std::string> argv{jp_actors, "--workspace", workspace, "--config", config_file,
                                "node",    "--listen",    "127.0.0.1:0"};
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0)
    return Error{fmt::format("fork: {}", std::strerror(errno))};
  if (pid == 0) {
    ::setpgid(0, 0); // the node and its tools: one group to end
    ::dup2(p[1], 1);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(p[1]);
  // Its first line says where it listens.
  std::string out;
  char c;
  while (out.find('\n') == std::string::npos) {
    auto n = ::read(p[0], &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    out += c;
  }
  const std::string mark = "listening on ";
  auto at = out.find(mark);
  if (at == std::string::npos) {
    ::kill(-pid, SIGKILL);
    reap(pid);
    ::close(p[0]);
    return Error{fmt::format("the W9 node did not start (it printed {:?})", out)};
  }
  auto address = out.substr(at + mark.size());
  while (!address.empty() && (address.back() == '\n' || address.back() == '\r'))
    address.pop_back();
  return std::unique_ptr<NodeProcess>(new NodeProcess(pid, p[0], address));
}

NodeProcess::~NodeProcess() {
  ::kill(-pid_, SIGTERM); // the node ends its tools, then itself
  reap(pid_);
  ::close(out_); // open until now: a node writing to a closed pipe would die of SIGPIPE
}

} // namespace jp::bench
