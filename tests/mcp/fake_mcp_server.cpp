// A small MCP server over stdio for the MCP client's tests (JSON-RPC 2.0, one message
// per line). Tools:
//   echo {text}           answers its text
//   fail {text}           answers its text as an error (isError)
//   wait {until, log, tick_ms}
//                         sends progress "waiting for UNTIL" (when given a token) and
//                         the log message "started waiting" (notifications/message),
//                         then progress "still waiting" each TICK_MS if given, and
//                         answers "done" once the file UNTIL exists; a
//                         notifications/cancelled for it is written to the file LOG
//                         ("cancelled ID") and the call is dropped, as MCP says
//   job {until, log}      only as a task (MCP 2025-11-25; the server declares tasks):
//                         tools/call answers with task "task-N", whose status
//                         message is "job waiting for UNTIL" and which completes
//                         with "job done" once the file UNTIL exists (tasks/get,
//                         tasks/result); tasks/cancel writes "task-cancelled
//                         task-N" to the file LOG
//   crash {}              writes "crashing" to stderr and exits with status 3
//   mute {}               writes "muted" to stderr, closes its stdout and runs on,
//                         answering nothing, until a signal ends it
//   shape {data, note}    answers its arguments as JSON (data: an object; note: anyOf
//                         a string or null)
//   query {filter[id], $top}
//                         answers its arguments as JSON: parameters named as web
//                         APIs name theirs, which Anthropic refuses as property names
//   retool {}             changes the tools: shout {text} (answers it in capitals)
//                         comes, fail and wait go, echo takes times (how often to
//                         say it) too; sends notifications/tools/list_changed, then
//                         answers "tools changed" (the server declares listChanged)
// With JP_FAKE_MCP_ENDLESS_PAGES set, tools/list pages without end (see there). With
// JP_FAKE_MCP_RELIST_FAILS set, tools/list after a `retool` answers an error.
// `--busy-lists FILE`: a server busy with its list, as some are: it says
// list_changed before answering initialize, `retool` says it 50 times before its
// answer, and each tools/list after the first pings the client and answers after the
// pong (the second 1.5 s after it); FILE gets how many tools/list came.
// `--retool-after FILE`: once FILE exists, the tools change as `retool` changes them,
// on their own (no call brought it), and notifications/tools/list_changed says so.
// `--refuse-restart FILE`: `crash` makes FILE, and a server started while it exists
// answers initialize with a version no client speaks (a start again that is refused).
// `fake_mcp_server --version V` answers initialize with protocol version V (else
// 2025-06-18). `fake_mcp_server --die` writes "cannot start: no config" to stderr and exits with
// status 3 before reading anything. With JP_FAKE_MCP_EOF set, the end of its stdin
// writes "read to the end" to that file before it exits. With JP_FAKE_MCP_REFUSED
// set, every message it refuses (a client's breach of JSON-RPC or MCP) is appended to
// that file too, which the tests check is empty: the refusal alone (an error reply,
// as a real server gives) could go unnoticed by a test that does not read it.
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "messages/json.hpp"
#include "mcp_message_rules.hpp"
#include "tests/program_assert.hpp"

using jp::Json;

