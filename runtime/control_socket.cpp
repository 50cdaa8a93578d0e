#include "runtime/control_socket.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace jp {

namespace {

constexpr size_t max_request = 64 * 1024;
constexpr size_t max_answer = 16 * 1024 * 1024; // thousands of handles' last lines
constexpr int request_timeout_ms = 5000; // a client that stops talking is dropped
constexpr int answer_timeout_ms = 5000;  // and one that does not read its answer in time

std::string errno_text() {
  return std::strerror(errno);
}

Result<sockaddr_un> address_of(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  auto s = path.string();
  if (s.size() >= sizeof addr.sun_path)
    return Error{fmt::format("the control socket's path is too long for a Unix socket ({} bytes, at most {}): {}",
                             s.size(), sizeof addr.sun_path - 1, s)};
  std::memcpy(addr.sun_path, s.c_str(), s.size() + 1);
  return addr;
}

/// Reads one line (without its newline), bounded in size (`max_bytes`) and in
/// time (`timeout_ms` for the whole line: a peer that trickles holds nobody up).
Result<std::string> read_line(int fd, int timeout_ms, size_t max_bytes) {
  std::string in;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (in.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0)
      return Error{fmt::format("no answer within {} s", timeout_ms / 1000)};
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    in.append(buf, static_cast<size_t>(n));
    if (in.size() > max_bytes)
      return Error{fmt::format("the message is longer than {} bytes", max_bytes)};
  }
  auto nl = in.find('\n');
  if (nl == std::string::npos)
    return Error{"the connection ended before a whole line"};
  return in.substr(0, nl);
}

/// Writes `s` whole within `timeout_ms` in all (-1: no bound).
bool write_all(int fd, const std::string& s, int timeout_ms = -1) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t off = 0;
  while (off < s.size()) {
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLOUT, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
        errno = ETIMEDOUT; // said by the caller: not a stale errno of before
        return false;
      }
    }
    auto n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL | (timeout_ms >= 0 ? MSG_DONTWAIT : 0));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

} // namespace

Result<std::filesystem::path> control_dir() {
  std::filesystem::path dir;
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run == '/')
    dir = std::filesystem::path(run) / "jp-actors";
  else
    dir = fmt::format("/tmp/jp-actors-{}", ::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Error{fmt::format("cannot create the control directory {}: {}", dir.string(), errno_text())};
  // lstat: a link planted in its place (/tmp is everyone's) must not lead elsewhere.
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    return Error{fmt::format("cannot read the control directory {}: {}", dir.string(), errno_text())};
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0)
    return Error{fmt::format("the control directory {} must be a directory of this user's that only it may "
                             "enter (mode 0700); it is not, so no control socket is used",
                             dir.string())};
  return dir;
}

struct ControlServer::Impl {
  std::filesystem::path path;
  int listen_fd = -1;
  int stop_fd = -1;
  ControlHandler handler;
  // A few answer at once: an abort waits out its tool's grace, and a `handles ls`
  // meanwhile got no answer (and said nobody held handles).
  static constexpr int kThreads = 4;
  std::vector<std::thread> threads;

  void serve() {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    while (true) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR)
          continue;
        return;
      }
      if (fds[1].revents != 0)
        return;
      // The listener is non-blocking: another thread may have taken the connection.
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
          ::poll(&fds[1], 1, 100); // out of descriptors: not a busy loop meanwhile
        continue;
      }
      answer(fd);
      ::close(fd);
    }
  }

  void answer(int fd) {
    // The directory already keeps others out; the peer's uid says so once more.
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid())
      return;
    auto line = read_line(fd, request_timeout_ms, max_request);
    if (!line)
      return;
    Json reply;
    if (auto request = Json::parse(*line); !request || !request->is_object())
      reply = Json::object().set("ok", false).set("error", "a request is one JSON object on one line");
    else
      reply = handler(*request);
    // A client that never reads an answer bigger than the socket holds, or reads it
    // slowly (a tool, as you), would hold this thread, the next clients and
    // jp-actors' exit, which joins it: the whole answer has a bound.
    write_all(fd, reply.dump() + "\n", answer_timeout_ms);
  }
};

