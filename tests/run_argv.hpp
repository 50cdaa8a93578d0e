// Runs an argv as a process (no shell in between), in `cwd` if given, and returns its
// exit status and stdout. The child is reaped before this returns.
#pragma once

#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace jp::testing {

struct ArgvRun {
  int status = -1; // exit status, or 128 + signal
  std::string out;
};

inline ArgvRun run_argv(const std::vector<std::string>& argv, const std::string& cwd = "") {
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0)
    return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ArgvRun r;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    r.out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int st = 0;
  if (pid > 0 && ::waitpid(pid, &st, 0) == pid)
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

} // namespace jp::testing
