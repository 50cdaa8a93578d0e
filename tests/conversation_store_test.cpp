// The conversation store: events round-trip with a time added, the active id
// persists, the listing summarizes, and damaged files still load (a line torn by a
// crash or a corrupt line is dropped with a warning naming file and line).
#define CAF_SUITE conversation_store
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <future>
#include <sys/stat.h>
#include <regex>
#include <sstream>

#include "json_helpers.hpp"
#include "messages/conversation_event_codec.hpp"
#include "messages/tool_image.hpp"
#include "runtime/store/conversation_store.hpp"
#include "runtime/store/state_location.hpp"
#include "config/config.hpp"
#include "scoped_env.hpp"
#include "temp_dir.hpp"
#include "contains.hpp"

using namespace jp;

using jp::testing::contains;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void append_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::app) << text;
}

bool is_time(const std::string& text) {
  static const std::regex rfc3339(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
  return std::regex_match(text, rfc3339);
}

bool has_time(const Json& event) {
  auto* t = event.find("time");
  return t && t->is_string() && is_time(t->as_string());
}

/// The active id, or "<error>" (with the check failing) when it cannot be read.
std::string active_of(ConversationStore& store) {
  auto id = store.active();
  CAF_CHECK(id.ok());
  return id ? *id : "<error>";
}

/// Json compared as text, which the test framework can print.
std::string text_of(const Json& j) {
  return j.dump();
}

std::string text_of(const std::vector<Json>& events) {
  return Json(JsonArray(events)).dump();
}

/// The event as it was appended, before the store added its "time".
std::string without_time(Json event) {
  event.erase("time");
  return event.dump();
}

// Functions, not globals: testing::parse reports to the test that is running.
Json turn_start() {
  return testing::parse(R"({"event":"turn_start","prompt":"list the files"})");
}
Json chat_response() {
  return testing::parse(R"({"event":"chat_response","text":"ok","tool_calls":[]})");
}
Json turn_end() {
  return testing::parse(R"({"event":"turn_end","time":"2026-01-02T03:04:05.678Z"})");
}

/// What both stores must do: create, append, load back in order with times added.
void check_round_trip(ConversationStore& store) {
  auto id = store.create();
  CAF_REQUIRE(id.ok());
  CAF_CHECK(std::regex_match(*id, std::regex(R"(\d{8}-\d{6}-[0-9a-f]{4})")));
  for (auto& e : {turn_start(), chat_response(), turn_end()})
    CAF_REQUIRE(store.append(*id, e));
  auto loaded = store.load(*id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK(loaded->warnings.empty());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 3u);
  CAF_CHECK(has_time(loaded->events[0]));
  CAF_CHECK(has_time(loaded->events[1]));
  CAF_CHECK_EQUAL(without_time(loaded->events[0]), text_of(turn_start()));
  CAF_CHECK_EQUAL(without_time(loaded->events[1]), text_of(chat_response()));
  CAF_CHECK_EQUAL(text_of(loaded->events[2]), text_of(turn_end())); // a time given is kept
  // "time" comes right after "event", where a reader of the file looks.
  CAF_CHECK_EQUAL(loaded->events[0].as_object()[1].first, "time");

  auto unknown = store.append(*id, testing::parse(R"({"event":"chat","text":"x"})"));
  CAF_CHECK(!unknown);
  CAF_CHECK(contains(unknown.error, "unknown conversation event \"chat\""));
  CAF_CHECK(contains(unknown.error, "tool_call_request"));
  CAF_CHECK(!store.append(*id, Json("turn_start")));
  CAF_CHECK_EQUAL(store.load(*id)->events.size(), 3u);
}

void check_active(ConversationStore& store) {
  CAF_CHECK_EQUAL(active_of(store), "");
  auto id = store.create();
  CAF_REQUIRE(id.ok());
  CAF_CHECK_EQUAL(active_of(store), ""); // creating does not activate
  CAF_REQUIRE(store.set_active(*id));
  CAF_CHECK_EQUAL(active_of(store), *id);
  auto missing = store.set_active("20200101-000000-abcd");
  CAF_CHECK(!missing);
  CAF_CHECK(contains(missing.error, "20200101-000000-abcd"));
  CAF_CHECK_EQUAL(active_of(store), *id);
}

void check_bad_ids(ConversationStore& store) {
  for (std::string id : {"../../etc", "a/b", "", "20261122-061234-3F9A", "20261122-061234-3f9",
                         "20261122-061234-3f9a/..", "20261122_061234-3f9a"}) {
    auto loaded = store.load(id);
    CAF_REQUIRE(!loaded);
    CAF_CHECK(contains(loaded.error(), json_quote(id) + " is not a conversation id"));
    CAF_CHECK(contains(loaded.error(), "20261122-061234-3f9a"));
    auto appended = store.append(id, turn_start());
    CAF_CHECK(contains(appended.error, json_quote(id) + " is not a conversation id"));
    auto activated = store.set_active(id);
    CAF_CHECK(contains(activated.error, json_quote(id) + " is not a conversation id"));
  }
  // Of our shape but not there.
  auto loaded = store.load("20200101-000000-abcd");
  CAF_REQUIRE(!loaded);
  CAF_CHECK(contains(loaded.error(), "no conversation 20200101-000000-abcd"));
  CAF_CHECK(!store.append("20200101-000000-abcd", turn_start()));
}

} // namespace

