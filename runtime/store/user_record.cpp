#include "runtime/store/user_record.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "runtime/process/private_file.hpp"
#include "runtime/store/state_location.hpp"

namespace jp {

bool in_user_record(std::string_view name, const std::string& line) {
  if (line.find('\n') != std::string::npos)
    return false;
  auto state = user_state_dir("");
  if (!state)
    return false;
  auto dir = open_private_dir(state->root, state->relative);
  if (!dir)
    return false;
  UniqueFd fd{::openat(dir->get(), std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (fd.get() < 0)
    return false;
  // Read whole: a line per conversation or workspace config, ever (about 100 bytes).
  std::string text;
  char buf[65536];
  for (;;) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  auto wanted = line + "\n";
  return text.starts_with(wanted) || text.find("\n" + wanted) != std::string::npos;
}

Status add_to_user_record(std::string_view name, const std::string& line) {
  if (line.find('\n') != std::string::npos)
    return Status::fail(fmt::format("cannot keep a line break in {}", name));
  if (in_user_record(name, line))
    return Status::success();
  auto state = user_state_dir("");
  if (!state)
    return Status::fail(state.error());
  auto dir = open_private_dir(state->root, state->relative);
  if (!dir)
    return Status::fail(dir.error());
  // The user's own directory (open_private_dir checked it): appended to, never through a link.
  UniqueFd fd{::openat(dir->get(), std::string(name).c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)};
  auto text = line + "\n";
  if (fd.get() < 0 || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return Status::fail(fmt::format("cannot write {}/{}: {}", state->path(), name, std::strerror(errno)));
  return Status::success();
}

} // namespace jp
