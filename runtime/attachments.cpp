#include "runtime/attachments.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "messages/json.hpp"

namespace jp {

namespace fs = std::filesystem;

namespace {

std::string size_text(uintmax_t bytes) {
  if (bytes < 1024)
    return fmt::format("{} bytes", bytes);
  if (bytes < (1u << 20))
    return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / 1048576.0);
}

/// A file name as one line of a listing: its control characters (a newline among
/// them) as `\xNN` and bytes that are not UTF-8 as U+FFFD, so a name cannot add lines.
std::string shown_name(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return sanitize_utf8(out);
}

/// `text` with the `<` of every `<attachment` and `</attachment` (any case) written
/// `&lt;`: what is attached cannot end its own block or fake another.
std::string without_tags(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') {
      auto rest = text.substr(i + 1);
      if (rest.starts_with('/'))
        rest.remove_prefix(1);
      constexpr std::string_view tag = "attachment";
      if (rest.size() >= tag.size() && std::equal(tag.begin(), tag.end(), rest.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
          })) {
        out += "&lt;";
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

/// A path as the value of the `path="..."` attribute.
std::string attribute(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (c == '"')
      out += "&quot;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("&#x{:x};", c);
    else
      out += static_cast<char>(c);
  }
  return sanitize_utf8(out);
}

/// A directory's entries below it, sorted, `.git` left out: "sub/", "sub/a.txt (12 bytes)".
Result<std::string> listing(const fs::path& dir, const std::string& shown, size_t max_entries) {
  std::vector<std::string> lines;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec)
    return Error{fmt::format("--attach {}: cannot list it: {}", shown, ec.message())};
  for (auto end = fs::recursive_directory_iterator(); it != end; it.increment(ec)) {
    if (ec)
      return Error{fmt::format("--attach {}: cannot list it: {}", shown, ec.message())};
    auto rel = it->path().lexically_relative(dir).string();
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (lines.size() == max_entries)
      return Error{fmt::format("--attach {}: the directory holds more than {} entries; attach a smaller one, "
                               "or the files themselves",
                               shown, max_entries)};
    rel = shown_name(rel);
    std::error_code size_ec;
    if (it->is_symlink(size_ec)) // neither followed nor sized: its target may be outside
      lines.push_back(rel + " (link)");
    else if (it->is_directory(size_ec))
      lines.push_back(rel + "/");
    else if (auto size = it->file_size(size_ec); !size_ec)
      lines.push_back(fmt::format("{} ({})", rel, size_text(size)));
    else
      lines.push_back(rel);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (auto& l : lines)
    out += l + "\n";
  return out;
}

/// Whether `path` is `base` or below it (both absolute and normal).
bool is_under(const fs::path& path, const fs::path& base) {
  auto [b, p] = std::mismatch(base.begin(), base.end(), path.begin(), path.end());
  return b == base.end() || (std::next(b) == base.end() && b->empty()); // "base/" ends in an empty part
}

/// Why a path typed into the current directory or the workspace may not be
/// attached: its links lead out of that directory, and a stranger's repository can
/// hold `notes.md -> ../.ssh/id_ed25519` (run from $HOME, `proj/notes.md` is in the
/// current directory and its target too). A path typed outside both (absolute, or
/// ../) is the user's own choice.
std::optional<std::string> leads_out(const fs::path& path, const std::string& shown, const std::string& workspace) {
  std::error_code ec;
  auto typed = fs::absolute(path, ec).lexically_normal();
  if (ec)
    return std::nullopt;
  std::optional<fs::path> real;
  auto check = [&](const fs::path& root, const std::string& what) -> std::optional<std::string> {
    std::error_code ec;
    auto real_root = fs::canonical(root, ec);
    if (ec || !(is_under(typed, root) || is_under(typed, real_root)))
      return std::nullopt;
    if (!real)
      real = fs::canonical(path, ec);
    if (ec || is_under(*real, real_root))
      return std::nullopt;
    return fmt::format("--attach {}: it leads out of {}, through a link, to {}; attach that path itself if you "
                       "mean it",
                       shown, what, real->string());
  };
  auto here = fs::current_path(ec);
  if (!ec)
    if (auto why = check(here, "the current directory"))
      return why;
  auto space = workspace.empty() ? fs::path() : fs::absolute(workspace, ec).lexically_normal();
  if (!space.empty())
    if (auto why = check(space, "the workspace"))
      return why;
  // Nor out of a repository it was typed into (run from $HOME without --workspace,
  // proj/notes.md -> ../.ssh/id_ed25519 stays in both): a directory below them that
  // holds .git.
  for (auto dir = typed.parent_path(); dir.has_relative_path(); dir = dir.parent_path()) {
    bool below = (!here.empty() && is_under(dir, here) && dir != here) || (!space.empty() && is_under(dir, space) && dir != space);
    if (!below)
      break;
    if (fs::exists(dir / ".git", ec))
      if (auto why = check(dir, fmt::format("the repository {}", dir.string())))
        return why;
  }
  return std::nullopt;
}

/// A regular file's text, read from one open of it (what the path names can change
/// between a look and a read) and never past `room` + 1 bytes.
Result<std::string> file_text(const fs::path& path, const std::string& shown, size_t room, size_t max_bytes) {
  // O_NONBLOCK: a FIFO put in its place must not block the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return Error{fmt::format("--attach {}: {}", shown, std::strerror(errno))};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Error{fmt::format("--attach {}: neither a file nor a directory", shown)};
  auto size = static_cast<uintmax_t>(st.st_size);
  if (size > room)
    return Error{fmt::format("--attach {}: it has {}, more than the {} the attachments may have together (what "
                             "is left: {}); attach a part of it instead",
                             shown, size_text(size), size_text(max_bytes), size_text(room))};
  std::string text;
  char buf[65536];
  for (;;) { // files in /proc say 0 bytes and hold more: the bound is what is read
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Error{fmt::format("--attach {}: cannot read it: {}", shown, std::strerror(errno))};
    if (n == 0)
      break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > room) // it grew while being read
      return Error{fmt::format("--attach {}: it grew past the {} the attachments may have", shown,
                               size_text(max_bytes))};
  }
  if (text.find('\0') != std::string::npos || sanitize_utf8(text) != text)
    return Error{fmt::format("--attach {}: a binary file (it is not UTF-8 text); only text can be attached",
                             shown)};
  return text;
}

} // namespace

