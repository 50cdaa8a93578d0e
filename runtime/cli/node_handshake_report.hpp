// What `jp-actors node` says when it refuses a connection at the TLS handshake.
// CAF 0.17's openssl module drops such a connection without a word (its session
// leaves a "TODO: Log somehow?" where a handshake fails), so the client alone would
// know why. The node therefore stands between CAF and OpenSSL's SSL_get_error, which
// CAF's session calls on every failed operation: a server-side handshake that failed
// (one whose client never sent its Finished message: a served client's end is no
// refusal) is reported on stderr with the peer and OpenSSL's reason, and OpenSSL's error queue
// is emptied (CAF leaves it filled, and a filled queue makes the next operation on
// that thread look failed too, which would drop a good client's connection).
#pragma once

namespace jp {

/// From now on, refused handshakes are reported ("jp-actors node: refused ...").
void report_refused_handshakes();

} // namespace jp
