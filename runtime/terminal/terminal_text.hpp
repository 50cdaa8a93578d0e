// Raw pty output -> text for an LLM: drops terminal control sequences and turns CRLF
// into LF. What redraws a line -- a lone CR after text, backspace, erase in line
// (CSI K), cursor to column, right and left (CSI G, C, D), delete, insert and erase
// characters (CSI P, @, X: readline's line editing), the cursor restored on its
// line (ESC 8, CSI u: as CSI G) -- and what redraws lines
// above -- cursor up and down (CSI A, B, F, E), erase below (CSI J) -- is kept, for a
// look to show the lines as they were left (readable_text: a progress bar's last
// frame, not every frame).
// A full-screen program's output (between switching to the alternate screen and
// back: vi, less, top, watch) is no line of text; a terminal keeps none of it in its
// scrollback, and neither does this: one line says the program took the screen, one
// that it left, and a look shows the screen meanwhile.
// Streaming: pty output arrives in arbitrary chunks, so any sequence may be split
// across feed() calls.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace jp {

class TerminalText {
public:
  /// `cols`: the terminal's width (0: unknown), where a long line wraps.
  explicit TerminalText(int cols = 0) : cols_(cols) {}
  void set_cols(int cols) { cols_ = cols; }
  /// The plain text of these bytes (what can be decided so far).
  std::string feed(std::string_view bytes);
  /// Whatever is held back (a trailing lone CR, a partial UTF-8 character); resets.
  std::string flush();
  /// A full-screen program has the terminal (the alternate screen is shown).
  bool full_screen() const { return alt_screen_; }

  /// An unterminated sequence longer than this is dropped, so a stray ESC ] cannot
  /// swallow the rest of the output.
  static constexpr std::size_t max_sequence = 4096;

private:
  enum class st { text, esc, esc_intermediate, csi, string, string_esc };

  void step(std::string& out, unsigned char c);
  void in_sequence_other(std::string& out, unsigned char c);
  void text_byte(std::string& out, unsigned char c);
  void put(std::string& out, char c);
  void put_line_edit(std::string& out, unsigned char final_byte);
  void resolve_cr(std::string& out);
  void switch_screen(std::string& out, unsigned char final_byte);
  void leave_line(std::string& out);
  void save_or_restore(std::string& out, bool save);

  st state_ = st::text;
  bool osc_ = false;        // the string may also end with BEL
  bool pending_cr_ = false; // a CR whose meaning depends on the next byte
  bool at_line_start_ = true; // nothing emitted since the last line break
  bool alt_screen_ = false;   // the alternate screen is shown: its text is dropped
  std::size_t seq_len_ = 0;
  std::string csi_;         // the parameters of the CSI being read
  int cols_ = 0;
  std::size_t column_ = 0;  // the cursor's column on its row, as far as the text says
  std::size_t cell_ = 0;    // the cursor's place on its line as a look counts it (a tab: one)
  std::optional<std::size_t> saved_cell_; // ESC 7's, for ESC 8 on the same line
  bool moved_away_ = false; // a move to a place on the screen since the save
  std::ptrdiff_t rows_down_ = 0; // lines the text moved down since the save (up: less)
  std::string held_utf8_;   // a character split across chunks
};

} // namespace jp
