#include "runtime/store/conversation_store.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <random>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "messages/conversation_event_codec.hpp"
#include "messages/tool_image.hpp"
#include "runtime/process/private_file.hpp"
#include "runtime/provider/provider_images.hpp"
#include "runtime/store/subagent_store.hpp"
#include "runtime/store/workspace_link.hpp"

namespace jp {

namespace {

constexpr size_t kPromptChars = 80;

std::string rfc3339(std::chrono::system_clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = ms / 1000;
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms % 1000);
}

std::string now_text() {
  return rfc3339(std::chrono::system_clock::now());
}

/// "20261122-061234-3f9a": sorts by creation time; the digits tell apart
/// conversations started in the same second.
std::string new_id() {
  static thread_local std::mt19937 rng{std::random_device{}()};
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return fmt::format("{}-{:04x}", buf, rng() & 0xffff);
}

bool is_id(std::string_view id) {
  if (id.size() != 20)
    return false;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool ok = (i == 8 || i == 15) ? c == '-'
              : i < 15          ? c >= '0' && c <= '9'
                                : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!ok)
      return false;
  }
  return true;
}

// Ids become directory names: only our own shape, so never "..", "/" or a surprise.
Status check_id(const std::string& id) {
  if (is_id(id))
    return Status::success();
  return Status::fail(fmt::format(
    "{} is not a conversation id: ids look like 20261122-061234-3f9a (UTC time, then 4 hex "
    "digits); `jp-actors conversations ls` lists the existing ones",
    json_quote(id)));
}

std::string kinds_list() {
  std::string out;
  for (auto kind : conversation_event_kinds)
    out += (out.empty() ? "" : ", ") + std::string(kind);
  return out;
}

Status check_event(const Json& event) {
  const Json* kind = event.find("event");
  if (!kind || !kind->is_string())
    return Status::fail(fmt::format(
      "a conversation event must be a JSON object with an \"event\" field (one of {}), not {}",
      kinds_list(), event.dump().substr(0, 200)));
  if (std::find(conversation_event_kinds.begin(), conversation_event_kinds.end(), kind->as_string()) ==
      conversation_event_kinds.end())
    return Status::fail(fmt::format("unknown conversation event {}: expected one of {}",
                                    json_quote(kind->as_string()), kinds_list()));
  return Status::success();
}

/// `event` with a "time" (right after "event", where people reading the file look).
Json stamped(const Json& event) {
  Json out = event;
  if (out.find("time"))
    return out;
  auto& members = out.as_object();
  auto at = std::find_if(members.begin(), members.end(),
                         [](auto& m) { return m.first == "event"; });
  members.insert(at + 1, {"time", Json(now_text())});
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/// Byte offset where character number `n` (0-based) starts; size() when there is none.
size_t utf8_offset(std::string_view s, size_t n) {
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n-- == 0)
      return i;
  return s.size();
}

/// A prompt as one line of a listing: whitespace runs become one space, and
/// it is cut to kPromptChars characters (never inside a UTF-8 sequence).
std::string prompt_line(std::string_view prompt) {
  std::string flat;
  for (char c : prompt) {
    if (!is_space(c))
      flat += c;
    else if (!flat.empty() && flat.back() != ' ')
      flat += ' ';
  }
  if (!flat.empty() && flat.back() == ' ')
    flat.pop_back();
  if (utf8_offset(flat, kPromptChars) == flat.size())
    return flat;
  return flat.substr(0, utf8_offset(flat, kPromptChars - 1)) + "…";
}

/// Whether `text` can be an RFC 3339 time (digits and its separators, not too long).
bool looks_like_time(const std::string& text) {
  return !text.empty() && text.size() <= 40 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == ':' || c == 'T' || c == 'Z' || c == '.' || c == '+';
  });
}

ConversationInfo info_of(const std::string& id, const std::vector<Json>& events,
                         std::string created, bool active) {
  ConversationInfo info{id, std::move(created), events.size(), "", active};
  // The file is the workspace's (a stranger's repository): its "time" is taken only
  // when it reads as one, else the directory's time stands.
  if (!events.empty())
    if (auto* time = events.front().find("time"); time && time->is_string() && looks_like_time(time->as_string()))
      info.created = time->as_string();
  for (auto& e : events) {
    auto event = conversation_event_from(e);
    if (auto* start = event ? std::get_if<TurnStartEvent>(&*event) : nullptr) {
      info.first_prompt = prompt_line(start->prompt);
      break;
    }
  }
  return info;
}