Result<std::string> prompt_with_attachments(const std::string& prompt, const std::vector<std::string>& paths,
                                            const std::string& workspace, const AttachLimits& limits) {
  std::string out = prompt;
  size_t used = 0;
  for (auto& shown : paths) {
    fs::path path(shown);
    std::error_code ec;
    auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      return Error{fmt::format("--attach {}: no such file or directory", shown)};
    if (auto why = leads_out(path, shown, workspace))
      return Error{*why};
    std::string body;
    std::string kind;
    if (fs::is_directory(status)) {
      auto l = listing(path, shown, limits.max_entries);
      if (!l)
        return Error{l.error()};
      body = std::move(*l);
      kind = " kind=\"directory\"";
      if (body.size() > limits.max_bytes - used)
        return Error{fmt::format("--attach {}: its listing has {}, more than the {} the attachments may have "
                                 "together",
                                 shown, size_text(body.size()), size_text(limits.max_bytes))};
    } else if (fs::is_regular_file(status)) {
      auto t = file_text(path, shown, limits.max_bytes - used, limits.max_bytes);
      if (!t)
        return Error{t.error()};
      body = std::move(*t);
    } else {
      return Error{fmt::format("--attach {}: neither a file nor a directory", shown)};
    }
    used += body.size();
    if (!body.empty() && body.back() != '\n')
      body += "\n";
    out += fmt::format("\n\n<attachment path=\"{}\"{}>\n{}</attachment>", attribute(shown), kind,
                       without_tags(body));
  }
  return out;
}

} // namespace jp
