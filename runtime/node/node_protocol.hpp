// The node protocol's name, which CAF's handshake compares (middleman.app-identifiers):
// a client and a node whose messages differ (a field added to HandleReport, a
// message of an interface changed) would otherwise connect and then fail to read
// each other's messages, which CAF answers by closing the connection, told as a
// lost node. Change the number with any type or interface that crosses to a node
// (actors/interfaces.hpp's node_* actors and the types their messages carry).
#pragma once

namespace jp {

inline constexpr const char* node_protocol = "jp-actors-node-protocol-5";

} // namespace jp