/// The events of a file's text. A line only counts once its newline is written
/// (append writes it last, and reports success only after), so an unfinished last
/// line is an append a crash interrupted. Damaged lines are dropped with a warning.
LoadedConversation parse_events(const std::string& path, std::string_view text) {
  LoadedConversation out;
  size_t pos = 0;
  for (size_t line_no = 1; pos < text.size(); ++line_no) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      out.warnings.push_back(fmt::format(
        "{} line {}: dropped the last line: it has no newline, so a crash cut it short while "
        "it was written ({} bytes); the next append removes it",
        path, line_no, text.size() - pos));
      break;
    }
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (std::all_of(line.begin(), line.end(), is_space))
      continue;
    auto event = Json::parse(line);
    std::string problem;
    if (!event)
      problem = event.error();
    else if (auto* kind = event->find("event"); !kind || !kind->is_string())
      problem = "not a JSON object with an \"event\" field";
    if (problem.empty()) {
      out.events.push_back(std::move(*event));
      continue;
    }
    bool last = pos == text.size();
    out.warnings.push_back(fmt::format("{} line {}: dropped {}: {}", path, line_no,
                                       last ? "the last line (likely cut short by a crash)"
                                            : "a line that is not a valid event (the others are kept)",
                                       problem));
  }
  return out;
}

std::string errno_text() {
  return std::strerror(errno);
}

/// flock, retried when a signal interrupts the wait.
void lock(int fd, int op) {
  while (::flock(fd, op) < 0 && errno == EINTR) {
  }
}

/// fsync of a directory, so an entry just made in it survives a crash (best effort).
void sync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

/// All of `data` in as few write(2)s as the kernel allows (one, for a regular file).
Status write_all(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Status::fail(fmt::format("cannot write to {}: {}", path,
                                      n < 0 ? errno_text() : "nothing was written"));
    done += static_cast<size_t>(n);
  }
  return Status::success();
}

/// Where the file's whole lines end: just after its last newline (0 when it has none).
Result<off_t> whole_lines_end(int fd, off_t size, const std::string& path) {
  char buf[4096];
  for (off_t end = size; end > 0;) {
    off_t n = std::min<off_t>(end, sizeof buf);
    ssize_t got = ::pread(fd, buf, static_cast<size_t>(n), end - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got != n)
      return Error{fmt::format("cannot read the end of {}: {}", path,
                               got < 0 ? errno_text() : "it changed while being read")};
    for (off_t i = n; i > 0; --i)
      if (buf[i - 1] == '\n')
        return end - n + i;
    end -= n;
  }
  return off_t{0};
}

/// One event line onto the conversation file `fd` (O_APPEND), under its lock.
/// A tail a crash left unfinished is cut first, so the line starts on a line of its
/// own; only bytes after the last newline are cut, never a whole line, and the lock
/// keeps other writers out meanwhile. A failed write is cut back the same way.
Status append_line(int fd, const std::string& line, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) < 0)
    return Status::fail(fmt::format("cannot inspect {}: {}", path, errno_text()));
  auto end = whole_lines_end(fd, st.st_size, path);
  if (!end)
    return Status::fail(end.error());
  if (*end != st.st_size && ::ftruncate(fd, *end) < 0)
    return Status::fail(fmt::format("cannot cut the unfinished last line off {}: {}", path,
                                    errno_text()));
  if (auto written = write_all(fd, line, path); !written) {
    (void)::ftruncate(fd, *end);
    return written;
  }
  // Durable as it happens: the event survives a crash once append returns.
  if (::fdatasync(fd) < 0)
    return Status::fail(fmt::format("cannot flush {} to disk: {} (the last event may be lost on "
                                    "a crash)",
                                    path, errno_text()));
  return Status::success();
}

