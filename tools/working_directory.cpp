#include "tools/working_directory.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "messages/json.hpp"

namespace jp {

namespace fs = std::filesystem;

Result<std::string> working_directory(const std::string& workspace, std::string_view requested,
                                      bool confine, std::string_view rule) {
  if (requested.find('\0') != std::string_view::npos)
    return Error{fmt::format("cwd {} holds a NUL byte (\\u0000), which cannot be in a path",
                             json_quote_cut(requested, 200))};
  if (requested.empty())
    return workspace;
  auto path = fs::path(workspace) / requested; // an absolute `requested` replaces it
  if (!confine)
    return path.string();
  std::error_code ec;
  auto root = fs::weakly_canonical(workspace, ec);
  auto resolved = ec ? fs::path() : fs::weakly_canonical(path, ec);
  if (ec)
    return Error{fmt::format("cwd {}: cannot be resolved: {}", json_quote_cut(requested, 200), ec.message())};
  // Relative to the workspace, a path inside it neither starts with ".." nor is empty
  // (empty: no relation, e.g. another root).
  auto outside = [&](const fs::path& p) {
    auto relative = p.lexically_relative(root);
    return relative.empty() || *relative.begin() == "..";
  };
  auto refuse = [&](const fs::path& p) {
    return Error{fmt::format("cwd {} resolves to {}, outside the workspace {}; {}", json_quote_cut(requested, 200),
                             json_quote_cut(p.string(), 200), json_quote(root.string()), rule)};
  };
  if (outside(resolved))
    return refuse(resolved);
  // Then with every link resolved, which needs the directory to exist (as chdir
  // does): a path resolved only in part ("nope/../link/x") kept a link for chdir to
  // follow out of the workspace.
  auto real = fs::canonical(path, ec);
  if (ec)
    return Error{fmt::format("cwd {}: no such directory in the workspace ({})", json_quote_cut(requested, 200),
                             ec.message())};
  if (outside(real))
    return refuse(real);
  // A file there is said so before anything starts, as a missing directory is.
  if (!fs::is_directory(real, ec))
    return Error{fmt::format("cwd {}: not a directory ({})", json_quote_cut(requested, 200),
                             ec ? ec.message() : "a file, not a directory")};
  return real.string();
}

} // namespace jp