namespace {

/// Whether a message the fake sends keeps JSON-RPC 2.0 itself: a client test
/// against a server that broke the protocol would prove nothing. A null id only on
/// an error that no request's id could be read for, as JSON-RPC has it; a response
/// holds a result or an error, not both.
bool well_formed(const Json& j) {
  auto* id = j.find("id");
  if (j.find("result") && j.find("error"))
    return false;
  if (id && id->is_null())
    return j.find("error") && !j.find("method") && j.find("jsonrpc") && j.find("jsonrpc")->is_string() &&
           j.find("jsonrpc")->as_string() == "2.0";
  return jp::testing::mcp_violation(j, true).empty();
}

void send(const Json& j) {
  PROGRAM_ASSERT(well_formed(j));
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

Json reply(const Json& id, Json result) {
  return Json::object().set("jsonrpc", "2.0").set("id", id).set("result", std::move(result));
}

Json rpc_error(const Json& id, int code, const std::string& message) {
  return Json::object().set("jsonrpc", "2.0").set("id", id).set(
    "error", Json::object().set("code", code).set("message", message));
}

Json text_result(const std::string& text, bool error = false) {
  auto content = Json::array();
  content.push(Json::object().set("type", "text").set("text", text));
  auto r = Json::object().set("content", std::move(content));
  if (error)
    r.set("isError", true);
  return r;
}

Json tool(const std::string& name, const std::string& description, Json properties, Json required) {
  return Json::object()
    .set("name", name)
    .set("description", description)
    .set("inputSchema",
         Json::object().set("type", "object").set("properties", std::move(properties)).set("required", std::move(required)));
}

/// The tools, before or after a `retool`.
Json tools_list(bool retooled) {
  auto text = Json::object().set("text", Json::object().set("type", "string").set("description", "What to say"));
  auto wait = Json::object()
                .set("until", Json::object().set("type", "string").set("description", "A file to wait for"))
                .set("log", Json::object().set("type", "string").set("description", "Where cancellations go"))
                .set("tick_ms", Json::object().set("type", "integer").set("description", "Progress this often"));
  auto tools = Json::array();
  auto echo = text;
  if (retooled)
    echo.set("times", Json::object().set("type", "integer").set("description", "How often to say it"));
  tools.push(tool("echo", "Says its text back.\nA second line of description.", echo,
                  Json::array().push(Json("text"))));
  if (retooled) {
    tools.push(tool("shout", "Says its text back in capitals", text, Json::array().push(Json("text"))));
  } else {
    tools.push(tool("fail", "Fails with its text", text, Json::array().push(Json("text"))));
    tools.push(tool("wait", "Waits for a file", wait, Json::array().push(Json("until"))));
  }
  tools.push(tool("retool", "Changes the tools", Json::object(), Json::array()));
  tools.push(tool("crash", "Exits", Json::object(), Json::array()));
  tools.push(tool("mute", "Closes its stdout and runs on", Json::object(), Json::array()));
  tools.push(tool("garble", "Answers with a line that is not JSON", Json::object(), Json::array()));
  tools.push(tool("batched", "Answers in a JSON-RPC batch (2025-03-26)", Json::object(), Json::array()));
  tools.push(tool("strid", "Answers under its id as a string", Json::object(), Json::array()));
  auto job = tool("job", "A job run as a task", wait, Json::array().push(Json("until")));
  job.set("execution", Json::object().set("taskSupport", "required"));
  tools.push(std::move(job));
  // An object parameter, and one whose type is in anyOf (as pydantic writes Optional).
  auto shape = Json::object()
                 .set("data", Json::object().set("type", "object").set("description", "Any object"))
                 .set("note", Json::object().set("anyOf", Json::array()
                                                            .push(Json::object().set("type", "string"))
                                                            .push(Json::object().set("type", "null"))));
  tools.push(tool("shape", "Says what it was given", shape, Json::array().push(Json("data"))));
  tools.push(tool("query", "Says what it was given",
                  Json::object()
                    .set("filter[id]", Json::object().set("type", "string"))
                    .set("$top", Json::object().set("type", "integer")),
                  Json::array().push(Json("filter[id]"))));
  tools.push(tool("mixed", "Answers with every kind of content", Json::object(), Json::array()));
  // What a flat parameter cannot say: a nested object's own fields, an enum of numbers.
  auto nested = Json::object()
                  .set("cfg", Json::object()
                                .set("type", "object")
                                .set("properties", Json::object().set("a", Json::object().set("type", "integer")))
                                .set("required", Json::array().push(Json("a"))))
                  .set("mode", Json::object().set("type", "integer").set("enum", Json::array().push(Json(int64_t{1})).push(Json(int64_t{2}))));
  tools.push(tool("nested", "Takes nested arguments", nested, Json::array().push(Json("cfg"))));
  return Json::object().set("tools", std::move(tools));
}

struct Waiting {
  Json id;
  std::string until;
  std::string log;
  Json token; // null: no progress asked for
  std::chrono::milliseconds tick{0};
  std::chrono::steady_clock::time_point next_tick;
};

Json progress(const Json& token, const std::string& message) {
  return Json::object()
    .set("jsonrpc", "2.0")
    .set("method", "notifications/progress")
    .set("params", Json::object().set("progressToken", token).set("progress", 0).set("message", message));
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string arg(const Json& args, const char* name) {
  auto* a = args.find(name);
  return a && a->is_string() ? a->as_string() : std::string();
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--die") {
    std::fprintf(stderr, "cannot start: no config\n");
    return 3;
  }
  std::string version = argc > 2 && std::string(argv[1]) == "--version" ? argv[2] : "2025-06-18";
  // --touch FILE: made at once (a start others wait on); --start-after FILE: initialize
  // is answered once FILE exists (a start that takes as long as another's).
  std::string start_after;
  std::string busy_lists; // --busy-lists FILE
  std::string refuse_restart; // --refuse-restart FILE: `crash` makes FILE; started with it, a bad version
  std::string tools_answer;   // --tools-list JSON: tools/list answered with this result, as it is
  std::string retool_after;   // --retool-after FILE
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--refuse-restart") {
      refuse_restart = argv[i + 1];
      if (std::ifstream(refuse_restart))
        version = "1999-01-01";
    }
    if (std::string(argv[i]) == "--touch")
      std::ofstream(argv[i + 1]) << "started\n";
    if (std::string(argv[i]) == "--start-after")
      start_after = argv[i + 1];
    if (std::string(argv[i]) == "--busy-lists")
      busy_lists = argv[i + 1];
    if (std::string(argv[i]) == "--tools-list")
      tools_answer = argv[i + 1];
    if (std::string(argv[i]) == "--retool-after")
      retool_after = argv[i + 1];
  }
  int lists = 0;        // tools/list requests so far
  Json list_after_pong; // the id of a tools/list answered once the client answers our ping
  auto list_changed = [] {
    send(Json::object().set("jsonrpc", "2.0").set("method", "notifications/tools/list_changed"));
  };
  std::map<std::string, Waiting> waiting; // by request id, dumped
  std::map<std::string, Waiting> jobs;    // tasks, by task id
  int next_task = 0;
  bool initialized = false;
  bool retooled = false; // tools/list answers the tools after `retool`
  auto task_json = [&](const std::string& task_id, const Waiting& w, const std::string& status) {
    return Json::object()
      .set("taskId", task_id)
      .set("status", status)
      .set("statusMessage", status == "completed" ? "job done" : "job waiting for " + w.until)
      .set("createdAt", "2026-11-26T00:00:00Z")
      .set("ttl", 60000)
      .set("pollInterval", 20);
  };
  std::string buffer;
  for (;;) {
    // Calls waiting for their file are answered as soon as it is there.
    for (auto it = waiting.begin(); it != waiting.end();) {
      auto& w = it->second;
      if (exists(w.until)) {
        send(reply(w.id, text_result("done")));
        it = waiting.erase(it);
        continue;
      }
      if (w.tick.count() && !w.token.is_null() && std::chrono::steady_clock::now() >= w.next_tick) {
        send(progress(w.token, "still waiting"));
        w.next_tick += w.tick;
      }
      ++it;
    }
    bool retool_due = !retool_after.empty() && !retooled;
    if (retool_due && exists(retool_after)) {
      retooled = true;
      list_changed();
      retool_due = false;
    }
    pollfd in{0, POLLIN, 0};
    if (::poll(&in, 1, waiting.empty() && !retool_due ? -1 : 10) <= 0)
      continue;
    char chunk[4096];
    auto n = ::read(0, chunk, sizeof chunk);
    if (n <= 0) { // the client closed our stdin
      if (const char* eof = std::getenv("JP_FAKE_MCP_EOF"))
        std::ofstream(eof) << "read to the end\n";
      return 0;
    }
    buffer.append(chunk, size_t(n));
    for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
      auto line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      auto msg = Json::parse(line);
      if (!msg) {
        send(rpc_error(Json(), -32700, "not JSON: " + msg.error()));
        continue;
      }
      if (auto why = jp::testing::mcp_violation(*msg, initialized); !why.empty()) {
        std::fprintf(stderr, "fake MCP server: refused %s: %s\n", line.c_str(), why.c_str());
        if (const char* refused = std::getenv("JP_FAKE_MCP_REFUSED"))
          std::ofstream(refused, std::ios::app) << "refused " << line << ": " << why << "\n";
        auto* bad_id = msg->is_object() ? msg->find("id") : nullptr;
        send(rpc_error(bad_id ? *bad_id : Json(), -32600, why));
        continue;
      }
      auto* method = msg->find("method");
      auto* id = msg->find("id");
      auto m = method && method->is_string() ? method->as_string() : "";
      if (!method && !list_after_pong.is_null()) { // the client's pong
        if (lists == 2) // the first list after the start: long enough to outlast a call's timeout
          ::poll(nullptr, 0, 1500);
        send(reply(list_after_pong, tools_list(retooled)));
        list_after_pong = Json();
        continue;
      }
      if (m == "initialize") {
        while (!start_after.empty() && !exists(start_after))
          ::poll(nullptr, 0, 10);
        initialized = true;
        if (!busy_lists.empty())
          list_changed();
        send(reply(*id, Json::object()
                          .set("protocolVersion", version)
                          .set("capabilities", Json::object()
                                                 .set("tools", Json::object().set("listChanged", true))
                                                 .set("tasks", Json::object().set(
                                                   "requests", Json::object().set(
                                                     "tools", Json::object().set("call", Json::object())))))
                          .set("serverInfo", Json::object().set("name", "fake").set("version", "1"))));
      } else if (m == "tools/list") {
        if (auto answer = Json::parse(tools_answer); !tools_answer.empty() && answer) {
          send(reply(*id, *answer));
          continue;
        }
        // JP_FAKE_MCP_ENDLESS_PAGES=FILE: every page names a next one, empty after
        // the first; how many were asked for goes to FILE. Past 1,000 it gives up
        // (exits), so that a client paging without end fails rather than hangs.
        if (const char* pages = std::getenv("JP_FAKE_MCP_ENDLESS_PAGES")) {
          static int asked = 0;
          std::ofstream(pages) << ++asked;
          if (asked > 1000)
            return 3;
          auto* params = msg->find("params");
          bool first = !(params && params->find("cursor"));
          auto page = first ? tools_list(retooled) : Json::object().set("tools", Json::array());
          send(reply(*id, page.set("nextCursor", "p" + std::to_string(asked))));
          continue;
        }
        if (retooled && std::getenv("JP_FAKE_MCP_RELIST_FAILS")) {
          send(rpc_error(*id, -32603, "the tool index is being rebuilt"));
          continue;
        }
        if (!busy_lists.empty()) {
          std::ofstream(busy_lists) << ++lists;
          if (lists > 1) {
            list_after_pong = *id;
            send(Json::object().set("jsonrpc", "2.0").set("id", "ping-" + std::to_string(lists)).set("method", "ping"));
            continue;
          }
        }
        send(reply(*id, tools_list(retooled)));
      } else if (m == "tasks/get" || m == "tasks/result" || m == "tasks/cancel") {
        auto* params = msg->find("params");
        auto* tid = params ? params->find("taskId") : nullptr;
        auto it = tid && tid->is_string() ? jobs.find(tid->as_string()) : jobs.end();
        if (it == jobs.end()) {
          send(Json::object().set("jsonrpc", "2.0").set("id", *id).set(
            "error", Json::object().set("code", -32602).set("message", "no such task")));
          continue;
        }
        bool done = exists(it->second.until);
        if (m == "tasks/get") {
          send(reply(*id, task_json(it->first, it->second, done ? "completed" : "working")));
        } else if (m == "tasks/result") {
          send(reply(*id, done ? text_result("job done") : text_result("not done yet", true)));
        } else {
          std::ofstream(it->second.log, std::ios::app) << "task-cancelled " << it->first << "\n";
          send(reply(*id, task_json(it->first, it->second, "cancelled")));
          jobs.erase(it);
        }
      } else if (m == "notifications/cancelled") {
        auto* params = msg->find("params");
        auto* rid = params ? params->find("requestId") : nullptr;
        if (!rid)
          continue;
        auto it = waiting.find(rid->dump());
        if (it != waiting.end()) {
          std::ofstream(it->second.log, std::ios::app) << "cancelled " << rid->dump() << "\n";
          waiting.erase(it);
        }
      } else if (m == "tools/call") {
        auto& params = *msg->find("params");
        auto name = params.find("name")->as_string();
        auto* a = params.find("arguments");
        Json args = a ? *a : Json::object();
        // A tool of the other list is not there to call.
        bool offered = !(retooled ? name == "fail" || name == "wait" : name == "shout");
        if (!offered) {
          send(Json::object().set("jsonrpc", "2.0").set("id", *id).set(
            "error", Json::object().set("code", -32602).set("message", "no longer a tool: " + name)));
        } else if (name == "echo") {
          auto* times = args.find("times");
          std::string said;
          for (int64_t i = 0; i < (times && times->is_int() ? times->as_int() : 1); ++i)
            said += arg(args, "text");
          send(reply(*id, text_result(said)));
        } else if (name == "shout") {
          auto said = arg(args, "text");
          for (auto& c : said)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          send(reply(*id, text_result(said)));
        } else if (name == "retool") {
          retooled = true;
          for (int i = 0, times = busy_lists.empty() ? 1 : 50; i < times; ++i)
            list_changed();
          send(reply(*id, text_result("tools changed")));
        } else if (name == "fail") {
          send(reply(*id, text_result(arg(args, "text"), true)));
        } else if (name == "wait") {
          auto* meta = params.find("_meta");
          Waiting w{*id, arg(args, "until"), arg(args, "log")};
          if (auto* token = meta ? meta->find("progressToken") : nullptr) {
            w.token = *token;
            send(progress(*token, "waiting for " + w.until));
          }
          send(Json::object()
                 .set("jsonrpc", "2.0")
                 .set("method", "notifications/message")
                 .set("params", Json::object().set("level", "info").set("logger", "fake").set("data", "started waiting")));
          if (auto* tick = args.find("tick_ms"); tick && tick->is_int()) {
            w.tick = std::chrono::milliseconds(tick->as_int());
            w.next_tick = std::chrono::steady_clock::now() + w.tick;
          }
          waiting[id->dump()] = std::move(w);
        } else if (name == "job") {
          if (!params.find("task")) {
            send(Json::object().set("jsonrpc", "2.0").set("id", *id).set(
              "error", Json::object().set("code", -32602).set("message", "job runs only as a task")));
            continue;
          }
          auto task_id = "task-" + std::to_string(++next_task);
          Waiting w{*id, arg(args, "until"), arg(args, "log")};
          send(reply(*id, Json::object().set("task", task_json(task_id, w, "working"))));
          jobs[task_id] = std::move(w);
        } else if (name == "shape" || name == "query") {
          send(reply(*id, text_result(args.dump())));
        } else if (name == "mixed") {
          auto item = [](const char* type) { return Json::object().set("type", type); };
          auto content = Json::array()
            .push(item("text").set("text", "plain"))
            .push(item("resource").set("resource", Json::object().set("uri", "file:///notes.md")
                                                      .set("mimeType", "text/markdown").set("text", "RESOURCE TEXT")))
            .push(item("resource").set("resource", Json::object().set("uri", "file:///logo.png")
                                                      .set("mimeType", "image/png").set("blob", "iVBORw0K")))
            .push(item("resource_link").set("uri", "file:///big.log").set("name", "big.log"))
            .push(item("image").set("mimeType", "image/png").set("data", "iVBORw0KGgo="));
          send(reply(*id, Json::object().set("content", std::move(content))));
        } else if (name == "batched") {
          auto batch = Json::array()
                         .push(Json::object()
                                 .set("jsonrpc", "2.0")
                                 .set("method", "notifications/message")
                                 .set("params", Json::object().set("level", "info").set("data", "batching")))
                         .push(reply(*id, text_result("answered in a batch")));
          std::printf("%s\n", batch.dump().c_str());
          std::fflush(stdout);
        } else if (name == "strid") {
          std::printf("%s\n", reply(Json(id->dump()), text_result("under a string id")).dump().c_str());
          std::fflush(stdout);
        } else if (name == "garble") {
          std::printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\": oops\n", id->dump().c_str());
          std::fflush(stdout);
        } else if (name == "mute") {
          std::fprintf(stderr, "muted\n");
          std::fflush(stdout);
          ::close(STDOUT_FILENO);
          for (;;)
            ::pause();
        } else if (name == "crash") {
          if (!refuse_restart.empty())
            std::ofstream(refuse_restart) << "crashed\n";
          std::fprintf(stderr, "crashing\n");
          return 3;
        } else {
          send(Json::object().set("jsonrpc", "2.0").set("id", *id).set(
            "error", Json::object().set("code", -32602).set("message", "unknown tool " + name)));
        }
      } else if (id) {
        send(Json::object().set("jsonrpc", "2.0").set("id", *id).set(
          "error", Json::object().set("code", -32601).set("message", "no method " + m)));
      }
    }
  }
}