CAF_TEST(events round trip with a time added and survive a new store) {
  testing::temp_dir tmp;
  auto root = (tmp.path / ".jp" / "conversations").string();
  FileConversationStore store(root);
  check_round_trip(store);

  auto ids = store.list();
  CAF_REQUIRE(ids.ok());
  CAF_REQUIRE_EQUAL(ids->size(), 1u);
  auto id = ids->front().id;
  // One object per line, each line whole.
  auto text = read_text(root + "/" + id + "/events.jsonl");
  CAF_CHECK_EQUAL(std::count(text.begin(), text.end(), '\n'), 3L);
  CAF_CHECK(text.starts_with(R"({"event":"turn_start","time":")"));
  CAF_CHECK(text.ends_with("\n"));

  FileConversationStore again(root);
  auto loaded = again.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK_EQUAL(text_of(loaded->events), text_of(store.load(id)->events));
}

CAF_TEST(the active id is set and persists across stores) {
  testing::temp_dir tmp;
  auto root = (tmp.path / "conversations").string();
  FileConversationStore store(root);
  check_active(store);
  auto id = active_of(store);
  CAF_CHECK_EQUAL(read_text(root + "/active"), id + "\n");
  FileConversationStore again(root);
  CAF_CHECK_EQUAL(active_of(again), id);
  auto missing = store.set_active("20200101-000000-abcd");
  CAF_CHECK(contains(missing.error, "jp-actors conversations ls"));
  // An active file naming a conversation that is gone: none is active.
  std::filesystem::remove_all(root + "/" + id);
  CAF_CHECK_EQUAL(active_of(again), "");
}

CAF_TEST(a conversation is readable by its owner alone) {
  // Prompts, attachments and whole tool outputs: as private as the spill files.
  testing::temp_dir tmp;
  auto old_mask = ::umask(022);
  FileConversationStore store((tmp.path / "conversations").string());
  auto id = store.create();
  ::umask(old_mask);
  CAF_REQUIRE(id.ok());
  CAF_REQUIRE(store.set_active(*id));
  auto root = tmp.path / "conversations";
  for (auto path : {root / *id, root / *id / "events.jsonl", root / "active"}) {
    struct stat st {};
    CAF_REQUIRE_EQUAL(::stat(path.c_str(), &st), 0);
    CAF_CHECK_EQUAL(st.st_mode & 077, 0u);
  }
}

CAF_TEST(a conversation an older version left open to others is closed to them when it is used) {
  testing::temp_dir tmp;
  auto root = tmp.path / "conversations";
  FileConversationStore store(root.string());
  auto id = store.create();
  CAF_REQUIRE(id.ok());
  ::chmod((root / *id).c_str(), 0755);
  ::chmod((root / *id / "events.jsonl").c_str(), 0644);
  CAF_REQUIRE(store.append(*id, Json::object().set("event", "turn_start").set("prompt", "hi")));
  for (auto path : {root / *id, root / *id / "events.jsonl"}) {
    struct stat st {};
    CAF_REQUIRE_EQUAL(::stat(path.c_str(), &st), 0);
    CAF_CHECK_EQUAL(st.st_mode & 077, 0u);
  }
}

CAF_TEST(a FIFO planted as the active file is refused without waiting for a writer) {
  testing::temp_dir tmp;
  auto root = (tmp.path / "conversations").string();
  std::filesystem::create_directories(root);
  CAF_REQUIRE_EQUAL(::mkfifo((root + "/active").c_str(), 0600), 0);
  FileConversationStore store(root);
  auto asked = std::async(std::launch::async, [&] { return store.active(); });
  if (asked.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    CAF_ERROR("active() blocked on the FIFO");
    std::_Exit(1); // its thread would keep the runner from ending
  }
  auto active = asked.get();
  CAF_REQUIRE(!active.ok());
  CAF_CHECK(contains(active.error(), "is not a conversation file of yours"));
}

CAF_TEST(list gives first prompts and counts sorted by id) {
  testing::temp_dir tmp;
  auto root = (tmp.path / "conversations").string();
  FileConversationStore store(root);
  CAF_CHECK(store.list()->empty()); // no root yet
  auto a = *store.create();
  auto b = *store.create();
  auto c = *store.create();
  std::string long_prompt = "explain\n\n  this   repository";
  for (int i = 0; i < 30; ++i)
    long_prompt += " é";
  CAF_REQUIRE(store.append(a, testing::parse(R"({"event":"system_notification","text":"hi"})")));
  CAF_REQUIRE(store.append(a, turn_start()));
  CAF_REQUIRE(store.append(a, turn_end()));
  Json long_start = Json::object();
  long_start.set("event", "turn_start").set("prompt", long_prompt);
  CAF_REQUIRE(store.append(b, long_start));
  CAF_REQUIRE(store.set_active(b));

  auto list = store.list();
  CAF_REQUIRE(list.ok());
  CAF_REQUIRE_EQUAL(list->size(), 3u);
  CAF_CHECK((*list)[0].id < (*list)[1].id && (*list)[1].id < (*list)[2].id);
  for (auto& info : *list) {
    CAF_CHECK(is_time(info.created));
    if (info.id == a) {
      CAF_CHECK_EQUAL(info.events, 3u);
      CAF_CHECK_EQUAL(info.first_prompt, "list the files");
      CAF_CHECK(!info.active);
      auto first = store.load(a)->events.front();
      CAF_CHECK_EQUAL(info.created, first.find("time")->as_string());
    } else if (info.id == b) {
      CAF_CHECK_EQUAL(info.events, 1u);
      CAF_CHECK(info.active);
      CAF_CHECK(info.first_prompt.starts_with("explain this repository é é"));
      CAF_CHECK(info.first_prompt.ends_with("…"));
      // 80 characters: 79 of the prompt and the ellipsis (é is 2 bytes).
      CAF_CHECK_EQUAL(info.first_prompt.size(), 23u + 28 * 3 + 3);
    } else {
      CAF_CHECK_EQUAL(info.id, c);
      CAF_CHECK_EQUAL(info.events, 0u);
      CAF_CHECK_EQUAL(info.first_prompt, "");
      CAF_CHECK(!info.active);
    }
  }
}

CAF_TEST(a torn last line is dropped with a warning and the next append starts fresh) {
  testing::temp_dir tmp;
  auto root = (tmp.path / "conversations").string();
  FileConversationStore store(root);
  auto id = *store.create();
  CAF_REQUIRE(store.append(id, turn_start()));
  CAF_REQUIRE(store.append(id, chat_response()));
  auto path = root + "/" + id + "/events.jsonl";
  // A crash in the middle of writing the third line (the store's file is open).
  append_text(path, R"({"event":"tool_call_request","na)");

  auto loaded = FileConversationStore(root).load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK_EQUAL(loaded->events.size(), 2u);
  CAF_REQUIRE_EQUAL(loaded->warnings.size(), 1u);
  auto& warning = loaded->warnings.front();
  CAF_CHECK(contains(warning, path + " line 3"));
  CAF_CHECK(contains(warning, "dropped"));

  CAF_REQUIRE(store.append(id, turn_end()));
  loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK(loaded->warnings.empty());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 3u);
  CAF_CHECK_EQUAL(text_of(loaded->events[2]), text_of(turn_end()));

  // The same through a store that opens the file fresh, torn without any newline.
  auto other = *store.create();
  auto other_path = root + "/" + other + "/events.jsonl";
  append_text(other_path, R"({"event":"turn_st)");
  FileConversationStore fresh(root);
  CAF_CHECK_EQUAL(fresh.load(other)->warnings.size(), 1u);
  CAF_REQUIRE(fresh.append(other, turn_start()));
  CAF_CHECK_EQUAL(read_text(other_path).find("turn_st\""), std::string::npos);
  loaded = fresh.load(other);
  CAF_CHECK(loaded->warnings.empty());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 1u);
  CAF_CHECK_EQUAL(without_time(loaded->events[0]), text_of(turn_start()));
}

