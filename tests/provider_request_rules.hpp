// What the real services refuse, for the fake provider (fake_provider_server.hpp) and
// for schema tests: the rules of api.openai.com's Chat Completions, Anthropic's
// Messages API and Gemini's function declarations that our requests could break,
// each answered with the service's own error wording and body shape (HTTP 400).
// Written from the services' documentation and the errors users report, not from our
// own request code, so that a test fails when our requests stop fitting.
#pragma once

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "messages/json.hpp"

namespace jp::testing {

/// One refused request: the message the service answers with, and for openai the
/// `param` and `code` of its error object; the HTTP status it comes with. `raw`: what
/// the model's own service said, where OpenRouter refuses on its behalf (message
/// "Provider returned error", the words in error.metadata.raw).
struct Violation {
  std::string message;
  std::string param;
  std::string code;
  int status = 400;
  std::string raw;
};

namespace rules_detail {

inline const Json* member(const Json& j, std::string_view key) {
  return j.is_object() ? j.find(key) : nullptr;
}

inline std::string string_of(const Json& j, std::string_view key) {
  auto* v = member(j, key);
  return v && v->is_string() ? v->as_string() : std::string();
}

/// Tool names both OpenAI and Anthropic take.
inline bool valid_tool_name(const std::string& name) {
  static const std::regex pattern("^[a-zA-Z0-9_-]{1,64}$");
  return std::regex_match(name, pattern);
}

/// Where a JSON-schema object has an array without `items` ("" = nowhere); `context`
/// in OpenAI's words, e.g. "('properties', 'any')".
inline std::optional<std::string> array_without_items(const Json& schema, const std::string& context) {
  if (!schema.is_object())
    return std::nullopt;
  auto* type = member(schema, "type");
  bool array = type && ((type->is_string() && type->as_string() == "array") ||
                        (type->is_array() && std::any_of(type->as_array().begin(), type->as_array().end(),
                                                         [](const Json& t) { return t.is_string() && t.as_string() == "array"; })));
  if (array && !member(schema, "items"))
    return context;
  for (auto& [key, value] : schema.as_object()) {
    if (key == "properties" && value.is_object()) {
      for (auto& [name, sub] : value.as_object())
        if (auto at = array_without_items(sub, fmt::format("('properties', '{}')", name)))
          return at;
    } else if (key == "items" || key == "oneOf" || key == "anyOf" || key == "allOf") {
      if (value.is_array()) {
        for (auto& sub : value.as_array())
          if (auto at = array_without_items(sub, fmt::format("('{}', ...)", key)))
            return at;
      } else if (auto at = array_without_items(value, fmt::format("('{}',)", key))) {
        return at;
      }
    }
  }
  return std::nullopt;
}

/// Where a JSON-schema object (a function's `parameters`) has a `$ref` that names
/// nothing in `root`, or a `properties` entry that is not a schema; the reason in
/// OpenAI's words ("" = nowhere).
inline std::optional<std::string> unresolved_schema(const Json& schema, const Json& root) {
  if (!schema.is_object())
    return std::nullopt;
  if (auto* ref = member(schema, "$ref")) {
    // Only a pointer into this document: "#" or "#/a/b" (~0 and ~1 escapes).
    const Json* at = ref->is_string() && (ref->as_string() == "#" || ref->as_string().starts_with("#/")) ? &root
                                                                                                       : nullptr;
    std::string path = at ? ref->as_string().substr(1) : "";
    while (at && !path.empty()) {
      auto end = path.find('/', 1);
      auto token = path.substr(1, end == std::string::npos ? std::string::npos : end - 1);
      path = end == std::string::npos ? "" : path.substr(end);
      for (auto [from, to] : {std::pair{"~1", "/"}, std::pair{"~0", "~"}})
        for (size_t i; (i = token.find(from)) != std::string::npos;)
          token.replace(i, 2, to);
      at = member(*at, token);
    }
    if (!at)
      return fmt::format("reference {} can't be resolved", ref->is_string() ? ref->as_string() : ref->dump());
  }
  for (auto& [key, value] : schema.as_object()) {
    if (key == "enum" || key == "const" || key == "default" || key == "examples")
      continue;
    if (key == "properties" && value.is_object()) {
      for (auto& [name, sub] : value.as_object()) {
        if (!sub.is_object() && !sub.is_bool())
          return fmt::format("In context=('properties', '{}'), {} is not of type 'object', 'boolean'", name,
                             sub.dump());
        if (auto at = unresolved_schema(sub, root))
          return at;
      }
    } else if (value.is_array()) {
      for (auto& sub : value.as_array())
        if (auto at = unresolved_schema(sub, root))
          return at;
    } else if (auto at = unresolved_schema(value, root)) {
      return at;
    }
  }
  return std::nullopt;
}

/// OpenAI's reasoning models (o1, o3, o4 series, gpt-5*), which refuse `max_tokens`.
inline bool openai_reasoning_model(std::string model) {
  model = model.substr(model.rfind('/') == std::string::npos ? 0 : model.rfind('/') + 1);
  static const std::regex pattern("^(o[134]|gpt-5)([-._].*)?$");
  return std::regex_match(model, pattern);
}

/// Whether an assistant message with calls carries, as OpenRouter wants it for
/// Gemini 3, a thought signature in its reasoning_details: a reasoning.encrypted entry
/// with data, naming one of the message's calls by its id or naming none.
inline bool openrouter_signature(const Json& message) {
  auto* details = member(message, "reasoning_details");
  auto* calls = member(message, "tool_calls");
  if (!details || !details->is_array() || !calls || !calls->is_array())
    return false;
  return std::any_of(details->as_array().begin(), details->as_array().end(), [&](const Json& d) {
    auto* id = member(d, "id");
    bool names_a_call = !id || id->is_null() ||
                        std::any_of(calls->as_array().begin(), calls->as_array().end(),
                                    [&](const Json& c) { return id->is_string() && string_of(c, "id") == id->as_string(); });
    return string_of(d, "type") == "reasoning.encrypted" && !string_of(d, "data").empty() && names_a_call;
  });
}

/// An image's media type both APIs take.
inline bool image_media_type(std::string_view type) {
  return type == "image/png" || type == "image/jpeg" || type == "image/gif" || type == "image/webp";
}

/// What api.openai.com refuses of message `i`'s content parts: images anywhere but in
/// a user message, an image URL that is neither http(s) nor a base64 data URL of an
/// image type, a part of a type it does not know.
inline std::optional<Violation> openai_content_violation(const Json& message, size_t i) {
  auto* content = member(message, "content");
  if (!content || !content->is_array())
    return std::nullopt;
  auto role = string_of(message, "role");
  for (size_t k = 0; k < content->as_array().size(); ++k) {
    auto& part = content->as_array()[k];
    auto type = string_of(part, "type");
    if (type == "text")
      continue;
    if (type != "image_url")
      return Violation{fmt::format("Invalid value: '{}'. Supported values are: 'text', 'image_url', "
                                   "'input_audio', 'refusal', 'audio', and 'file'.",
                                   type),
                       fmt::format("messages[{}].content[{}].type", i, k), "invalid_value"};
    if (role != "user")
      return Violation{fmt::format("Invalid 'messages[{}]'. Image URLs are only allowed for messages with role "
                                   "'user', but this message with role '{}' contains an image URL.",
                                   i, role),
                       fmt::format("messages[{}]", i), "invalid_value"};
    auto* image = member(part, "image_url");
    auto url = image ? string_of(*image, "url") : std::string();
    auto comma = url.find(";base64,");
    bool data = url.starts_with("data:") && comma != std::string::npos &&
                image_media_type(std::string_view(url).substr(5, comma - 5)) && url.size() > comma + 8;
    if (!data && !url.starts_with("https://") && !url.starts_with("http://"))
      return Violation{fmt::format("Invalid image URL: 'messages[{}].content[{}].image_url.url'. Expected a "
                                   "base64-encoded data URL with an image MIME type (e.g. "
                                   "'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an invalid value.",
                                   i, k),
                       fmt::format("messages[{}].content[{}].image_url.url", i, k), "invalid_value"};
  }
  return std::nullopt;
}

/// What Anthropic refuses of an image block at `at`: a source other than base64
/// data of an image type it takes.
inline std::optional<Violation> anthropic_image_violation(const Json& block, const std::string& at) {
  auto* source = member(block, "source");
  if (!source || string_of(*source, "type") != "base64")
    return Violation{fmt::format("{}.image.source: Input tag found using 'type' does not match any of the expected "
                                 "tags: 'base64', 'url', 'file'",
                                 at)};
  if (!image_media_type(string_of(*source, "media_type")))
    return Violation{fmt::format("{}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                                 "'image/gif' or 'image/webp'",
                                 at)};
  if (string_of(*source, "data").empty())
    return Violation{fmt::format("{}.image.source.base64.data: image cannot be empty", at)};
  return std::nullopt;
}

} // namespace rules_detail

/// The tools of a Chat Completions request (`tools` array), as api.openai.com checks
/// them (non-strict function calling).
inline std::optional<Violation> openai_tools_violation(const Json& tools) {
  using namespace rules_detail;
  if (!tools.is_array())
    return Violation{"Invalid type for 'tools': expected an array.", "tools", "invalid_type"};
  if (tools.as_array().empty())
    return Violation{"Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty "
                     "array instead.",
                     "tools", "empty_array"};
  for (size_t i = 0; i < tools.as_array().size(); ++i) {
    auto& tool = tools.as_array()[i];
    auto* fn = member(tool, "function");
    if (string_of(tool, "type") != "function" || !fn || !fn->is_object())
      return Violation{fmt::format("Missing required parameter: 'tools[{}].function'.", i),
                       fmt::format("tools[{}].function", i), "missing_required_parameter"};
    auto name = string_of(*fn, "name");
    if (!valid_tool_name(name))
      return Violation{fmt::format("Invalid 'tools[{}].function.name': string does not match pattern. Expected a "
                                   "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                                   i),
                       fmt::format("tools[{}].function.name", i), "invalid_value"};
    if (auto description = string_of(*fn, "description"); description.size() > 1024)
      return Violation{fmt::format("Invalid 'tools[{}].function.description': string too long. Expected a string "
                                   "with maximum length 1024, but got a string with length {} instead.",
                                   i, description.size()),
                       fmt::format("tools[{}].function.description", i), "string_above_max_length"};
    auto* params = member(*fn, "parameters");
    if (!params)
      continue; // a function without parameters
    bool flat = params->is_object() && string_of(*params, "type") == "object";
    for (auto key : {"oneOf", "anyOf", "allOf", "enum", "const", "not"})
      flat = flat && !member(*params, key);
    if (!flat)
      return Violation{fmt::format("Invalid schema for function '{}': schema must have type 'object' and not have "
                                   "'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level.",
                                   name),
                       fmt::format("tools[{}].function.parameters", i), "invalid_function_parameters"};
    if (auto why = unresolved_schema(*params, *params))
      return Violation{fmt::format("Invalid schema for function '{}': {}.", name, *why),
                       fmt::format("tools[{}].function.parameters", i), "invalid_function_parameters"};
    if (auto at = array_without_items(*params, "()"))
      return Violation{fmt::format("Invalid schema for function '{}': In context={}, array schema missing items.",
                                   name, *at),
                       fmt::format("tools[{}].function.parameters", i), "invalid_function_parameters"};
  }
  return std::nullopt;
}

/// What the other services behind the same API (known by their models' names) refuse
/// of a Chat Completions body beyond what api.openai.com does: DeepSeek's thinking
/// mode wants each response's reasoning back with its calls, Gemini 3 each step's
/// thought signature with its first call (on OpenRouter, google/gemini-3*: in the
/// message's reasoning_details, a reasoning.encrypted entry naming one of its calls
/// or none), Mistral no stream_options and only ids of nine letters and digits.
inline std::optional<Violation> compatible_service_violation(const Json& body) {
  using namespace rules_detail;
  auto model = string_of(body, "model");
  bool deepseek_thinking = model == "deepseek-reasoner";
  bool gemini3 = model.starts_with("gemini-3");
  bool openrouter_gemini3 = model.starts_with("google/gemini-3");
  bool mistral = model.starts_with("mistral") || model.starts_with("devstral") || model.starts_with("codestral");
  // Ollama (its models are NAME:TAG) reads each earlier call's arguments into an
  // object, as vLLM does: text that is none fails the request.
  bool ollama = model.find(':') != std::string::npos;
  if (mistral && member(body, "stream_options"))
    return Violation{"Extra inputs are not permitted: stream_options", "stream_options", "extra_forbidden"};
  auto* messages = member(body, "messages");
  if (!messages || !messages->is_array())
    return std::nullopt;
  static const std::regex mistral_id("^[a-zA-Z0-9]{9}$");
  auto& msgs = messages->as_array();
  // DeepSeek's thinking mode: every assistant message of a user turn in which tools
  // were called (its calls' and its answer's) carries its reasoning back.
  bool tool_turn = false;
  for (size_t i = 0; i < msgs.size(); ++i) {
    auto* calls = member(msgs[i], "tool_calls");
    auto role = string_of(msgs[i], "role");
    if (role == "user")
      tool_turn = false;
    if (calls && calls->is_array() && !calls->as_array().empty())
      tool_turn = true;
    if (auto* reasoning = member(msgs[i], "reasoning_content");
        deepseek_thinking && role == "assistant" && tool_turn && (!reasoning || !reasoning->is_string()))
      return Violation{fmt::format("Missing `reasoning_content` field in the assistant message at message index {}",
                                   i),
                       "", "invalid_request_error"};
    if (mistral && i > 0 && string_of(msgs[i], "role") == "user" && string_of(msgs[i - 1], "role") == "tool")
      return Violation{"Unexpected role 'user' after role 'tool'", "", "3230"};
    if (mistral && i > 0 && role == "assistant" && string_of(msgs[i - 1], "role") == "assistant")
      return Violation{"Unexpected role 'assistant' after role 'assistant'", "", "invalid_request_message_order"};
    if (mistral && string_of(msgs[i], "role") == "tool" &&
        !std::regex_match(string_of(msgs[i], "tool_call_id"), mistral_id))
      return Violation{fmt::format("Tool call id was {} but must be a-z, A-Z, 0-9, with a length of 9.",
                                   string_of(msgs[i], "tool_call_id")),
                       "", "3280"};
    if (!calls || !calls->is_array() || calls->as_array().empty())
      continue;
    if (ollama)
      for (auto& c : calls->as_array()) {
        auto* function = c.is_object() ? member(c, "function") : nullptr;
        auto args = function && function->is_object() ? Json::parse(string_of(*function, "arguments"))
                                                       : Result<Json>(Error{""});
        if (!args || !args->is_object())
          return Violation{"invalid tool call arguments", "", ""};
      }
    auto& first = calls->as_array().front();
    auto* extra = member(first, "extra_content");
    auto* google = extra && extra->is_object() ? member(*extra, "google") : nullptr;
    auto* signature = google && google->is_object() ? member(*google, "thought_signature") : nullptr;
    if (openrouter_gemini3 && !openrouter_signature(msgs[i])) {
      Violation v{"Provider returned error", "", "400"};
      v.raw = fmt::format(
        "Gemini models require OpenRouter reasoning details to be preserved in each request. Please refer to our "
        "docs: https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks. "
        "Upstream error: {{\n  \"error\": {{\n    \"code\": 400,\n    \"message\": \"Function call is missing a "
        "thought_signature in functionCall parts. This is required for tools to work correctly, and missing "
        "thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , "
        "position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more "
        "details.\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }}\n}}\n",
        first.is_object() && member(first, "function") ? string_of(*member(first, "function"), "name") : std::string(),
        i + 1);
      return v;
    }
    if (gemini3 && (!signature || !signature->is_string()))
      return Violation{fmt::format("Function call is missing a thought_signature in functionCall parts. This is "
                                   "required for tools to work correctly. Additional data, function call "
                                   "`default_api:{}`, position {}.",
                                   first.is_object() && member(first, "function")
                                     ? string_of(*member(first, "function"), "name")
                                     : std::string(),
                                   i + 1),
                       "", "INVALID_ARGUMENT"};
    if (mistral)
      for (auto& c : calls->as_array())
        if (!std::regex_match(string_of(c, "id"), mistral_id))
          return Violation{fmt::format("Tool call id was {} but must be a-z, A-Z, 0-9, with a length of 9.",
                                       string_of(c, "id")),
                           "", "3280"};
  }
  return std::nullopt;
}

/// A POST /v1/chat/completions body, as api.openai.com checks it (and the services
/// compatible_service_violation knows).
inline std::optional<Violation> openai_request_violation(const Json& body) {
  using namespace rules_detail;
  if (!body.is_object())
    return Violation{"We could not parse the JSON body of your request.", "", ""};
  if (string_of(body, "model").empty())
    return Violation{"you must provide a model parameter", "", ""};
  if (auto v = compatible_service_violation(body))
    return v;
  if (member(body, "max_tokens") && openai_reasoning_model(string_of(body, "model")))
    return Violation{"Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                     "'max_completion_tokens' instead.",
                     "max_tokens", "unsupported_parameter"};
  if (auto* options = member(body, "stream_options")) {
    auto* stream = member(body, "stream");
    if (!stream || !stream->is_bool() || !stream->as_bool())
      return Violation{"The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options",
                       "invalid_value"};
    auto* usage = options->is_object() ? member(*options, "include_usage") : nullptr;
    if (!options->is_object() || (usage && !usage->is_bool()))
      return Violation{"Invalid type for 'stream_options.include_usage': expected a boolean.",
                       "stream_options.include_usage", "invalid_type"};
  }
  if (auto* tools = member(body, "tools"))
    if (auto v = openai_tools_violation(*tools))
      return v;
  auto* messages = member(body, "messages");
  if (!messages || !messages->is_array() || messages->as_array().empty())
    return Violation{"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
                     "array instead.",
                     "messages", "empty_array"};
  auto& msgs = messages->as_array();
  // Every assistant tool call is answered by one `tool` message right after it.
  std::vector<std::string> open;         // calls of the last assistant message not yet answered
  std::set<std::string> answerable;      // ids a tool message may answer now
  size_t open_at = 0;                    // the assistant message they belong to
  for (size_t i = 0; i < msgs.size(); ++i) {
    auto role = string_of(msgs[i], "role");
    if (auto v = openai_content_violation(msgs[i], i))
      return v;
    if (role == "tool") {
      auto id = string_of(msgs[i], "tool_call_id");
      if (!answerable.erase(id))
        return Violation{"Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                         "message with 'tool_calls'.",
                         fmt::format("messages.[{}].role", i), ""};
      std::erase(open, id);
      continue;
    }
    if (!open.empty()) {
      std::string ids;
      for (auto& id : open)
        ids += (ids.empty() ? "" : ", ") + id;
      return Violation{fmt::format("An assistant message with 'tool_calls' must be followed by tool messages "
                                   "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                   "response messages: {}",
                                   ids),
                       fmt::format("messages.[{}].role", open_at), ""};
    }
    answerable.clear();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant")
      return Violation{fmt::format("Invalid value: '{}'. Supported values are: 'system', 'assistant', 'user', "
                                   "'tool', 'function', and 'developer'.",
                                   role),
                       fmt::format("messages[{}].role", i), "invalid_value"};
    if (auto* calls = member(msgs[i], "tool_calls"); calls && calls->is_array())
      for (size_t k = 0; k < calls->as_array().size(); ++k) {
        auto& c = calls->as_array()[k];
        if (auto id = string_of(c, "id"); id.size() > 40)
          return Violation{fmt::format("Invalid 'messages[{}].tool_calls[{}].id': string too long. Expected a string "
                                       "with maximum length 40, but got a string with length {} instead.",
                                       i, k, id.size()),
                           fmt::format("messages[{}].tool_calls[{}].id", i, k), "string_above_max_length"};
        open.push_back(string_of(c, "id"));
        answerable.insert(string_of(c, "id"));
        open_at = i;
      }
  }
  if (!open.empty()) {
    std::string ids;
    for (auto& id : open)
      ids += (ids.empty() ? "" : ", ") + id;
    return Violation{fmt::format("An assistant message with 'tool_calls' must be followed by tool messages "
                                 "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                 "response messages: {}",
                                 ids),
                     fmt::format("messages.[{}].role", open_at), ""};
  }
  return std::nullopt;
}

/// A POST /v1/messages body, as Anthropic's Messages API checks it.
inline std::optional<Violation> anthropic_request_violation(const Json& body) {
  using namespace rules_detail;
  if (!body.is_object())
    return Violation{"There was an error parsing the body of your request."};
  if (string_of(body, "model").empty())
    return Violation{"model: Field required"};
  // The system prompt: a string, or text blocks; cache_control only as the API knows
  // it, on at most four blocks anywhere.
  if (auto* system = member(body, "system"); system && !system->is_string()) {
    if (!system->is_array())
      return Violation{"system: Input should be a valid list"};
    for (size_t k = 0; k < system->as_array().size(); ++k)
      if (string_of(system->as_array()[k], "type") != "text")
        return Violation{fmt::format("system.{}.type: Input should be 'text'", k)};
  }
  size_t breakpoints = 0;
  std::optional<Violation> bad_cache;
  std::function<void(const Json&, const std::string&)> walk = [&](const Json& j, const std::string& at) {
    if (j.is_array()) {
      for (size_t k = 0; k < j.as_array().size(); ++k)
        walk(j.as_array()[k], fmt::format("{}.{}", at, k));
      return;
    }
    if (!j.is_object())
      return;
    if (auto* cc = member(j, "cache_control")) {
      ++breakpoints;
      auto type = cc->is_object() ? string_of(*cc, "type") : std::string();
      if (type != "ephemeral" && !bad_cache)
        bad_cache = Violation{fmt::format("{}.cache_control.type: Input should be 'ephemeral'", at)};
    }
    for (auto key : {"system", "messages", "content", "tools"})
      if (auto* sub = member(j, key))
        walk(*sub, at.empty() ? key : fmt::format("{}.{}", at, key));
  };
  walk(body, "");
  if (bad_cache)
    return bad_cache;
  if (breakpoints > 4)
    return Violation{fmt::format("A maximum of 4 blocks with cache_control may be provided. Found {}.", breakpoints)};
  auto* max_tokens = member(body, "max_tokens");
  if (!max_tokens)
    return Violation{"max_tokens: Field required"};
  if (!max_tokens->is_int() || max_tokens->as_int() < 1)
    return Violation{"max_tokens: Input should be greater than or equal to 1"};
  if (auto* tools = member(body, "tools")) {
    if (!tools->is_array())
      return Violation{"tools: Input should be a valid list"};
    for (size_t i = 0; i < tools->as_array().size(); ++i) {
      auto& tool = tools->as_array()[i];
      if (!valid_tool_name(string_of(tool, "name")))
        return Violation{fmt::format("tools.{}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'", i)};
      auto* schema = member(tool, "input_schema");
      if (!schema || !schema->is_object())
        return Violation{fmt::format("tools.{}.custom.input_schema: Field required", i)};
      if (string_of(*schema, "type") != "object")
        return Violation{fmt::format("tools.{}.custom.input_schema.type: Input should be 'object'", i)};
      for (auto key : {"oneOf", "allOf", "anyOf"})
        if (member(*schema, key))
          return Violation{fmt::format("tools.{}.custom.input_schema: input_schema does not support oneOf, allOf, or "
                                       "anyOf at the top level",
                                       i)};
      // Its own properties' names only: a nested object's are not checked.
      static const std::regex property_key("^[a-zA-Z0-9_.-]{1,64}$");
      if (auto* props = member(*schema, "properties"); props && props->is_object())
        for (auto& [key, value] : props->as_object())
          if (!std::regex_match(key, property_key))
            return Violation{fmt::format("tools.{}.custom.input_schema.properties: Property keys should match "
                                         "pattern '^[a-zA-Z0-9_.-]{{1,64}}$'",
                                         i)};
    }
  }
  auto* messages = member(body, "messages");
  if (!messages || !messages->is_array())
    return Violation{"messages: Field required"};
  auto& msgs = messages->as_array();
  if (msgs.empty())
    return Violation{"messages: at least one message is required"};
  std::vector<std::string> pending; // tool_use ids the next message must answer
  // DeepSeek's Anthropic API thinks: a message with calls carries its thinking back
  // first, as it came, signature and all.
  bool deepseek = string_of(body, "model").starts_with("deepseek");
  for (size_t i = 0; i < msgs.size(); ++i) {
    auto role = string_of(msgs[i], "role");
    if (auto* content = member(msgs[i], "content"); deepseek && role == "assistant" && content && content->is_array()) {
      auto& blocks = content->as_array();
      bool calls = std::any_of(blocks.begin(), blocks.end(), [](auto& b) { return string_of(b, "type") == "tool_use"; });
      bool thought = !blocks.empty() && string_of(blocks.front(), "type") == "thinking" &&
                     !string_of(blocks.front(), "signature").empty();
      if (calls && !thought)
        return Violation{"The `content[].thinking` in the thinking mode must be passed back to the API."};
    }
    if (role != "user" && role != "assistant")
      return Violation{fmt::format("messages.{}.role: Input should be 'user' or 'assistant'", i)};
    if (i == 0 && role != "user")
      return Violation{"messages: first message must use the \"user\" role"};
    if (i > 0 && role == string_of(msgs[i - 1], "role"))
      return Violation{fmt::format("messages: roles must alternate between \"user\" and \"assistant\", but found "
                                   "multiple \"{}\" roles in a row",
                                   role)};
    auto* content = member(msgs[i], "content");
    JsonArray blocks;
    if (content && content->is_string())
      blocks.push_back(JsonObject{{"type", "text"}, {"text", content->as_string()}});
    else if (content && content->is_array())
      blocks = content->as_array();
    else
      return Violation{fmt::format("messages.{}.content: Field required", i)};
    if (blocks.empty() && !(role == "assistant" && i + 1 == msgs.size()))
      return Violation{fmt::format("messages.{}: all messages must have non-empty content except for the optional "
                                   "final assistant message",
                                   i)};
    // The previous assistant's tool_use blocks: answered first in this message.
    std::vector<std::string> answered;
    bool other_content = false;
    std::vector<std::string> uses;
    for (size_t k = 0; k < blocks.size(); ++k) {
      auto type = string_of(blocks[k], "type");
      if (type == "text" && string_of(blocks[k], "text").empty())
        return Violation{fmt::format("messages.{}.content.{}.text: text content blocks must be non-empty", i, k)};
      if (type == "text" && string_of(blocks[k], "text").find_first_not_of(" \t\r\n") == std::string::npos)
        return Violation{fmt::format("messages.{}.content.{}.text: text content blocks must contain non-whitespace "
                                     "text",
                                     i, k)};
      if (type == "tool_result") {
        if (role != "user")
          return Violation{fmt::format("messages.{}.content.{}: tool_result blocks are only allowed in user messages",
                                       i, k)};
        auto id = string_of(blocks[k], "tool_use_id");
        if (std::find(pending.begin(), pending.end(), id) == pending.end())
          return Violation{fmt::format("messages.{}.content.{}: unexpected `tool_use_id` found in `tool_result` "
                                       "blocks: {}. Each `tool_result` block must have a corresponding `tool_use` "
                                       "block in the previous message.",
                                       i, k, id)};
        if (std::find(answered.begin(), answered.end(), id) != answered.end())
          return Violation{fmt::format("messages.{}.content.{}: each tool_use must have a single result. Found "
                                       "multiple `tool_result` blocks with id: {}",
                                       i, k, id)};
        if (auto* c = blocks[k].find("content"); c && c->is_array())
          for (size_t b = 0; b < c->as_array().size(); ++b) {
            auto& inner = c->as_array()[b];
            auto at = fmt::format("messages.{}.content.{}.tool_result.content.{}", i, k, b);
            auto inner_type = string_of(inner, "type");
            if (inner_type == "image") {
              if (auto v = anthropic_image_violation(inner, at))
                return v;
            } else if (inner_type != "text") {
              return Violation{fmt::format("{}: Input tag '{}' found using 'type' does not match any of the expected "
                                           "tags: 'text', 'image', 'search_result', 'document'",
                                           at, inner_type)};
            } else if (string_of(inner, "text").find_first_not_of(" \t\r\n") == std::string::npos) {
              return Violation{fmt::format("{}.text: text content blocks must contain non-whitespace text", at)};
            }
          }
        if (auto* err = blocks[k].find("is_error"); err && err->is_bool() && err->as_bool()) {
          auto* c = blocks[k].find("content");
          if (!c || (c->is_string() && c->as_string().empty()) || (c->is_array() && c->as_array().empty()))
            return Violation{fmt::format("messages.{}.content.{}.tool_result: content cannot be empty if `is_error` "
                                         "is true",
                                         i, k)};
          if (c->is_array())
            for (auto& inner : c->as_array())
              if (string_of(inner, "type") != "text")
                return Violation{fmt::format("messages.{}.content.{}.tool_result: all content must be type 'text' if "
                                             "'is_error' is true",
                                             i, k)};
        }
        if (!other_content) // results after other content do not count as "immediately after"
          answered.push_back(id);
      } else {
        other_content = true;
      }
      if (type == "tool_use") {
        if (role != "assistant")
          return Violation{fmt::format("messages.{}.content.{}: tool_use blocks are only allowed in assistant messages",
                                       i, k)};
        auto* input = blocks[k].find("input");
        if (!input || !input->is_object())
          return Violation{fmt::format("messages.{}.content.{}.tool_use.input: Input should be a valid dictionary", i,
                                       k)};
        auto id = string_of(blocks[k], "id");
        static const std::regex id_pattern("^[a-zA-Z0-9_-]+$");
        if (!std::regex_match(id, id_pattern))
          return Violation{fmt::format("messages.{}.content.{}.tool_use.id: String should match pattern "
                                       "'^[a-zA-Z0-9_-]+$'",
                                       i, k)};
        if (std::find(uses.begin(), uses.end(), id) != uses.end())
          return Violation{fmt::format("messages.{}.content.{}: `tool_use` ids must be unique", i, k)};
        uses.push_back(id);
      }
    }
    std::string missing;
    for (auto& id : pending)
      if (std::find(answered.begin(), answered.end(), id) == answered.end())
        missing += (missing.empty() ? "" : ", ") + id;
    if (!missing.empty())
      return Violation{fmt::format("messages.{}: `tool_use` ids were found without `tool_result` blocks immediately "
                                   "after: {}. Each `tool_use` block must have a corresponding `tool_result` block "
                                   "in the next message.",
                                   i - 1, missing)};
    pending = std::move(uses);
  }
  if (!pending.empty()) {
    std::string ids;
    for (auto& id : pending)
      ids += (ids.empty() ? "" : ", ") + id;
    return Violation{fmt::format("messages.{}: `tool_use` ids were found without `tool_result` blocks immediately "
                                 "after: {}. Each `tool_use` block must have a corresponding `tool_result` block in "
                                 "the next message.",
                                 msgs.size() - 1, ids)};
  }
  return std::nullopt;
}

/// api.openai.com's error body; OpenRouter's for a refusal on a model's behalf (`raw`).
inline std::string openai_error_body(const Violation& v) {
  auto opt = [](const std::string& s) { return s.empty() ? Json() : Json(s); };
  if (!v.raw.empty())
    return Json::object()
      .set("error", Json::object()
                      .set("message", v.message)
                      .set("code", v.status)
                      .set("metadata", Json::object().set("raw", v.raw).set("provider_name", "Google AI Studio")))
      .set("user_id", "user_fake")
      .dump();
  return Json::object()
    .set("error", Json::object()
                    .set("message", v.message)
                    .set("type", "invalid_request_error")
                    .set("param", opt(v.param))
                    .set("code", opt(v.code)))
    .dump();
}

/// What Azure OpenAI refuses of a request to a deployment URL (`path` without its
/// query, `query`, `headers` with lower-case names) before it reads the body: the
/// path must be /openai/deployments/NAME/chat/completions with an api-version in the
/// query (else 404 "Resource not found"), and the key must come in `api-key`: an
/// `Authorization` header carries an Entra ID token, which an API key is not (401).
/// std::nullopt for a request that is not to a deployment, or passes.
inline std::optional<Violation> azure_request_violation(const std::string& path, const std::string& query,
                                                        const std::map<std::string, std::string>& headers) {
  static const std::regex deployment("^/openai/deployments/[^/]+/chat/completions$");
  static const std::regex version("(^|&)api-version=[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?(&|$)");
  if (!path.starts_with("/openai/deployments/"))
    return std::nullopt;
  if (!std::regex_match(path, deployment) || !std::regex_search(query, version))
    return Violation{"Resource not found", "", "404", 404};
  if (headers.count("authorization"))
    return Violation{"Unauthorized. Access token is missing, invalid, audience is incorrect "
                     "(https://cognitiveservices.azure.com), or have expired.",
                     "", "401", 401};
  if (auto key = headers.find("api-key"); key == headers.end() || key->second.empty())
    return Violation{"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a "
                     "valid key for an active subscription and use a correct regional API endpoint for your "
                     "resource.",
                     "", "401", 401};
  return std::nullopt;
}

/// What api.openai.com refuses of a request's headers (names in lower case) before it
/// reads the body: no key in `Authorization: Bearer KEY` (401).
inline std::optional<Violation> openai_header_violation(const std::map<std::string, std::string>& headers) {
  auto auth = headers.find("authorization");
  if (auth == headers.end() || !auth->second.starts_with("Bearer ") || auth->second.size() == 7)
    return Violation{"You didn't provide an API key. You need to provide your API key in an Authorization header "
                     "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank "
                     "username) if you're accessing the API from your browser and are prompted for a username. You "
                     "can obtain an API key from https://platform.openai.com/account/api-keys.",
                     "", "", 401};
  return std::nullopt;
}

/// What Anthropic refuses of a request's headers (names in lower case): no
/// `anthropic-version` (400), no key in `x-api-key` (401; `keyless`: not checked).
inline std::optional<Violation> anthropic_header_violation(const std::map<std::string, std::string>& headers,
                                                           bool keyless = false) {
  if (auto version = headers.find("anthropic-version"); version == headers.end() || version->second.empty())
    return Violation{"anthropic-version: header is required"};
  if (auto key = headers.find("x-api-key"); !keyless && (key == headers.end() || key->second.empty()))
    return Violation{"x-api-key header is required", "", "", 401};
  return std::nullopt;
}

/// Azure OpenAI's error body.
inline std::string azure_error_body(const Violation& v) {
  return Json::object().set("error", Json::object().set("code", v.code).set("message", v.message)).dump();
}

/// Anthropic's error body.
inline std::string anthropic_error_body(const Violation& v) {
  return Json::object()
    .set("type", "error")
    .set("error", Json::object()
                    .set("type", v.status == 401 ? "authentication_error" : "invalid_request_error")
                    .set("message", v.message))
    .dump();
}

namespace rules_detail {

/// Problems of one Gemini Schema object (an OpenAPI 3.0 subset), `at` naming it as
/// Gemini does ("properties[env]").
inline void gemini_schema_problems(const Json& s, const std::string& at, std::vector<std::string>& out) {
  static const std::set<std::string> known{"type",     "format",   "title",     "description", "nullable",
                                           "enum",     "maxItems", "minItems",  "properties",  "required",
                                           "minimum",  "maximum",  "minLength", "maxLength",   "pattern",
                                           "example",  "anyOf",    "items",     "propertyOrdering",
                                           "minProperties", "maxProperties"};
  static const std::set<std::string> types{"string", "number", "integer", "boolean", "array", "object"};
  auto where = [&](const std::string& what) { return at.empty() ? what : at + "." + what; };
  if (!s.is_object()) {
    out.push_back(fmt::format("{}: not a schema object", at));
    return;
  }
  for (auto& [key, value] : s.as_object())
    if (!known.contains(key))
      out.push_back(fmt::format("Invalid JSON payload received. Unknown name \"{}\" at '{}'", key, at));
  if (auto* any_of = member(s, "anyOf"); any_of && s.as_object().size() != 1)
    out.push_back(fmt::format("{}: anyOf must be the only field of its schema", where("anyOf")));
  if (member(s, "anyOf"))
    return;
  std::string type = string_of(s, "type");
  for (auto& c : type)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!types.contains(type)) {
    out.push_back(fmt::format("{}: a type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY or OBJECT) is required",
                              where("type")));
    return;
  }
  if (member(s, "enum") && type != "string")
    out.push_back(fmt::format("{}: only allowed for STRING type", where("enum")));
  if (type == "array") {
    if (auto* items = member(s, "items"))
      gemini_schema_problems(*items, where("items"), out);
    else
      out.push_back(fmt::format("{}: missing field.", where("items")));
  }
  if (type == "object") {
    auto* props = member(s, "properties");
    if (!props || !props->is_object() || props->as_object().empty()) {
      out.push_back(fmt::format("{}: should be non-empty for OBJECT type", where("properties")));
      return;
    }
    for (auto& [name, sub] : props->as_object())
      gemini_schema_problems(sub, fmt::format("{}[{}]", where("properties"), name), out);
    if (auto* required = member(s, "required"); required && required->is_array())
      for (auto& r : required->as_array())
        if (!r.is_string() || !props->find(r.as_string()))
          out.push_back(fmt::format("{}: property {} is not defined", where("required"), r.dump()));
  }
}

} // namespace rules_detail

/// Gemini function declarations ({name, description, parameters}) as Gemini checks
/// them: names, and every schema within Gemini's OpenAPI subset. Empty when accepted.
inline std::vector<std::string> gemini_declaration_problems(const Json& declarations) {
  std::vector<std::string> out;
  static const std::regex name_pattern("^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$");
  if (!declarations.is_array())
    return {"function_declarations: expected a list"};
  for (size_t i = 0; i < declarations.as_array().size(); ++i) {
    auto& decl = declarations.as_array()[i];
    auto name = rules_detail::string_of(decl, "name");
    auto at = fmt::format("function_declarations[{}]", i);
    if (!std::regex_match(name, name_pattern))
      out.push_back(fmt::format("{}.name: invalid function name \"{}\"", at, name));
    for (auto& [key, value] : decl.as_object())
      if (key != "name" && key != "description" && key != "parameters")
        out.push_back(fmt::format("Invalid JSON payload received. Unknown name \"{}\" at '{}'", key, at));
    if (auto* params = rules_detail::member(decl, "parameters")) {
      std::vector<std::string> found;
      rules_detail::gemini_schema_problems(*params, "", found);
      for (auto& p : found)
        out.push_back(fmt::format("GenerateContentRequest.tools[0].{}.parameters.{}", at, p));
    }
  }
  return out;
}

} // namespace jp::testing