std::unique_ptr<ControlServer> ControlServer::start(ControlHandler handler, std::string& error) {
  auto dir = control_dir();
  if (!dir) {
    error = dir.error();
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->path = *dir / fmt::format("{}.sock", ::getpid());
  impl->handler = std::move(handler);
  auto addr = address_of(impl->path);
  if (!addr) {
    error = addr.error();
    return nullptr;
  }
  // Bound and listening under a name `handles` passes over, then put in place: a
  // `handles ls` meanwhile must not take it for one nobody listens on (and remove it).
  auto pending = impl->path;
  pending += ".new";
  auto pending_addr = address_of(pending);
  if (!pending_addr) {
    error = pending_addr.error();
    return nullptr;
  }
  ::unlink(pending.c_str());
  impl->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  impl->stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (impl->listen_fd < 0 || impl->stop_fd < 0 ||
      ::bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&*pending_addr), sizeof *pending_addr) != 0 ||
      ::chmod(pending.c_str(), 0600) != 0 || ::listen(impl->listen_fd, 16) != 0 ||
      ::rename(pending.c_str(), impl->path.c_str()) != 0) {
    error = fmt::format("cannot listen on the control socket {}: {}", impl->path.string(), errno_text());
    if (impl->listen_fd >= 0)
      ::close(impl->listen_fd);
    if (impl->stop_fd >= 0)
      ::close(impl->stop_fd);
    ::unlink(pending.c_str());
    return nullptr;
  }
  auto* raw = impl.get();
  // Owned first: a thread that cannot start (this user at its task limit) leaves the
  // ones started to the destructor, which ends them; joinable, they aborted the process.
  std::unique_ptr<ControlServer> server(new ControlServer(std::move(impl)));
  try {
    for (int i = 0; i < Impl::kThreads; ++i)
      raw->threads.emplace_back([raw] { raw->serve(); });
  } catch (const std::system_error& e) {
    if (raw->threads.empty()) {
      error = fmt::format("cannot start the control socket's thread: {}", e.what());
      return nullptr;
    }
    // Fewer answer at once: each request is still answered.
  }
  return server;
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlServer::~ControlServer() {
  uint64_t one = 1;
  (void)!::write(impl_->stop_fd, &one, sizeof one);
  for (auto& t : impl_->threads) // each sees the eventfd readable: it stays so
    t.join();
  ::close(impl_->listen_fd);
  ::close(impl_->stop_fd);
  ::unlink(impl_->path.c_str());
}

const std::filesystem::path& ControlServer::path() const {
  return impl_->path;
}

Result<Json> ask_control_socket(const std::filesystem::path& socket, const Json& request, int timeout_ms) {
  auto addr = address_of(socket);
  if (!addr)
    return Error{addr.error()};
  // Non-blocking: a process that is stopped (Ctrl-Z) accepts nothing, and once its
  // listen queue is full a blocking connect waited as long as it stayed stopped.
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return Error{errno_text()};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
    // A Unix socket's full queue says EAGAIN at once and nothing tells when it has
    // room: tried again now and then until the deadline.
    if (errno == EINTR || (errno == EAGAIN && std::chrono::steady_clock::now() < deadline)) {
      if (errno == EAGAIN)
        ::poll(nullptr, 0, 20);
      continue;
    }
    auto why = errno == EAGAIN ? fmt::format("no answer within {} s (its process accepts no connection: stopped?)",
                                             timeout_ms / 1000)
                               : errno_text();
    ::close(fd);
    return Error{fmt::format("cannot connect to {}: {}", socket.string(), why)};
  }
  if (!write_all(fd, request.dump() + "\n", timeout_ms)) {
    ::close(fd);
    return Error{fmt::format("cannot write to {}: {}", socket.string(), errno_text())};
  }
  auto line = read_line(fd, timeout_ms, max_answer);
  ::close(fd);
  if (!line)
    return Error{fmt::format("{}: {}", socket.string(), line.error())};
  auto answer = Json::parse(*line);
  if (!answer || !answer->is_object())
    return Error{fmt::format("{} answered something that is not a JSON object", socket.string())};
  return *answer;
}

Result<std::vector<ControlAnswer>> ask_every_control_socket(const Json& request, int timeout_ms) {
  auto dir = control_dir();
  if (!dir)
    return Error{dir.error()};
  std::vector<ControlAnswer> out;
  std::error_code ec;
  std::filesystem::directory_iterator listing(*dir, ec);
  if (ec) // not to be taken for a directory with no socket in it: nobody holding handles
    return Error{fmt::format("cannot read the control directory {}: {}", dir->string(), ec.message())};
  for (auto& entry : listing) {
    if (entry.path().extension() != ".sock" || !entry.is_socket(ec))
      continue;
    auto answer = ask_control_socket(entry.path(), request, timeout_ms);
    // Nobody listens: its process ended without removing it (a SIGKILL). Gone
    // meanwhile: it ended as it should.
    if (!answer && answer.error().find(std::strerror(ECONNREFUSED)) != std::string::npos) {
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    if (!answer && answer.error().find(std::strerror(ENOENT)) != std::string::npos)
      continue;
    out.push_back(ControlAnswer{entry.path(), std::move(answer)});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.socket < b.socket; });
  return out;
}

} // namespace jp