CAF_TEST(a corrupt middle line is skipped with a warning and the rest kept) {
  testing::temp_dir tmp;
  auto root = (tmp.path / "conversations").string();
  FileConversationStore store(root);
  auto id = *store.create();
  CAF_REQUIRE(store.append(id, turn_start()));
  auto path = root + "/" + id + "/events.jsonl";
  append_text(path, "{\"event\":\"chat_resp" + std::string(2, '\0') + "garbage\n[1,2]\n");
  CAF_REQUIRE(store.append(id, chat_response()));
  append_text(path, "not json at all\n");

  auto loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 2u);
  CAF_CHECK_EQUAL(without_time(loaded->events[0]), text_of(turn_start()));
  CAF_CHECK_EQUAL(without_time(loaded->events[1]), text_of(chat_response()));
  CAF_REQUIRE_EQUAL(loaded->warnings.size(), 3u);
  CAF_CHECK(contains(loaded->warnings[0], path + " line 2: dropped a line that is not a valid event"));
  CAF_CHECK(contains(loaded->warnings[1], path + " line 3: dropped"));
  CAF_CHECK(contains(loaded->warnings[1], "\"event\" field"));
  CAF_CHECK(contains(loaded->warnings[2], path + " line 5: dropped the last line"));
}

CAF_TEST(bad ids are refused with a message naming them) {
  testing::temp_dir tmp;
  FileConversationStore store((tmp.path / "conversations").string());
  check_bad_ids(store);
  auto missing = store.load("20200101-000000-abcd");
  CAF_CHECK(contains(missing.error(), "jp-actors conversations ls"));
  CAF_CHECK(!tmp.has("etc"));
}