/// Opens `name` in `dirfd` (shown as `path`), a file of the store's: not through a
/// link at its name, and one of ours (made 0600 with O_CREAT in `flags`).
Result<int> open_own_at(int dirfd, const std::string& name, const std::string& path, int flags) {
  // O_NONBLOCK: a FIFO planted in the workspace must not block the open (refused
  // below as not a regular file); cleared again for what is read and written.
  int fd = ::openat(dirfd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600);
  if (fd < 0)
    return Error{errno == ELOOP ? fmt::format("{} is a link: conversations are not kept through a link "
                                              "(it could point at any file of yours); remove it",
                                              path)
                                : fmt::format("cannot open {}: {}", path, errno_text())};
  struct stat st {};
  if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_nlink != 1) {
    ::close(fd);
    // A second name of the user's own conversation (a backup made with cp -al) keeps
    // its history in a copy of its own; anything else is no conversation.
    if (S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink > 1 && path.ends_with("/events.jsonl"))
      return Error{fmt::format("{} has another name (a hard link: a backup made with cp -al or rsnapshot?), "
                               "which it would write too: not used; give it a copy of its own, which keeps "
                               "its history: cp '{}' '{}.own' && mv '{}.own' '{}'",
                               path, path, path, path, path)};
    return Error{fmt::format("{} is not a conversation file of yours (a regular file with no other "
                             "name): not used; remove it",
                             path)};
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (st.st_mode & 077) // made by an older jp-actors: its owner's alone from now on
    ::fchmod(fd, st.st_mode & 0700);
  return fd;
}

// -- a tool result's images: beside the events, each in a file of its own ----------

constexpr const char* kImagesDir = "images";

/// The images of a stored tool result (a tool_call_response's "images"); null for
/// any other event.
JsonArray* images_of(Json& event) {
  auto* kind = event.find("event");
  auto* images = event.find("images");
  if (!kind || !kind->is_string() || kind->as_string() != "tool_call_response" || !images || !images->is_array())
    return nullptr;
  return &images->as_array();
}

