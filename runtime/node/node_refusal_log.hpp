// How a node's log tells refusals (a token that does not match, a TLS handshake
// that failed): the first ones, then every thousandth, so a peer that retries or
// a port scan cannot flood it and a later one is not unseen.
#pragma once

#include <string>

namespace jp {

/// Tells the `n`th refusal of its kind on stderr: `line` for the first 20 (the 20th
/// saying that from then on only every 1000th is told), then for every 1000th
/// `count_line` with {} as the count; each line begins with `who` and a colon.
void tell_refusal(int n, const std::string& line, const char* count_line, const char* who = "jp-actors node");

} // namespace jp