CAF_TEST(links planted in the workspace do not point the store at other files) {
  // The workspace is someone's repository: it may hold `.jp/conversations/active`
  // naming a conversation whose events.jsonl is a link to a file of yours, or links
  // at `.jp`, `conversations` or a conversation's directory. The store neither
  // appends to, cuts nor reads what they point at.
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto ws = tmp.path / "ws";
  auto victim = tmp.path / "victim.txt";
  const std::string precious = "precious\nno newline at the end";
  auto root = ws / ".jp" / "conversations";
  const std::string id = "20260101-000000-abcd";
  auto reset = [&] {
    fs::remove_all(ws);
    std::ofstream(victim) << precious;
    fs::create_directories(root);
  };
  auto untouched = [&] { return read_text(victim.string()) == precious; };
  Json event = testing::parse(R"({"event":"system_notification","text":"hi"})");

  reset(); // the conversation's file, a link
  fs::create_directories(root / id);
  fs::create_symlink(victim, root / id / "events.jsonl");
  std::ofstream(root / "active") << id << "\n";
  {
    FileConversationStore store(root.string(), ws.string());
    auto appended = store.append(id, event);
    CAF_CHECK(!appended);
    CAF_CHECK(contains(appended.error, "is a link"));
    CAF_CHECK(!store.load(id).ok());
    CAF_CHECK(untouched());
  }
  reset(); // a second name of it (a hard link)
  fs::create_directories(root / id);
  fs::create_hard_link(victim, root / id / "events.jsonl");
  {
    FileConversationStore store(root.string(), ws.string());
    auto appended = store.append(id, event);
    // Told how to keep its history (removing it lost it), as this user's own file.
    CAF_CHECK(contains(appended.error, "has another name (a hard link"));
    CAF_CHECK(contains(appended.error, "cp '" + (root / id / "events.jsonl").string() + "' '"));
    CAF_CHECK(untouched());
  }
  fs::remove(root / id / "events.jsonl");
  reset(); // the conversation's directory, a link
  fs::create_directories(tmp.path / "elsewhere");
  std::ofstream(tmp.path / "elsewhere" / "events.jsonl") << precious;
  fs::create_directory_symlink(tmp.path / "elsewhere", root / id);
  {
    FileConversationStore store(root.string(), ws.string());
    CAF_CHECK(contains(store.append(id, event).error, "is a link"));
    CAF_CHECK_EQUAL(read_text((tmp.path / "elsewhere" / "events.jsonl").string()), precious);
  }
  for (auto at : {ws / ".jp", root}) { // `.jp` or `conversations`, a link
    reset();
    fs::remove_all(at);
    fs::create_directories(tmp.path / "target");
    fs::create_directory_symlink(tmp.path / "target", at);
    FileConversationStore store(root.string(), ws.string());
    auto made = store.create();
    CAF_REQUIRE(!made.ok());
    CAF_CHECK(contains(made.error(), at.string() + " is a link"));
    CAF_CHECK(fs::is_empty(tmp.path / "target"));
    fs::remove(at);
    fs::remove_all(tmp.path / "target");
  }
  reset(); // `active`, a link: not read
  fs::create_symlink(victim, root / "active");
  {
    FileConversationStore store(root.string(), ws.string());
    CAF_CHECK(!store.active().ok());
    auto made = store.create(); // a new conversation made active replaces the link itself
    CAF_REQUIRE(made.ok());
    CAF_CHECK(store.set_active(*made));
    CAF_CHECK(!fs::is_symlink(root / "active"));
    CAF_CHECK(untouched());
  }
}

