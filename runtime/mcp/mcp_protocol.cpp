#include "runtime/mcp/mcp_protocol.hpp"

#include "runtime/version.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "messages/json_number_range.hpp"
#include "messages/terminal_safe.hpp" // is_bidi_control
#include "tools/schema.hpp"

namespace jp::mcp {

std::string_view negotiate_version(std::string_view requested, bool over_http) {
  for (auto v : versions)
    if (v == requested && !(over_http && v < streamable_http_version)) // dates compare as text
      return v;
  return versions[0];
}

Result<std::string> requested_version(const Json* params) {
  auto* v = params && params->is_object() ? params->find("protocolVersion") : nullptr;
  if (!v || !v->is_string())
    return Error{fmt::format("initialize: `protocolVersion` is required, a string naming the protocol version the "
                             "client speaks (this server speaks {}); got {}",
                             fmt::join(versions, ", "), v ? cut_text(v->dump(), 40) : "none")};
  return v->as_string();
}

std::optional<Json> request_id(const Json& id) {
  if (id.is_string() || id.is_int())
    return id;
  // Below 2^63 in magnitude: the integer is exact, and fits.
  if (id.is_double() && std::floor(id.as_number()) == id.as_number() && std::fabs(id.as_number()) < 9.2e18)
    return Json(static_cast<int64_t>(id.as_number()));
  return std::nullopt;
}

std::string bad_id_message(const Json& id) {
  // A whole number past 2^63: an integer, but none this server can echo exactly.
  if (id.is_double() && std::floor(id.as_number()) == id.as_number() && std::isfinite(id.as_number()))
    return fmt::format("a request's integer `id` must be within a signed 64-bit integer's range (below about "
                       "9.2e18 in magnitude), got one of about {:.3g}: send it as a string",
                       id.as_number());
  return fmt::format("a request's `id` must be a string or an integer, got {}", cut_text(id.dump()));
}

Json response(const Json& id, Json result) {
  return Json::object().set("jsonrpc", "2.0").set("id", id).set("result", std::move(result));
}

Json error_response(const Json& id, int code, std::string message) {
  return Json::object().set("jsonrpc", "2.0").set("id", id).set(
    "error", Json::object().set("code", code).set("message", std::move(message)));
}

Json notification(std::string_view method, Json params) {
  return Json::object().set("jsonrpc", "2.0").set("method", method).set("params", std::move(params));
}

Json request(int64_t id, std::string_view method, Json params) {
  return notification(method, std::move(params)).set("id", id);
}

Json initialize_result(std::string_view requested_version, bool list_changes) {
  // What none of MCP's own task polling offers, said once for the client's model.
  static constexpr const char* how =
    "Tools with an `action` parameter are stateful: `spawn` starts work under an id you choose and answers "
    "once its output settles or it waits for input, within `wait_ms` (0: at once); `fetch` shows its output since the last look; `apply` types input into "
    "it; `abort` ends it. `await` waits for any or all of your handles -- processes and other calls alike "
    "-- with a timeout. Handles live for this MCP session: when it ends, what still runs is ended.";
  return Json::object()
    .set("protocolVersion", negotiate_version(requested_version))
    .set("capabilities", Json::object().set("tools", Json::object().set("listChanged", list_changes)))
    .set("serverInfo", Json::object().set("name", "jp-actors").set("version", version()))
    .set("instructions", how);
}

Json tools_list_result(const Config& config) {
  return Json::object().set("tools", tool_declarations(config, dialect::mcp));
}

Json call_tool_result(const CallResult& r) {
  JsonArray content{Json::object().set("type", "text").set("text", r.content)};
  for (auto& image : r.images) // a tool's images (its own MCP server's) go on to the client
    content.push_back(Json::object().set("type", "image").set("data", image.base64).set("mimeType", image.media_type));
  return Json::object().set("content", Json(std::move(content))).set("isError", !r.ok);
}

namespace {
constexpr const char* allow_yes = "yes";
constexpr const char* allow_session = "yes, for this session";
constexpr const char* allow_no = "no";
} // namespace

namespace {

/// `text` with each number the parser cannot hold (past 64 bits, past a double's
/// range) written as null, and the first of them; "" when there is none. Strings are
/// copied as they are: a number is only what stands outside them.
std::pair<std::string, std::string> wide_numbers_nulled(std::string_view text) {
  std::string out, first;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') {
      size_t end = i + 1;
      while (end < text.size() && text[end] != '"')
        end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c != '-' && !(c >= '0' && c <= '9')) {
      out += c;
      ++i;
      continue;
    }
    auto end = text.find_first_not_of("0123456789+-.eE", i);
    auto number = text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    i += number.size();
    bool whole = number.find_first_of(".eE") == std::string_view::npos;
    std::string digits(number);
    auto fits = [&] { // as far as the parser reads: -2^63 up to 2^64 - 1, a finite double
      errno = 0;
      if (!whole)
        return std::isfinite(std::strtod(digits.c_str(), nullptr));
      if (digits[0] == '-')
        std::strtoll(digits.c_str(), nullptr, 10);
      else
        std::strtoull(digits.c_str(), nullptr, 10);
      return errno != ERANGE;
    };
    if (fits()) {
      out.append(number);
      continue;
    }
    out += "null";
    if (first.empty())
      first = cut_text(digits, 40);
  }
  return {std::move(out), std::move(first)};
}

} // namespace

