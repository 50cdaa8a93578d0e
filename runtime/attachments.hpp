// `query --attach PATH` (issue 19): files, and directories as a listing, added to the
// prompt with their paths. Text only (UTF-8 without NUL bytes: a binary file is
// refused), and bounded: all attachments together may hold max_bytes, so a stray
// log or build output cannot flood the model. Errors name the path and what is
// allowed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "../messages/result.hpp"

namespace jp {

struct AttachLimits {
  size_t max_bytes = 256u << 10; // the attachments' text together
  size_t max_entries = 1000;     // a directory listing's lines
};

/// The prompt with each attachment after it, as
///   <attachment path="PATH">CONTENT</attachment>
/// (a directory: `kind="directory"`, one line per entry below it, `.git` left out,
/// a link shown as `NAME (link)`, neither followed nor sized). Inside, the `<` of
/// `<attachment` and `</attachment` is written `&lt;`, so a file cannot end its block
/// or fake another; a name's control characters are written `\xNN`. A path in the
/// current directory or in `workspace` whose links lead out of that directory is
/// refused (a repository's `notes.md -> ../.ssh/id_ed25519`).
Result<std::string> prompt_with_attachments(const std::string& prompt, const std::vector<std::string>& paths,
                                            const std::string& workspace, const AttachLimits& limits = {});

} // namespace jp