CAF_TEST(a conversation file too large to be one is refused without being read) {
  // Planted in the workspace (sparse: it takes no disk), it was read into memory
  // until that ran out, by `conversations ls` and `query` alike.
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto root = tmp.path / "ws" / ".jp" / "conversations";
  const std::string id = "20260101-000000-abcd";
  fs::create_directories(root / id);
  {
    std::ofstream(root / id / "events.jsonl") << R"({"event":"system_notification","text":"hi"})" << "\n";
  }
  fs::resize_file(root / id / "events.jsonl", 2ull << 30);
  FileConversationStore store(root.string(), (tmp.path / "ws").string());
  auto loaded = store.load(id);
  CAF_REQUIRE(!loaded.ok());
  CAF_CHECK(loaded.error().find("is larger than 256 MiB, more than a conversation holds: not read") !=
            std::string::npos);
  auto listed = store.list();
  CAF_REQUIRE(listed.ok());
  // Listed with why it was not read, and no memory spent on it.
  CAF_REQUIRE_EQUAL(listed->size(), 1u);
  CAF_CHECK_EQUAL((*listed)[0].events, 0u);
  CAF_CHECK((*listed)[0].first_prompt.find("(not read: ") == 0);
  CAF_CHECK((*listed)[0].first_prompt.find("larger than 256 MiB") != std::string::npos);
}

CAF_TEST(a conversation whose events are no file of ours is listed with why) {
  // A FIFO, a link (a workspace's plant): `show` refuses each, saying why; the
  // listing left them out and said there were no conversations.
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto root = tmp.path / "ws" / ".jp" / "conversations";
  fs::create_directories(root / "20260101-000000-abce");
  fs::create_directories(root / "20260101-000000-abcf");
  CAF_REQUIRE_EQUAL(::mkfifo((root / "20260101-000000-abce" / "events.jsonl").c_str(), 0600), 0);
  fs::create_symlink("/etc/passwd", root / "20260101-000000-abcf" / "events.jsonl");
  FileConversationStore store(root.string(), (tmp.path / "ws").string());
  auto listed = store.list();
  CAF_REQUIRE(listed.ok());
  CAF_REQUIRE_EQUAL(listed->size(), 2u);
  for (auto& c : *listed) {
    CAF_CHECK_EQUAL(c.events, 0u);
    CAF_MESSAGE(c.id << ": " << c.first_prompt);
    CAF_CHECK(c.first_prompt.find("(not read: ") == 0);
  }
  // Continuing the FIFO's says what it is, not that there is no such conversation.
  auto held = store.hold("20260101-000000-abce");
  CAF_REQUIRE(!held);
  CAF_CHECK(held.error().find("is not a conversation file of yours") != std::string::npos);
}

CAF_TEST(a conversation s created time is its first event s only when it reads as a time) {
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto root = tmp.path / "ws" / ".jp" / "conversations";
  fs::create_directories(root / "20260101-000000-abcd");
  fs::create_directories(root / "20260101-000000-abce");
  std::ofstream(root / "20260101-000000-abcd" / "events.jsonl")
    << R"({"event":"turn_start","time":"2026-01-01T00:00:00.000Z","prompt":"a"})" << "\n";
  std::ofstream(root / "20260101-000000-abce" / "events.jsonl")
    << R"({"event":"turn_start","time":"\u001b]0;PWNED\u0007","prompt":"b"})" << "\n";
  FileConversationStore store(root.string(), (tmp.path / "ws").string());
  auto listed = store.list();
  CAF_REQUIRE(listed.ok());
  CAF_REQUIRE_EQUAL(listed->size(), 2u);
  CAF_CHECK_EQUAL((*listed)[0].created, "2026-01-01T00:00:00.000Z");
  CAF_CHECK((*listed)[1].created.find("PWNED") == std::string::npos); // the directory's time
  CAF_CHECK(!(*listed)[1].created.empty());
}

namespace {

const std::string png = "iVBORw0KGgo=";  // the PNG signature
const std::string jpeg = "/9j/4AAQ";     // FF D8 FF E0 00 10

/// A tool's result with these images, as the turn records it.
Json result_with(const std::vector<std::pair<std::string, std::string>>& images) {
  auto list = Json::array();
  for (auto& [type, data] : images)
    list.push(Json::object().set("media_type", type).set("data", data));
  auto event = testing::parse(R"({"event":"tool_call_response","id":"c","name":"shot","ok":true,"content":"here"})");
  event.set("images", std::move(list));
  return event;
}

/// The data of the stored result's image `i` as loaded; "<none>" when it was not read.
std::string data_of(const Json& event, size_t i) {
  auto* images = event.find("images");
  if (!images || !images->is_array() || images->as_array().size() <= i)
    return "<no image>";
  auto* data = images->as_array()[i].find("data");
  return data && data->is_string() ? data->as_string() : "<none>";
}

} // namespace

/// A file store in a temporary directory, holding one conversation.
struct OneConversation {
  testing::temp_dir tmp;
  std::filesystem::path root = tmp.path / "conversations";
  FileConversationStore store{root.string()};
  std::string id = made(store);