/// "3f9a0c1d2e3f4a5b.b64": the names image files are given, and the only ones read
/// (an event in a planted file could name any other).
bool is_image_file_name(std::string_view name) {
  return name.size() == 20 && name.ends_with(".b64") &&
         std::all_of(name.begin(), name.end() - 4, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// Keeps the data of the images a request of the conversation carries (NewestImages:
/// its newest, in its own events) and drops the others', so neither a long session
/// in memory nor a load holds more. `ready` readies an image within them to be
/// carried (the file store reads its file and checks it), or says it cannot be.
void keep_newest_image_data(std::vector<Json>& events, const std::function<bool(Json& image)>& ready) {
  NewestImages newest;
  for (auto e = events.rbegin(); e != events.rend(); ++e) {
    auto* images = images_of(*e);
    if (!images)
      continue;
    bool subagent = is_subagent_event(*e); // a sub-agent's never reach a request here
    for (auto& image : *images) {
      if (!image.is_object())
        continue;
      bool kept = !subagent && !newest.full() && ready(image);
      auto* data = kept ? image.find("data") : nullptr;
      if (!data || !data->is_string() || data->as_string().empty() || !newest.take(data->as_string().size()))
        image.erase("data");
    }
  }
}

} // namespace

// --- FileConversationStore --------------------------------------------------

FileConversationStore::~FileConversationStore() {
  close_appender();
}

Status FileConversationStore::unlinked(const std::string& id) const {
  // The workspace is someone's repository: a link it holds at `.jp`, at
  // `conversations` or at a conversation's directory must not point the store at
  // your files (it appends to them, and cuts a last unfinished line).
  std::string link = first_link_below(trusted_, root_);
  struct stat st {};
  if (link.empty() && !id.empty() && ::lstat(dir(id).c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    link = dir(id);
  if (!link.empty())
    return Status::fail(fmt::format("{} is a link: conversations are not kept through a link in the "
                                    "workspace (it could point at any file of yours); remove it",
                                    link));
  return Status::success();
}

Result<int> FileConversationStore::open_own(const std::string& path, int flags) const {
  return open_own_at(AT_FDCWD, path, path, flags);
}

// A conversation is a directory holding events.jsonl (a crash between the two
// steps of create() leaves a directory that is none).
mode_t FileConversationStore::events_mode(const std::string& id) const {
  // lstat: a link at either is none (the root's own path is checked by the callers).
  struct stat d {}, f {};
  return ::lstat(dir(id).c_str(), &d) == 0 && S_ISDIR(d.st_mode) && ::lstat(events_path(id).c_str(), &f) == 0
           ? f.st_mode
           : 0;
}

bool FileConversationStore::exists(const std::string& id) const {
  return S_ISREG(events_mode(id));
}

Result<std::string> FileConversationStore::create() {
  if (auto ok = unlinked(); !ok)
    return Error{ok.error};
  std::error_code ec;
  std::filesystem::create_directories(root_, ec);
  if (ec)
    return Error{fmt::format("cannot create {}: {}", root_, ec.message())};
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto id = new_id();
    // mkdir is the claim: two creators (even in two processes) never share an id.
    // Yours alone, as spill files are: prompts, attachments and tools' output.
    if (::mkdir(dir(id).c_str(), 0700) < 0) {
      if (errno == EEXIST)
        continue;
      return Error{fmt::format("cannot create {}: {}", dir(id), errno_text())};
    }
    int fd = ::open(events_path(id).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
      return Error{fmt::format("cannot create {}: {}", events_path(id), errno_text())};
    ::close(fd);
    sync_dir(dir(id));
    sync_dir(root_);
    return id;
  }
  return Error{fmt::format("cannot find a free conversation id in {} after 100 tries", root_)};
}

namespace {
// Far beyond a conversation's events (each output is capped, spills go elsewhere).
constexpr uint64_t kMaxConversationBytes = 256ull << 20;
} // namespace

Result<LoadedConversation> FileConversationStore::load(const std::string& id) {
  auto loaded = read_events(id);
  if (loaded)
    read_newest_images(id, *loaded);
  return loaded;
}

Result<LoadedConversation> FileConversationStore::read_events(const std::string& id) {
  if (auto valid = check_id(id); !valid)
    return Error{valid.error};
  if (auto ok = unlinked(id); !ok)
    return Error{ok.error};
  auto path = events_path(id);
  struct stat there {};
  if (::lstat(path.c_str(), &there) < 0 && errno == ENOENT)
    return Error{fmt::format("there is no conversation {} in {}; `jp-actors conversations ls` "
                             "lists the existing ones",
                             id, root_)};
  auto opened = open_own(path, O_RDONLY);
  if (!opened)
    return Error{opened.error()};
  int fd = *opened;
  // Shared lock: an append in progress elsewhere is waited for, not mistaken for a
  // line a crash cut short.
  lock(fd, LOCK_SH);
  // Read whole, so bounded: a file planted in the workspace (or grown past any
  // conversation's size) is refused, not read into memory until it runs out.
  auto too_large = [&] {
    ::close(fd);
    return Error{fmt::format("{} is larger than {} MiB, more than a conversation holds: not read (start a "
                             "new conversation, or remove it)",
                             path, kMaxConversationBytes >> 20)};
  };
  struct stat size {};
  if (::fstat(fd, &size) == 0 && static_cast<uint64_t>(size.st_size) > kMaxConversationBytes)
    return too_large();
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      auto err = errno_text();
      ::close(fd);
      return Error{fmt::format("cannot read {}: {}", path, err)};
    }
    if (text.size() + static_cast<size_t>(n) > kMaxConversationBytes)
      return too_large();
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return parse_events(path, text);
}

Result<std::vector<std::string>> FileConversationStore::put_images_aside(const std::string& id, Json& event) {
  std::vector<std::string> made;
  auto* images = images_of(event);
  if (!images)
    return made;
  std::optional<DirFd> dir;
  auto where = this->dir(id) + "/" + kImagesDir;
  auto fail = [&](Status why) -> Result<std::vector<std::string>> {
    remove_images(id, made);
    return Error{why.error};
  };
  for (auto& image : *images) {
    auto* data = image.is_object() ? image.find("data") : nullptr;
    if (!data || !data->is_string())
      continue;
    if (!dir) {
      auto opened = open_private_dir(this->dir(id), kImagesDir);
      if (!opened)
        return fail(Status::fail(fmt::format("cannot keep a tool's image: {}", opened.error())));
      dir = std::move(*opened);
      sync_dir(this->dir(id)); // `images` itself, made the first time
    }
    auto name = random_name_part() + ".b64";
    auto path = where + "/" + name;
    int fd = create_private_file(*dir, name);
    if (fd < 0)
      return fail(Status::fail(fmt::format("cannot create {}: {}", path, errno_text())));
    made.push_back(name);
    auto written = write_all(fd, data->as_string(), path);
    if (written && ::fdatasync(fd) < 0)
      written = Status::fail(fmt::format("cannot flush {} to disk: {}", path, errno_text()));
    ::close(fd);
    if (!written)
      return fail(written);
    image.erase("data");
    image.set("file", name);
  }
  // The files' names, before the event that names them.
  if (dir && ::fsync(dir->get()) < 0)
    return fail(Status::fail(fmt::format("cannot flush {} to disk: {}", where, errno_text())));
  return made;
}

void FileConversationStore::remove_images(const std::string& id, const std::vector<std::string>& names) const {
  for (auto& name : names)
    ::unlink((dir(id) + "/" + kImagesDir + "/" + name).c_str());
}

namespace {
// Warnings a load gives for images it cannot read, one each; the rest are counted.
constexpr size_t kUnreadImagesTold = 5;
} // namespace

void FileConversationStore::read_newest_images(const std::string& id, LoadedConversation& loaded) const {
  auto where = this->dir(id) + "/" + kImagesDir;
  std::optional<DirFd> dir;
  bool no_dir = false;
  size_t unread = 0;
  auto cannot = [&](const std::string& why) {
    if (++unread <= kUnreadImagesTold)
      loaded.warnings.push_back(why + "; the model is told this image was not sent");
    return false;
  };
  // At most as many tries as a request carries images, and as many again: a planted
  // conversation naming a million files is not a million opens.
  auto read = [&](Json& image) {
    auto type = std::string(image.string_at("media_type"));
    if (type.empty() || unread >= kRequestImagesMax * 2)
      return false;
    if (auto* data = image.find("data"); data && data->is_string()) { // kept in the line by an older jp-actors
      auto refused = image_refusal(type, data->as_string());
      return refused.empty() || cannot(fmt::format("an image kept in {}: {}", events_path(id), refused));
    }
    auto name = std::string(image.string_at("file"));
    if (!is_image_file_name(name))
      return cannot(fmt::format("{}: {} is not the name of an image file jp-actors keeps", where, json_quote(name)));
    if (!dir && !no_dir) {
      // Below a conversation directory that unlinked() checked: no link at `images`.
      int fd = ::open(where.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        no_dir = true;
        cannot(fmt::format("{}: {}", where, errno == ELOOP || errno == ENOTDIR ? "not a directory (a link?)" : errno_text()));
      } else {
        dir.emplace(fd);
      }
    }
    if (!dir)
      return false;
    auto path = where + "/" + name;
    auto opened = open_own_at(dir->get(), name, path, O_RDONLY);
    if (!opened)
      return cannot(opened.error());
    int fd = *opened;
    struct stat st {};
    auto size = ::fstat(fd, &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
    std::string text(std::min(size, kImageBase64Max + 1), '\0');
    ssize_t got;
    while ((got = ::pread(fd, text.data(), text.size(), 0)) < 0 && errno == EINTR) {
    }
    ::close(fd);
    if (got != static_cast<ssize_t>(text.size()))
      return cannot(fmt::format("{}: {}", path, got < 0 ? errno_text() : "it changed while being read"));
    // As a tool's result was checked: data the services refuse would fail every
    // later request of the conversation.
    if (auto refused = image_refusal(type, text); !refused.empty())
      return cannot(fmt::format("{}: {}", path, refused));
    image.set("data", std::move(text));
    return true;
  };
  keep_newest_image_data(loaded.events, read);
  if (unread > kUnreadImagesTold)
    loaded.warnings.push_back(fmt::format("{} more images of {} could not be read (the model is told they were "
                                          "not sent)",
                                          unread - kUnreadImagesTold, id));
}

Status FileConversationStore::open_for_append(const std::string& id) {
  if (fd_ >= 0 && open_id_ == id) {
    // Keep the open file unless the conversation was deleted meanwhile.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && st.st_nlink > 0)
      return Status::success();
  }
  close_appender();
  if (auto ok = unlinked(id); !ok)
    return ok;
  auto path = events_path(id);
  struct stat there {};
  if (::lstat(path.c_str(), &there) < 0 && errno == ENOENT)
    return Status::fail(fmt::format("there is no conversation {} in {}; `jp-actors "
                                    "conversations ls` lists the existing ones",
                                    id, root_));
  // Read access too: append_line reads the file's end to find an unfinished line.
  auto opened = open_own(path, O_RDWR | O_APPEND);
  if (!opened)
    return Status::fail(opened.error());
  // Its directory too, where an older jp-actors made it open to others (lstat: a
  // link there was refused by unlinked() already).
  if (struct stat d {}; ::lstat(dir(id).c_str(), &d) == 0 && S_ISDIR(d.st_mode) && d.st_uid == ::geteuid() &&
                        (d.st_mode & 077))
    ::chmod(dir(id).c_str(), d.st_mode & 0700);
  int fd = *opened;
  fd_ = fd;
  open_id_ = id;
  return Status::success();
}

void FileConversationStore::close_appender() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  open_id_.clear();
}

Status FileConversationStore::append(const std::string& id, const Json& event) {
  if (auto valid = check_id(id); !valid)
    return valid;
  if (auto valid = check_event(event); !valid)
    return valid;
  std::lock_guard<std::mutex> guard(mutex_);
  if (auto opened = open_for_append(id); !opened)
    return opened;
  auto stored = stamped(event);
  auto images = put_images_aside(id, stored);
  if (!images)
    return Status::fail(images.error());
  std::string line = stored.dump() + "\n";
  lock(fd_, LOCK_EX);
  auto status = append_line(fd_, line, events_path(id));
  ::flock(fd_, LOCK_UN);
  if (!status) {
    remove_images(id, *images); // no event names them
    close_appender(); // the next append starts over with a fresh descriptor
  }
  return status;
}

Result<std::vector<ConversationInfo>> FileConversationStore::list() {
  std::vector<ConversationInfo> out;
  if (auto ok = unlinked(); !ok)
    return Error{ok.error};
  std::error_code ec;
  if (!std::filesystem::exists(root_, ec))
    return out; // no conversation was ever created here
  std::vector<std::string> ids;
  for (std::filesystem::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    // Its events file of any kind: one that is no file of ours (a link, a FIFO) is
    // listed with why it is not read, as `show` says (left out, the listing said none).
    if (is_id(name) && events_mode(name) != 0)
      ids.push_back(name);
  }
  if (ec)
    return Error{fmt::format("cannot list {}: {}", root_, ec.message())};
  std::sort(ids.begin(), ids.end());
  // A broken active file must not hide the listing one would fix it with.
  auto current = active();
  std::string active_id = current ? *current : "";
  for (auto& id : ids) {
    auto loaded = read_events(id); // not its images: a listing shows none
    if (!loaded && events_mode(id) == 0)
      continue; // deleted meanwhile
    struct stat st {};
    std::string made;
    if (::stat(dir(id).c_str(), &st) == 0)
      made = rfc3339(std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec))));
    if (!loaded) {
      // Listed with why it cannot be read (one too large to be a conversation): a
      // listing that left it out said there were none.
      auto info = info_of(id, {}, made, id == active_id);
      auto why = loaded.error();
      if (why.starts_with(events_path(id) + " ")) // the line names the conversation already
        why.erase(0, events_path(id).size() + 1);
      info.first_prompt = "(not read: " + why + ")";
      out.push_back(std::move(info));
      continue;
    }
    out.push_back(info_of(id, loaded->events, made, id == active_id));
  }
  return out;
}

