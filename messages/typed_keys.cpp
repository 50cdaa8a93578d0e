#include "messages/typed_keys.hpp"

namespace jp {

std::string key_help() {
  return "Keys are Enter, Tab, Backspace, Escape (or Esc), Up, Down, Left, Right, Home, "
         "End, PageUp, PageDown, Insert, Delete, F1-F12, Space or any single character, "
         "optionally prefixed by C- (Ctrl), M- (Alt) and S- (Shift), combinable "
         "(e.g. C-c, M-b, C-M-x, S-Tab).";
}

} // namespace jp