  static std::string made(FileConversationStore& store) {
    auto id = store.create();
    CAF_REQUIRE(id.ok());
    return *id;
  }
};

CAF_TEST(a tool s images are kept beside the events and only the newest are read back) {
  // A long session of screenshots: in the file of events they reached its 256 MiB
  // and the conversation could no longer be continued.
  namespace fs = std::filesystem;
  OneConversation c;
  auto& [tmp, root, store, id] = c;
  CAF_REQUIRE(store.append(id, result_with({{"image/png", png}, {"image/jpeg", jpeg}})));
  auto text = read_text((root / id / "events.jsonl").string());
  CAF_CHECK(!contains(text, png));
  CAF_CHECK(contains(text, R"("media_type":"image/jpeg","file":")"));
  std::vector<std::string> kept;
  for (auto& file : fs::directory_iterator(root / id / "images")) {
    kept.push_back(read_text(file.path().string()));
    struct stat st {};
    CAF_REQUIRE_EQUAL(::stat(file.path().c_str(), &st), 0);
    CAF_CHECK_EQUAL(st.st_mode & 077, 0u); // as private as the events
  }
  std::sort(kept.begin(), kept.end());
  CAF_CHECK_EQUAL(kept, (std::vector<std::string>{jpeg, png}));
  auto loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK(loaded->warnings.empty());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 1u);
  CAF_CHECK_EQUAL(data_of(loaded->events[0], 0), png);
  CAF_CHECK_EQUAL(data_of(loaded->events[0], 1), jpeg);

  // Past what a request carries (the newest 20), the older are left unread.
  for (size_t i = 0; i + 1 < kRequestImagesMax; ++i)
    CAF_REQUIRE(store.append(id, result_with({{"image/png", png}})));
  auto later = FileConversationStore(root.string()).load(id);
  CAF_REQUIRE(later.ok());
  CAF_CHECK(later->warnings.empty());
  CAF_CHECK_EQUAL(data_of(later->events[0], 0), png);
  CAF_CHECK_EQUAL(data_of(later->events[0], 1), "<none>");
  CAF_CHECK_EQUAL(data_of(later->events.back(), 0), png);
  // Such an image reads as one the model is told was not sent again.
  auto event = conversation_event_from(later->events[0]);
  auto* response = event ? std::get_if<ToolCallResponseEvent>(&*event) : nullptr;
  CAF_REQUIRE(response != nullptr);
  CAF_REQUIRE_EQUAL(response->images.size(), 2u);
  CAF_CHECK_EQUAL(response->images[1].media_type, "image/jpeg");
  CAF_CHECK(response->images[1].base64.empty());
}

CAF_TEST(images an older version kept in the events still load) {
  OneConversation c;
  auto& [tmp, root, store, id] = c;
  append_text((root / id / "events.jsonl").string(), result_with({{"image/png", png}}).dump() + "\n");
  auto loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK_EQUAL(data_of(loaded->events[0], 0), png);
}

/// A tool_call_response naming image `file` (of `type`), as a line of events.jsonl.
std::string result_naming(const std::string& file, const std::string& type = "image/png") {
  return Json::object()
           .set("event", "tool_call_response")
           .set("id", "c")
           .set("name", "shot")
           .set("ok", true)
           .set("content", "here")
           .set("images", Json(JsonArray{Json::object().set("media_type", type).set("file", file)}))
           .dump() +
         "\n";
}

/// A sub-agent's tool result with an image, as its parent's conversation keeps it
/// ("agent": its path): never in a request of the parent's.
Json subagent_result() {
  auto event = result_with({{"image/png", png}});
  event.set("agent", "helper");
  return event;
}

std::string warnings_of(const LoadedConversation& loaded) {
  std::string out;
  for (auto& w : loaded.warnings)
    out += w + "\n";
  return out;
}