Result<std::string> FileConversationStore::active() {
  if (auto ok = unlinked(); !ok)
    return Error{ok.error};
  auto path = root_ + "/active";
  struct stat there {};
  if (::lstat(path.c_str(), &there) < 0 && errno == ENOENT)
    return std::string{};
  auto opened = open_own(path, O_RDONLY);
  if (!opened)
    return Error{opened.error()};
  int fd = *opened;
  char buf[128];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  ::close(fd);
  if (n < 0)
    return Error{fmt::format("cannot read {}: {}", path, errno_text())};
  std::string id(buf, static_cast<size_t>(n));
  while (!id.empty() && is_space(id.back()))
    id.pop_back();
  if (id.empty())
    return std::string{};
  if (auto valid = check_id(id); !valid)
    return Error{fmt::format("{} does not hold a conversation id: {}; make another "
                             "conversation active or remove the file",
                             path, valid.error)};
  return exists(id) ? id : std::string{};
}

Status FileConversationStore::set_active(const std::string& id) {
  if (auto valid = check_id(id); !valid)
    return valid;
  if (!exists(id))
    return Status::fail(fmt::format("there is no conversation {} in {}; `jp-actors conversations "
                                    "ls` lists the existing ones",
                                    id, root_));
  // Written aside and renamed over: a reader sees the old id or the new, never half.
  std::lock_guard<std::mutex> guard(mutex_); // one temporary file per process
  if (auto ok = unlinked(); !ok)
    return ok;
  auto path = root_ + "/active";
  // Anew under a name nobody can plant a link at beforehand (renamed over a link
  // at `active`, it replaces the link, not what it points at).
  auto temp = fmt::format("{}/.active.{}.{}.tmp", root_, ::getpid(), random_name_part());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::fail(fmt::format("cannot create {}: {}", temp, errno_text()));
  auto status = write_all(fd, id + "\n", temp);
  if (status && ::fdatasync(fd) < 0)
    status = Status::fail(fmt::format("cannot flush {} to disk: {}", temp, errno_text()));
  ::close(fd);
  if (status && ::rename(temp.c_str(), path.c_str()) < 0)
    status = Status::fail(fmt::format("cannot rename {} to {}: {}", temp, path, errno_text()));
  if (!status) {
    ::unlink(temp.c_str());
    return status;
  }
  sync_dir(root_);
  return Status::success();
}