ParsedMessage parse_message(std::string_view text) {
  auto msg = Json::parse(text, duplicate_keys::refuse);
  if (msg)
    return {std::move(*msg)};
  // Only a refused message is parsed again, to tell which refusal it was.
  auto kept = Json::parse(text);
  if (!kept) {
    // Valid JSON with a number too wide for us: refused as a request, under its id
    // when it has one (its client waits on that), not as no JSON at all.
    auto [nulled, wide] = wide_numbers_nulled(text);
    if (!wide.empty())
      if (auto rest = Json::parse(nulled); rest && rest->is_object()) {
        ParsedMessage out{Json(), invalid_request,
                          fmt::format("the number {} is out of range: {}; send it as a string where it must be exact",
                                      wide, json_number_range)};
        if (auto* id = rest->find("id"))
          out.error_id = request_id(*id).value_or(Json());
        return out;
      }
    return {Json(), parse_error, "not JSON: " + msg.error()};
  }
  ParsedMessage out{Json(), invalid_request, msg.error()};
  if (kept->is_object()) {
    auto& fields = kept->as_object();
    if (std::count_if(fields.begin(), fields.end(), [](auto& kv) { return kv.first == "id"; }) == 1)
      out.error_id = request_id(*kept->find("id")).value_or(Json());
  }
  return out;
}

std::optional<std::string> wrong_jsonrpc(const Json& msg) {
  if (auto* version = msg.find("jsonrpc"); version && !(version->is_string() && version->as_string() == "2.0"))
    return fmt::format("\"jsonrpc\" must be \"2.0\", got {}", cut_text(version->dump(), 40));
  // Served as the request it names, a response's result or error was dropped unseen.
  if (msg.find("method") && (msg.find("result") || msg.find("error")))
    return std::string("a message is a request or a notification (`method`) or a response (`result` or "
                       "`error`), not both");
  return std::nullopt;
}

namespace {

// The arguments as the JSON they are, whole (a cut could hide what the call does in
// its tail), with the characters a client's display could act on written as \u
// escapes: DEL, the C1 controls and the bidirectional overrides and isolates, which would
// show the arguments in another order than they run. In a dump they only occur inside
// strings, where the escape means the same character.
std::string shown_arguments(const Json& args) {
  auto text = args.dump();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    auto b1 = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    auto b2 = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
    if (c == 0x7f) {
      out += "\\u007f";
    } else if (c == 0xC2 && b1 >= 0x80 && b1 <= 0x9f) {
      out += fmt::format("\\u{:04x}", b1);
      i += 1;
    } else if (c == 0xE2 && is_bidi_control(b1, b2)) {
      out += fmt::format("\\u{:04x}", ((c & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f));
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

} // namespace

Json permission_elicitation(const std::string& tool, const Json& args, const std::string& about) {
  auto allow = Json::object()
                 .set("type", "string")
                 .set("title", "Allow it?")
                 .set("enum", Json(JsonArray{Json(allow_yes), Json(allow_session), Json(allow_no)}));
  auto reason = Json::object()
                  .set("type", "string")
                  .set("title", "If not, why")
                  .set("description", "What the model is told");
  return Json::object()
    .set("message", fmt::format("The model wants to run `{}`{} with {}. Allow it?", tool,
                                about.empty() ? std::string() : " (" + about + ")", shown_arguments(args)))
    .set("requestedSchema", Json::object()
                              .set("type", "object")
                              .set("properties", Json::object().set("allow", std::move(allow)).set("reason", std::move(reason)))
                              .set("required", Json(JsonArray{Json("allow")})));
}

PermissionReply permission_from_elicitation(const Json& response) {
  // The client failed to ask (an error response): nobody said no.
  if (auto* error = response.find("error")) {
    auto* message = error->is_object() ? error->find("message") : nullptr;
    return {permission_answer::unasked,
            fmt::format("the MCP client answered elicitation/create with an error: {}",
                        message && message->is_string() ? cut_text(message->as_string(), 200)
                                                        : cut_text(error->dump(), 200))};
  }
  // An answer that is none the request asked for: the client failed to ask, and
  // nobody said no either (nothing runs all the same).
  auto malformed = [](std::string what) {
    return PermissionReply{permission_answer::unasked,
                           fmt::format("the MCP client's answer to elicitation/create is none the request asked for: {}",
                                       std::move(what))};
  };
  auto* result = response.find("result");
  if (!result || !result->is_object())
    return malformed(fmt::format("its result is {}, not an object with `action`", result ? cut_text(result->dump(), 200)
                                                                                         : std::string("missing")));
  auto* action = result->find("action");
  auto* content = result->find("content");
  if (!action || !action->is_string() ||
      (action->as_string() != "accept" && action->as_string() != "decline" && action->as_string() != "cancel"))
    return malformed(fmt::format("its action is {}, not accept, decline or cancel",
                                 action ? cut_text(action->dump(), 200) : std::string("missing")));
  if (action->as_string() != "accept")
    return {};
  auto* allow = content && content->is_object() ? content->find("allow") : nullptr;
  auto said = allow && allow->is_string() ? allow->as_string() : std::string();
  if (said == allow_yes)
    return {permission_answer::yes, {}};
  if (said == allow_session)
    return {permission_answer::yes_for_turn, {}};
  if (said != allow_no)
    return malformed(fmt::format("it accepted with content {}, whose `allow` is not \"{}\", \"{}\" or \"{}\"",
                                 content ? cut_text(content->dump(), 200) : std::string("missing"), allow_yes,
                                 allow_session, allow_no));
  auto* reason = content->find("reason");
  if (reason && reason->is_string() && !reason->as_string().empty())
    return {permission_answer::no_with_reason, reason->as_string()};
  return {};
}

} // namespace jp::mcp