CAF_TEST(image files a workspace planted are not read) {
  // The workspace is someone's repository: its conversation may name any file, or
  // hold a link, a FIFO, a second name of a file of yours, or data the services
  // refuse (every later request would fail).
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto ws = tmp.path / "ws";
  auto root = ws / ".jp" / "conversations";
  const std::string id = "20260101-000000-abcd";
  auto images = root / id / "images";
  fs::create_directories(images);
  std::ofstream(tmp.path / "secret.b64") << png;
  fs::create_symlink(tmp.path / "secret.b64", images / "00000000000000aa.b64");
  std::ofstream(images / "00000000000000bb.b64") << "not an image";
  CAF_REQUIRE_EQUAL(::mkfifo((images / "00000000000000dd.b64").c_str(), 0600), 0);
  fs::create_hard_link(tmp.path / "secret.b64", images / "00000000000000ee.b64");
  std::ofstream(images / "00000000000000ff.b64") << png + std::string(kImageBase64Max, 'A');
  std::ofstream(images / "00000000000000cc.b64") << png;
  std::string events;
  for (auto file : {"00000000000000aa.b64", "00000000000000bb.b64", "00000000000000dd.b64", "00000000000000ee.b64",
                    "00000000000000ff.b64", "00000000000000cc.b64"})
    events += result_naming(file);
  std::ofstream(root / id / "events.jsonl") << events;
  FileConversationStore store(root.string(), ws.string());
  auto loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_REQUIRE_EQUAL(loaded->events.size(), 6u);
  for (size_t i = 0; i < 6; ++i)
    CAF_CHECK_EQUAL(data_of(loaded->events[i], 0), i == 5 ? png : "<none>"); // one of ours, as we write them
  auto warnings = warnings_of(*loaded);
  CAF_CHECK(contains(warnings, "00000000000000aa.b64 is a link"));
  CAF_CHECK(contains(warnings, "00000000000000bb.b64: its data is not base64"));
  CAF_CHECK(contains(warnings, "00000000000000dd.b64 is not a conversation file of yours"));
  CAF_CHECK(contains(warnings, "00000000000000ee.b64 is not a conversation file of yours"));
  CAF_CHECK(contains(warnings, "00000000000000ff.b64: the model is shown up to 5 MiB of it"));
  CAF_CHECK_EQUAL(loaded->warnings.size(), 5u);
  // A name of another shape, and inline data of the wrong type (as an older
  // jp-actors kept images); past the first five, the rest are counted.
  const std::string other = "20260101-000000-abce";
  fs::create_directories(root / other / "images");
  std::string more = result_naming("../../../../secret.b64") + result_with({{"image/png", jpeg}}).dump() + "\n";
  for (int i = 0; i < 5; ++i)
    more += result_naming(fmt::format("{:016x}.b64", i));
  std::ofstream(root / other / "events.jsonl") << more;
  auto told = store.load(other);
  CAF_REQUIRE(told.ok());
  auto said = warnings_of(*told);
  CAF_CHECK(!contains(said, "secret.b64"));
  CAF_CHECK(contains(said, "2 more images of " + other + " could not be read"));
  CAF_CHECK_EQUAL(told->warnings.size(), 6u);
  auto first = FileConversationStore(root.string(), ws.string());
  std::ofstream(root / other / "events.jsonl") << result_naming("../../../../secret.b64") +
                                                     result_with({{"image/png", jpeg}}).dump() + "\n";
  said = warnings_of(*first.load(other));
  CAF_CHECK(contains(said, "\"../../../../secret.b64\" is not the name of an image file jp-actors keeps"));
  CAF_CHECK(contains(said, "an image kept in " + (root / other / "events.jsonl").string() + ": its data is not image/png"));
  // A link at `images` itself is not followed either.
  fs::remove_all(images);
  fs::create_directories(tmp.path / "elsewhere");
  std::ofstream(tmp.path / "elsewhere" / "00000000000000cc.b64") << png;
  fs::create_directory_symlink(tmp.path / "elsewhere", images);
  auto linked = store.load(id);
  CAF_REQUIRE(linked.ok());
  CAF_CHECK_EQUAL(data_of(linked->events[5], 0), "<none>");
  // Nor is one made there by an append.
  auto appended = store.append(id, result_with({{"image/png", png}}));
  CAF_CHECK(!appended);
  CAF_CHECK(contains(appended.error, "cannot keep a tool's image"));
  CAF_CHECK_EQUAL(std::distance(fs::directory_iterator(tmp.path / "elsewhere"), fs::directory_iterator()), 1);
}

CAF_TEST(a conversation whose images are gone says so once and loads) {
  // Copied without its images/, or planted naming a great many: one warning, and
  // not one open per image.
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto root = tmp.path / "conversations";
  const std::string id = "20260101-000000-abcd";
  fs::create_directories(root / id);
  std::string events;
  for (int i = 0; i < 1000; ++i)
    events += result_naming(fmt::format("{:016x}.b64", i));
  std::ofstream(root / id / "events.jsonl") << events;
  auto loaded = FileConversationStore(root.string()).load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK_EQUAL(loaded->events.size(), 1000u);
  CAF_REQUIRE_EQUAL(loaded->warnings.size(), 1u);
  CAF_CHECK(contains(loaded->warnings[0], (root / id / "images").string() + ": No such file or directory"));
}

