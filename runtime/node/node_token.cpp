#include "runtime/node/node_token.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/process/private_file.hpp"
#include "runtime/store/state_location.hpp"

namespace jp {

namespace {

/// A token's file and what the errors call it.
struct TokenKind {
  const char* file;
  const char* what;
  const char* maker;
};
constexpr TokenKind node_kind{"node-token", "node token",
                              "a node started as this user on loopback without TLS makes it; a node with "
                              "[node.tls] takes none: give its client [nodes.NAME.tls] instead"};
constexpr TokenKind mcp_kind{"mcp-token", "MCP token", "`jp-actors mcp --listen` started as this user makes it"};

/// `mine`: this process makes the token when there is none (a node, `mcp --listen`);
/// else it only reads one (a client), and a broken one is fixed, not remade.
Result<std::string> read_token(const DirFd& dir, const TokenKind& kind, const std::string& where, bool mine) {
  int fd = ::openat(dir.get(), kind.file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ELOOP) // O_NOFOLLOW: a link could lead to anyone's file
    return Error{fmt::format("the {} at {} is a symbolic link, which is refused: remove it ({})", kind.what,
                             where, kind.maker)};
  if (fd < 0)
    return Error{fmt::format("no {} at {}: {} ({})", kind.what, where, std::strerror(errno), kind.maker)};
  struct stat st {};
  std::string token(128, '\0');
  ssize_t n = -1;
  std::string wrong;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    wrong = "it is not a regular file";
  else if (st.st_uid != ::getuid())
    wrong = "it belongs to another user";
  else if ((st.st_mode & 077) != 0)
    wrong = fmt::format("others may read it (mode {:o}; chmod 600 it)", st.st_mode & 0777);
  else if ((n = ::read(fd, token.data(), token.size())) < 32)
    wrong = "it holds fewer than 32 characters";
  ::close(fd);
  if (!wrong.empty())
    return Error{fmt::format("the {} at {} must be this user's own 0600 file of 32 characters or more, and {}; {}",
                             kind.what, where, wrong,
                             mine ? std::string("remove it and start again (a new one is made)")
                                  : fmt::format("put there a copy of the {} of the one you reach (its own {} file)",
                                                kind.what, kind.file))};
  token.resize(static_cast<size_t>(n));
  while (!token.empty() && (token.back() == '\n' || token.back() == ' '))
    token.pop_back();
  return token;
}

/// Writes `token` whole to `fd`, on disk before anyone can read it by name, and
/// closes `fd`: whether all of that worked.
bool write_whole(int fd, const std::string& token) {
  bool written = ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size()) && ::fsync(fd) == 0;
  return ::close(fd) == 0 && written;
}

Result<std::string> state_token(const TokenKind& kind, bool create) {
  auto state = user_state_dir("");
  if (!state)
    return Error{fmt::format("no place for the {}: {}", kind.what, state.error())};
  // A client only reads: it makes no directory for a token it would not find there.
  if (struct stat st {}; !create && ::stat(state->path().c_str(), &st) != 0 && errno == ENOENT)
    return Error{fmt::format("no {} at {}/{}: {} ({})", kind.what, state->path(), kind.file, std::strerror(ENOENT),
                             kind.maker)};
  auto dir = open_private_dir(state->root, state->relative);
  if (!dir)
    return Error{fmt::format("the {}: {}", kind.what, dir.error())};
  auto where = state->path() + "/" + kind.file;
  auto existing = read_token(*dir, kind, where, create);
  if (existing || !create)
    return existing;
  // Written whole under a name of its own, then linked into place: a process
  // starting at the same moment finds no token or the whole of one, never an empty
  // file (which it would call broken). The link fails if another was first: its counts.
  auto draft = std::string(kind.file) + ".new-" + random_name_part();
  int fd = create_private_file(*dir, draft);
  if (fd < 0)
    return Error{fmt::format("cannot create the {} {}: {}", kind.what, where, std::strerror(errno))};
  auto token = random_name_part() + random_name_part() + random_name_part() + random_name_part();
  // On disk before its name is: a crash then leaves no empty token behind.
  bool written = write_whole(fd, token);
  int linked = written ? ::linkat(dir->get(), draft.c_str(), dir->get(), kind.file, 0) : -1;
  int link_errno = errno;
  ::unlinkat(dir->get(), draft.c_str(), 0);
  if (!written)
    return Error{fmt::format("cannot write the {} {}", kind.what, where)};
  if (linked != 0 && link_errno == EEXIST) // another process made it meanwhile
    return read_token(*dir, kind, where, create);
  if (linked != 0 && link_errno != EPERM && link_errno != EOPNOTSUPP && link_errno != EMLINK)
    return Error{fmt::format("cannot create the {} {}: {}", kind.what, where, std::strerror(link_errno))};
  if (linked != 0) { // a file system without hard links (vfat): made in place, as it was
    fd = create_private_file(*dir, kind.file);
    if (fd < 0 && errno == EEXIST)
      return read_token(*dir, kind, where, create);
    if (fd < 0)
      return Error{fmt::format("cannot create the {} {}: {}", kind.what, where, std::strerror(errno))};
    if (!write_whole(fd, token))
      return Error{fmt::format("cannot write the {} {}", kind.what, where)};
  }
  return token;
}

} // namespace

Result<std::string> node_token(bool create) {
  return state_token(node_kind, create);
}

Result<std::string> mcp_token(bool create) {
  return state_token(mcp_kind, create);
}

std::string mcp_token_path() {
  auto state = user_state_dir("");
  return state ? state->path() + "/" + mcp_kind.file : std::string("$XDG_STATE_HOME/jp-actors/") + mcp_kind.file;
}

bool same_token(const std::string& a, const std::string& b) {
  if (a.size() != b.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

} // namespace jp
