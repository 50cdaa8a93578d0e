#include "config/tls_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <vector>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "config/bounded_read.hpp"
#include "config/config.hpp"

namespace jp {

namespace {

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;
using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio bio_of(const std::string& bytes) {
  return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())), BIO_free);
}

/// An encrypted key would make OpenSSL ask for its passphrase on the terminal.
int no_passphrase(char*, int, int, void*) {
  return 0;
}

/// OpenSSL's reasons for the last failure, its error queue emptied.
std::string openssl_reasons() {
  std::vector<std::string> reasons; // each once: OpenSSL queues one per layer it passed
  while (auto e = ERR_get_error()) {
    const char* r = ERR_reason_error_string(e);
    auto reason = r ? std::string(r) : fmt::format("error {:#x}", e);
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
      reasons.push_back(std::move(reason));
  }
  return reasons.empty() ? "no reason given" : fmt::format("{}", fmt::join(reasons, "; "));
}

// A PEM certificate chain, key or CA bundle is a few KiB; a system's whole CA bundle
// is well under 1 MiB. Anything larger is not one (or a device that never ends).
constexpr size_t kMaxPemBytes = 4 << 20;

/// The bytes of regular file `path`, named by config key `key`: a FIFO would block
/// the start and a device could fill memory, so only a bounded regular file is read.
Result<std::string> read_whole(const std::string& path, const std::string& key) {
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return Error{fmt::format("{}: cannot read {}: {}", key, path, std::strerror(errno))};
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0)
    return Error{fmt::format("{}: cannot read {}: {}", key, path, std::strerror(errno))};
  if (!S_ISREG(st.st_mode))
    return Error{fmt::format("{}: {} is not a regular file; give the path of a PEM file", key, path)};
  auto read = read_bounded(fd, kMaxPemBytes);
  if (read.error)
    return Error{fmt::format("{}: cannot read {}: {}", key, path, std::strerror(read.error))};
  if (read.too_large)
    return Error{fmt::format("{}: {} is larger than {} MiB; a PEM file is far smaller (give the certificate, "
                             "key or CA file itself)",
                             key, path, kMaxPemBytes >> 20)};
  return std::move(read.bytes);
}

/// The first certificate of `pem`, if it has one.
Cert first_certificate(const std::string& pem) {
  auto bio = bio_of(pem);
  return Cert(PEM_read_bio_X509_AUX(bio.get(), nullptr, no_passphrase, nullptr), X509_free);
}

/// Why the three files' contents cannot be used as CAF uses them, or "".
std::string check(const std::string (&pem)[3], const TlsConfig& tls, const std::string& where) {
  auto cert = first_certificate(pem[0]);
  if (!cert)
    return fmt::format("{}.certificate: {} holds no PEM certificate (\"-----BEGIN CERTIFICATE-----\"): {}", where,
                       tls.certificate, openssl_reasons());
  auto key_bio = bio_of(pem[1]);
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr), EVP_PKEY_free);
  if (!key)
    return fmt::format("{}.key: {} holds no PEM private key, or an encrypted one (a key without a passphrase is "
                       "needed: \"-----BEGIN PRIVATE KEY-----\"): {}",
                       where, tls.key, openssl_reasons());
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return fmt::format("{}.key: {} is not the key of the certificate {} (give the key the certificate was made "
                       "with)",
                       where, tls.key, tls.certificate);
  }
  if (!first_certificate(pem[2]))
    return fmt::format("{}.ca: {} holds no PEM certificate (the CA that signs the peers' certificates, "
                       "\"-----BEGIN CERTIFICATE-----\"): {}",
                       where, tls.ca, openssl_reasons());
  return {};
}

/// The loads CAF's session makes on every connection (openssl/session.cpp), on the
/// pinned paths: what they refuse is refused here, before CAF could throw it.
std::string load_as_caf_does(const PinnedTls& pinned, const TlsConfig& tls, const std::string& where) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx)
    return fmt::format("{}: OpenSSL cannot make a context: {}", where, openssl_reasons());
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), pinned.certificate().c_str()) != 1)
    return fmt::format("{}.certificate: OpenSSL cannot load {}: {}", where, tls.certificate, openssl_reasons());
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), pinned.key().c_str(), SSL_FILETYPE_PEM) != 1)
    return fmt::format("{}.key: OpenSSL cannot load {} with the certificate {}: {}", where, tls.key,
                       tls.certificate, openssl_reasons());
  if (SSL_CTX_load_verify_locations(ctx.get(), pinned.ca().c_str(), nullptr) != 1)
    return fmt::format("{}.ca: OpenSSL cannot load {}: {}", where, tls.ca, openssl_reasons());
  return {};
}

} // namespace

Result<PinnedTls> PinnedTls::pin(const TlsConfig& tls, const std::string& where) {
  const std::pair<const char*, const std::string*> files[3] = {
    {"certificate", &tls.certificate}, {"key", &tls.key}, {"ca", &tls.ca}};
  std::string pem[3];
  for (int i = 0; i < 3; ++i) {
    auto key = fmt::format("{}.{}", where, files[i].first);
    if (files[i].second->empty())
      return Error{fmt::format("{} is missing: mutual TLS needs certificate, key and ca (PEM files)", key)};
    auto bytes = read_whole(*files[i].second, key);
    if (!bytes)
      return Error{bytes.error()};
    pem[i] = std::move(*bytes);
  }
  if (auto why = check(pem, tls, where); !why.empty())
    return Error{why};
  PinnedTls pinned;
  for (int i = 0; i < 3; ++i) {
    // Close-on-exec: no tool inherits the key.
    int fd = ::memfd_create(files[i].first, MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, pem[i].data(), pem[i].size()) != static_cast<ssize_t>(pem[i].size())) {
      auto err = errno;
      if (fd >= 0)
        ::close(fd);
      return Error{fmt::format("{}.{}: cannot keep {} in memory: {}", where, files[i].first, *files[i].second,
                               std::strerror(err))};
    }
    pinned.fds_[i] = fd;
    pinned.paths_[i] = fmt::format("/proc/self/fd/{}", fd);
  }
  if (auto why = load_as_caf_does(pinned, tls, where); !why.empty())
    return Error{why};
  return pinned;
}

PinnedTls::PinnedTls(PinnedTls&& o) noexcept {
  for (int i = 0; i < 3; ++i) {
    fds_[i] = std::exchange(o.fds_[i], -1);
    paths_[i] = std::move(o.paths_[i]);
  }
}

PinnedTls::~PinnedTls() {
  for (int fd : fds_)
    if (fd >= 0)
      ::close(fd);
}

} // namespace jp