CAF_TEST(a load reads the images a request carries by their bytes too and none of a sub agent) {
  namespace fs = std::filesystem;
  OneConversation c;
  auto& [tmp, root, store, id] = c;
  // Four of 5 MiB: the newest three fit a request's 16 MiB.
  std::string big = "iVBORw0KGgoA" + std::string(kImageBase64Max - 12, 'A');
  for (int i = 0; i < 4; ++i)
    CAF_REQUIRE(store.append(id, result_with({{"image/png", big}})));
  CAF_REQUIRE(store.append(id, subagent_result())); // never read
  auto loaded = store.load(id);
  CAF_REQUIRE(loaded.ok());
  CAF_CHECK(loaded->warnings.empty());
  CAF_CHECK_EQUAL(data_of(loaded->events[0], 0), "<none>");
  for (size_t i = 1; i < 4; ++i)
    CAF_CHECK_EQUAL(data_of(loaded->events[i], 0).size(), big.size());
  CAF_CHECK_EQUAL(data_of(loaded->events[4], 0), "<none>");
}

CAF_TEST(the memory store keeps the data of the newest images only) {
  // As a long session does (embedding, a sub-agent's own conversation).
  MemoryConversationStore store;
  auto id = store.create();
  CAF_REQUIRE(id.ok());
  for (size_t i = 0; i < kRequestImagesMax + 2; ++i)
    CAF_REQUIRE(store.append(*id, result_with({{"image/png", png}})));
  CAF_REQUIRE(store.append(*id, subagent_result()));
  auto loaded = store.load(*id);
  CAF_REQUIRE(loaded.ok());
  for (size_t i = 0; i < loaded->events.size(); ++i)
    CAF_CHECK_EQUAL(data_of(loaded->events[i], 0), i < 2 || i == kRequestImagesMax + 2 ? "<none>" : png);
}

CAF_TEST(the memory store behaves the same) {
  MemoryConversationStore store;
  check_round_trip(store);
  check_active(store);
  check_bad_ids(store);
  auto list = store.list();
  CAF_REQUIRE(list.ok());
  CAF_REQUIRE_EQUAL(list->size(), 2u);
  CAF_CHECK((*list)[0].id < (*list)[1].id);
  size_t with_events = (*list)[0].events == 3 ? 0 : 1;
  CAF_CHECK_EQUAL((*list)[with_events].events, 3u);
  CAF_CHECK_EQUAL((*list)[with_events].first_prompt, "list the files");
  CAF_CHECK((*list)[1 - with_events].active);
}

CAF_TEST(a conversation is held by one process at a time and a planted in use file is refused) {
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto root = tmp.path / "ws" / ".jp" / "conversations";
  FileConversationStore store(root.string(), (tmp.path / "ws").string());
  auto id = store.create();
  CAF_REQUIRE(id.ok());
  {
    auto first = store.hold(*id);
    CAF_REQUIRE(first.ok());
    auto second = FileConversationStore(root.string()).hold(*id);
    CAF_REQUIRE(!second.ok());
    CAF_CHECK(contains(second.error(), "conversation " + *id + " is in use by another jp-actors"));
  }
  CAF_CHECK(store.hold(*id).ok()); // let go with the first
  // The workspace's: a link there is not followed, nor a second name of a file used.
  fs::remove(root / *id / "in-use");
  std::ofstream(tmp.path / "victim") << "precious";
  fs::create_symlink(tmp.path / "victim", root / *id / "in-use");
  auto linked = store.hold(*id);
  CAF_REQUIRE(!linked.ok());
  CAF_CHECK(contains(linked.error(), "is a link"));
  fs::remove(root / *id / "in-use");
  fs::create_hard_link(tmp.path / "victim", root / *id / "in-use");
  auto named = store.hold(*id);
  CAF_REQUIRE(!named.ok());
  CAF_CHECK(contains(named.error(), "not a conversation file of yours"));
  CAF_CHECK_EQUAL(read_text((tmp.path / "victim").string()), "precious");
}

CAF_TEST(a workspace whose state directory is a link keeps its state in the user s own place) {
  // The store refused to keep anything through the link, and the run failed, --new
  // or not; an unwritable .jp has been kept in the user's place all along.
  namespace fs = std::filesystem;
  testing::temp_dir tmp;
  auto ws = tmp.path / "ws";
  fs::create_directories(ws);
  fs::create_directories(tmp.path / "target");
  fs::create_directory_symlink(tmp.path / "target", ws / ".jp");
  auto state = (tmp.path / "state").string();
  testing::scoped_env state_home("XDG_STATE_HOME", state);
  Config config;
  config.workspace = ws.string();
  auto where = choose_state_location(config);
  CAF_CHECK(where.dir.starts_with(state + "/jp-actors/workspaces/ws-"));
  CAF_CHECK(contains(where.note, (ws / ".jp").string() + " is a link"));
  FileConversationStore store(where.dir + "/conversations", ws.string());
  CAF_CHECK(store.create().ok());
  CAF_CHECK(fs::is_empty(tmp.path / "target"));
}