Status FileConversationStore::known(const std::string& id) const {
  if (auto valid = check_id(id); !valid)
    return valid;
  if (auto ok = unlinked(id); !ok)
    return ok;
  auto mode = events_mode(id);
  if (mode != 0 && !S_ISREG(mode)) // listed by `ls` with why: said so here too, not "there is none"
    return Status::fail(fmt::format("{} is not a conversation file of yours (a regular file): not used; remove it",
                                    events_path(id)));
  if (mode == 0)
    return Status::fail(fmt::format("there is no conversation {} in {}; `jp-actors conversations ls` lists the "
                                    "existing ones",
                                    id, root_));
  return Status::success();
}

Result<ConversationHold> FileConversationStore::hold(const std::string& id) {
  if (auto there = known(id); !there)
    return Error{there.error};
  auto path = dir(id) + "/in-use";
  // Made if missing, never through a link; only locked, never written.
  auto opened = open_own_at(AT_FDCWD, path, path, O_RDONLY | O_CREAT);
  if (!opened)
    return Error{opened.error()};
  int fd = *opened;
  // Only another holder refuses: a file system without locks (some NFS, FUSE) holds
  // nothing, as the store's appends then lock nothing.
  if (::flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
    ::close(fd);
    return Error{fmt::format("conversation {} is in use by another jp-actors (a query still running in it); wait "
                             "for it to end, or ask in a new conversation with --new",
                             id)};
  }
  return ConversationHold(fd);
}

