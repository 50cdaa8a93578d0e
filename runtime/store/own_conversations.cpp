#include "runtime/store/own_conversations.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <string_view>
#include <unistd.h>

#include "runtime/process/private_file.hpp"
#include "runtime/store/state_location.hpp"

namespace jp {

namespace {

constexpr const char* kRecord = "own-conversations";
// A line per conversation ever started: read up to this much (about 20,000 of them).
constexpr size_t kMaxRecordBytes = 4u << 20;

std::string line_of(const std::string& root, const std::string& id) {
  return root + "\t" + id + "\n";
}

} // namespace

bool own_conversation(const std::string& root, const std::string& id) {
  if (root.find_first_of("\t\n") != std::string::npos) // not one line of the record
    return false;
  auto state = user_state_dir("");
  if (!state)
    return false;
  auto dir = open_private_dir(state->root, state->relative);
  if (!dir)
    return false;
  UniqueFd fd{::openat(dir->get(), kRecord, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (fd.get() < 0)
    return false;
  std::string text;
  char buf[65536];
  ssize_t n;
  while (text.size() < kMaxRecordBytes && (n = ::read(fd.get(), buf, sizeof buf)) > 0)
    text.append(buf, static_cast<size_t>(n));
  auto wanted = line_of(root, id);
  return text.starts_with(wanted) || text.find("\n" + wanted) != std::string::npos;
}

Status remember_own_conversation(const std::string& root, const std::string& id) {
  if (root.find_first_of("\t\n") != std::string::npos)
    return Status::fail(fmt::format("cannot record conversation {} as yours: its directory's name has a tab or "
                                    "a line break",
                                    id));
  if (own_conversation(root, id))
    return Status::ok();
  auto state = user_state_dir("");
  if (!state)
    return Status::fail(fmt::format("cannot record conversation {} as yours: {}", id, state.error()));
  auto dir = open_private_dir(state->root, state->relative);
  if (!dir)
    return Status::fail(fmt::format("cannot record conversation {} as yours: {}", id, dir.error()));
  // The user's own directory (open_private_dir checked it): appended to, never through a link.
  UniqueFd fd{::openat(dir->get(), kRecord, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)};
  auto line = line_of(root, id);
  if (fd.get() < 0 || ::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    return Status::fail(fmt::format("cannot record conversation {} as yours in {}/{}: {}", id, state->path(),
                                    kRecord, std::strerror(errno)));
  return Status::ok();
}

} // namespace jp
