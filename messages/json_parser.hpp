// The simdjson parser of the calling thread, shared by what reads JSON text straight
// (Json::parse, plain_await_request): parsers are costly to create and each keeps the
// capacity of the largest text it has read. Include only where simdjson is used.
#pragma once

#include <simdjson.h>

namespace jp {

simdjson::dom::parser& thread_json_parser();

} // namespace jp