// --- MemoryConversationStore ------------------------------------------------

namespace {

Status missing_in_memory(const std::string& id) {
  return Status::fail(fmt::format("there is no conversation {} in this (in-memory) store", id));
}

} // namespace

Result<std::string> MemoryConversationStore::create() {
  std::lock_guard<std::mutex> guard(mutex_);
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto id = new_id();
    if (conversations_.emplace(id, Conversation{now_text(), {}}).second)
      return id;
  }
  return Error{"cannot find a free conversation id in memory after 100 tries"};
}

Result<LoadedConversation> MemoryConversationStore::load(const std::string& id) {
  if (auto valid = check_id(id); !valid)
    return Error{valid.error};
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = conversations_.find(id);
  if (it == conversations_.end())
    return Error{missing_in_memory(id).error};
  return LoadedConversation{it->second.events, {}};
}

Status MemoryConversationStore::append(const std::string& id, const Json& event) {
  if (auto valid = check_id(id); !valid)
    return valid;
  if (auto valid = check_event(event); !valid)
    return valid;
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = conversations_.find(id);
  if (it == conversations_.end())
    return missing_in_memory(id);
  it->second.events.push_back(stamped(event));
  if (images_of(it->second.events.back()))
    keep_newest_image_data(it->second.events, [](Json&) { return true; }); // checked as the tool answered
  return Status::success();
}

Result<std::vector<ConversationInfo>> MemoryConversationStore::list() {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<ConversationInfo> out;
  for (auto& [id, c] : conversations_)
    out.push_back(info_of(id, c.events, c.created, id == active_));
  return out;
}

Result<std::string> MemoryConversationStore::active() {
  std::lock_guard<std::mutex> guard(mutex_);
  return active_;
}

Status MemoryConversationStore::set_active(const std::string& id) {
  if (auto valid = check_id(id); !valid)
    return valid;
  std::lock_guard<std::mutex> guard(mutex_);
  if (!conversations_.count(id))
    return missing_in_memory(id);
  active_ = id;
  return Status::success();
}

std::string now_rfc3339() {
  return now_text();
}

} // namespace jp
