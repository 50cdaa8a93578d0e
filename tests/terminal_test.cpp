#define CAF_SUITE terminal
#include <caf/test/unit_test.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "actors/handle_terminal.hpp"
#include "runtime/terminal/terminal_screen.hpp"
#include "runtime/terminal/readable_text.hpp"
#include "runtime/terminal/terminal_text.hpp"
#include "messages/json.hpp"

#include <random>
#include <string>

using namespace jp;
using namespace std::string_literals;

namespace {

std::string plain(std::string_view bytes) {
  TerminalText t;
  return t.feed(bytes) + t.flush();
}

std::string plain_bytewise(std::string_view bytes) {
  TerminalText t;
  std::string out;
  for (char c : bytes)
    out += t.feed(std::string_view(&c, 1));
  return out + t.flush();
}

/// What a look shows of a terminal's text: its line redraws applied.
std::string shown(std::string_view bytes) {
  return readable_text(plain(bytes));
}

// Colors, a title, a charset designation, a DCS, keypad mode, a progress bar and
// a multi-byte character, as a colored `git diff` in a pty might print them.
const std::string colored_diff = "\x1b]0;git diff\x07"
                                 "\x1b[1mdiff --git a/x b/x\x1b[m\r\n"
                                 "\x1b(B\x1b[1;32m+added \xC3\xA9t\xC3\xA9\x1b[m\r\n"
                                 "\x1b[31m-removed\x1b[m\r\n"
                                 "\x1bP1$r0m\x1b\\\x1b=\x1b]8;;http://x\x1b\\link\x1b[0K\r\n"
                                 "10%\r50%\r100%\r\n";
// The text, with what redraws a line kept (erase in line, a lone CR)...
const std::string diff_text = "diff --git a/x b/x\n+added \xC3\xA9t\xC3\xA9\n-removed\nlink\x1b[0K\n"
                              "10%\r50%\r100%\n";
// ... and what a look shows of it: the progress bar's last frame.
const std::string diff_shown = "diff --git a/x b/x\n+added \xC3\xA9t\xC3\xA9\n-removed\nlink\n100%\n";

} // namespace

CAF_TEST(control sequences are removed) {
  CAF_CHECK_EQUAL(plain(colored_diff), diff_text);
  CAF_CHECK_EQUAL(shown(colored_diff), diff_shown);
}

CAF_TEST(sequences split at every byte give the same text) {
  CAF_CHECK_EQUAL(plain_bytewise(colored_diff), diff_text);
  for (std::size_t cut = 0; cut <= colored_diff.size(); ++cut) {
    TerminalText t;
    auto out = t.feed(std::string_view(colored_diff).substr(0, cut));
    out += t.feed(std::string_view(colored_diff).substr(cut));
    out += t.flush();
    CAF_CHECK_EQUAL(out, diff_text);
  }
}

CAF_TEST(a sequence interrupted by another or cancelled leaves no residue) {
  CAF_CHECK_EQUAL(plain("\x1b]0;title\x1b[31mred"), "red");
  CAF_CHECK_EQUAL(plain("a\x1b[12\x18" "b\x1b[1\x1b[2Jc"), "abc");
  CAF_CHECK_EQUAL(plain("\x1b[1\n;2Hx"), "\nx"); // C0 inside CSI still acts
}

CAF_TEST(CRLF becomes one line break and a lone CR redraws the line) {
  CAF_CHECK_EQUAL(plain("a\r\nb\rc\r\r\nd"), "a\nb\rc\nd");
  CAF_CHECK_EQUAL(shown("a\r\nb\rc\r\r\nd"), "a\nc\nd");
  TerminalText t;
  CAF_CHECK_EQUAL(t.feed("progress 1\r"), "progress 1");
  CAF_CHECK_EQUAL(t.feed("\n"), "\n");
  CAF_CHECK_EQUAL(t.feed("x\r"), "x");
  CAF_CHECK_EQUAL(t.feed("y"), "\ry");
  CAF_CHECK_EQUAL(t.feed("\r"), "");
  CAF_CHECK_EQUAL(t.flush(), "\r");
  // A progress bar on a terminal (a program that sees one draws it): its last frame,
  // its erase-line and cursor-to-column kept for the look, other sequences not.
  auto bar = std::string("\x1b[1m");
  for (int i = 1; i <= 50; ++i)
    bar += fmt::format("\r\x1b[2K{}% \x1b[32m{}\x1b[m", i * 2, std::string(i / 5, '#'));
  CAF_CHECK_EQUAL(shown(bar + "\r\nA\rB\nx\x1b[2Ky\nETA 10s\rETA 9s\x1b[K\n"),
                  "100% ##########\nB\n y\nETA 9s\n");
  CAF_CHECK_EQUAL(plain("a\x1b[3;5Kb\x1b[?25lc"), "abc"); // not digits alone: dropped
}

CAF_TEST(a CR at the start of a line adds no empty line) {
  // What bc with readline writes after each input line (bracketed paste off, CR).
  CAF_CHECK_EQUAL(plain("\x1b[?2004hx = 6*7\r\n\x1b[?2004l\r\x1b[?2004hx + 1\r\n\x1b[?2004l\r43\r\n"),
                  "x = 6*7\nx + 1\n43\n");
  TerminalText t;
  CAF_CHECK_EQUAL(t.feed("\r"), "");
  CAF_CHECK_EQUAL(t.feed("a\r\n"), "a\n");
  CAF_CHECK_EQUAL(t.feed("\r"), "");
  CAF_CHECK_EQUAL(t.flush(), "");
}

CAF_TEST(backspace moves back a character as on a terminal) {
  CAF_CHECK_EQUAL(shown("abc\b\bX"), "aXc");
  CAF_CHECK_EQUAL(shown("\bz"), "z");
  CAF_CHECK_EQUAL(shown("a\xE2\x82\xAC\b!"), "a!"); // over a whole code point
  CAF_CHECK_EQUAL(shown("a\n\bb"), "a\nb");         // not past a line break
  CAF_CHECK_EQUAL(shown("ab\b \b\r\n"), "a \n");    // a shell erasing a typed character
  CAF_CHECK_EQUAL(shown("x\x1b[K\by"), "y");         // after a kept erase-line: still the line's
  CAF_CHECK_EQUAL(shown("bell\x07\x01\x7f"), "bell");
  CAF_CHECK_EQUAL(shown("a\tb"), "a\tb");
}

CAF_TEST(deleting inserting and erasing characters within a line reads as on a terminal) {
  // readline edits a typed line so: a backspace and a delete (CSI P), an insert
  // (CSI @) and the character over the blank. The text showed the line before.
  CAF_CHECK_EQUAL(shown("print('abcXdef')\b\b\b\b\b\b\x1b[1P\r\n"), "print('abcdef')\n");
  CAF_CHECK_EQUAL(shown("ins:abcdef\r\x1b[2C\x1b[@Z\n"), "inZs:abcdef\n");
  CAF_CHECK_EQUAL(shown("del:abcdef\r\x1b[2C\x1b[2P\n"), "deabcdef\n");
  CAF_CHECK_EQUAL(shown("ech:abcdef\r\x1b[5C\x1b[2X\n"), "ech:a  def\n");
  CAF_CHECK_EQUAL(shown("end:ab\x1b[D\x1b[9X\n"), "end:a\n"); // to the end: nothing left there
  CAF_CHECK_EQUAL(shown("at end\x1b[4@\n"), "at end\n");      // no blank past the text
  // So on a pipe, where the sequences come as written.
  CAF_CHECK_EQUAL(readable_text("del:abcdef\r\x1b[2C\x1b[2P\n"), "deabcdef\n");
}

CAF_TEST(a line an earlier look ended inside of is where the next bytes move along) {
  // A prompt shown by one look, then what was typed at it and the prompt's line
  // redrawn (cursor up, to its column): the move counted from the look's start, and
  // the text showed "typed-teREDRAWN", which was never on the screen.
  OpenLine open{"PROMPT> ", 8};
  CAF_CHECK_EQUAL(readable_text("typed-text\n\x1b[A\r\x1b[8CREDRAWN\x1b[K\nQ2> ", nullptr, &open), "REDRAWN\nQ2> ");
  CAF_CHECK_EQUAL(open.text, "Q2> ");
  CAF_CHECK_EQUAL(open.column, 4u);
  CAF_CHECK_EQUAL(readable_text("typed2\n\x1b[A\x1b[9GCOLG\x1b[K\ndone\n", nullptr, &open), "typeCOLG\ndone\n");
  CAF_CHECK_EQUAL(open.text, "");
  // Plain text goes on with the line; a line changed before what was shown of it is
  // shown whole (a history recall's).
  open = {"$ ", 2};
  CAF_CHECK_EQUAL(readable_text("echo long", nullptr, &open), "echo long");
  CAF_CHECK_EQUAL(open.text, "$ echo long");
  CAF_CHECK_EQUAL(readable_text("\r$ ls\x1b[K", nullptr, &open), "$ ls");
  CAF_CHECK_EQUAL(open.text, "$ ls");
  // The cursor where the line left it, not at its end: readline's cursor moved left.
  open = {"$ abc", 3};
  CAF_CHECK_EQUAL(readable_text("X\n", nullptr, &open), "$ aXc\n");
  // A line too long to carry (minified JSON over many looks) is not kept growing.
  open = {};
  for (int i = 0; i < 3; ++i)
    CAF_CHECK_EQUAL(readable_text(std::string(3000, 'j'), nullptr, &open), std::string(3000, 'j'));
  CAF_CHECK(open.text.size() <= 4096u);
  CAF_CHECK_EQUAL(open.column, open.text.size());
}

CAF_TEST(the text counts a wide character as two columns and a combining mark as none) {
  // As the screen does: a backspace or a move left over 中 crosses two columns, over
  // e and its accent one (the text had "aX|" for the screen's "abX|").
  CAF_CHECK_EQUAL(readable_text("ab\xE4\xB8\xAD\b\bX|\n"), "abX|\n");
  CAF_CHECK_EQUAL(readable_text("wide:\xE4\xB8\xAD\xE6\x96\x87\x1b[2DX|\n"), "wide:\xE4\xB8\xADX|\n");
  CAF_CHECK_EQUAL(readable_text("c:e\xCC\x81\bZ|\n"), "c:Z|\n");
  CAF_CHECK_EQUAL(readable_text("c:e\xCC\x81!\n"), "c:e\xCC\x81!\n");
  // Half of a wide character written over blanks the other half, as on a terminal.
  CAF_CHECK_EQUAL(readable_text("\xE4\xB8\xAD\xE6\x96\x87\r\x1b[1CX\n"), " X\xE6\x96\x87\n");
  CAF_CHECK_EQUAL(readable_text("\xE4\xB8\xAD\rX\n"), "X \n");
  // A mark after a wide character joins it, past its second half.
  CAF_CHECK_EQUAL(readable_text("\xE4\xB8\xAD\xCC\x81\rXY\n"), "XY\n");
  // A second half a delete of cells left behind is no wide character's: writing over
  // it blanks nothing else (the a stayed).
  CAF_CHECK_EQUAL(readable_text("a\xE4\xB8\xAD" "b\r\x1b[1C\x1b[1PZ\n"), "aZb\n");
  // A line editor's redraw over wide characters: 字 erased with blanks, an x put
  // before 中文 and the two written again after it (the blank it wrote stays).
  CAF_CHECK_EQUAL(shown("$ echo \xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\b\b  \b\b\b\b\b\bx\xE4\xB8\xAD\xE6\x96\x87\b\b\b\b\r\n"),
                  "$ echo x\xE4\xB8\xAD\xE6\x96\x87 \n");
}

CAF_TEST(a tab takes the columns to its stop and what is written over it leaves blanks) {
  // One cell, "\tfoo\rbar" showed "baro": foo was lost.
  CAF_CHECK_EQUAL(readable_text("\tfoo\rbar\n"), "bar     foo\n");
  CAF_CHECK_EQUAL(readable_text("\ta\rX\n"), "X       a\n");
  CAF_CHECK_EQUAL(readable_text("col1\tcol2\rZ\n"), "Zol1\tcol2\n"); // the tab untouched stays one
  CAF_CHECK_EQUAL(readable_text("ab\tc\r\x1b[9GX\n"), "ab\tX\n");     // column 9: past the stop
  // Over what the line shows, a tab moves the cursor.
  CAF_CHECK_EQUAL(readable_text("0123456789\r\tX\n"), "01234567X9\n");
  // A line carried to the next look counts its tab's columns too.
  OpenLine open;
  CAF_CHECK_EQUAL(readable_text("a\tb", nullptr, &open), "a\tb");
  CAF_CHECK_EQUAL(open.column, 9u);
  CAF_CHECK_EQUAL(readable_text("\b!\n", nullptr, &open), "a\t!\n"); // the line whole: its text changed
  // Its stop counts from the line's start, not from the look's (a tab in the second
  // look of a line).
  OpenLine line;
  CAF_CHECK_EQUAL(readable_text("xxxxxxx", nullptr, &line), "xxxxxxx");
  CAF_CHECK_EQUAL(readable_text("ab\t", nullptr, &line), "ab\t");
  CAF_CHECK_EQUAL(line.column, 16u);
  CAF_CHECK_EQUAL(readable_text("Z\n", nullptr, &line), "Z\n");
}

CAF_TEST(a move to a place on the screen never joins two lines of the text) {
  // The text does not follow it (the screen does), but the line it leaves ends.
  CAF_CHECK_EQUAL(shown("aaa\nbbb\x1b[Hccc\n"), "aaa\nbbb\nccc\n");
  CAF_CHECK_EQUAL(shown("r1\x1b[2;1Hr2\x1b[3;1fr3\n"), "r1\nr2\nr3\n");
  // apt's progress line: saved, drawn at the bottom, restored.
  std::string apt;
  for (auto [pkg, pct] : {std::pair{"1", "25"}, std::pair{"2", "50"}})
    apt += fmt::format("Unpacking pkg{} ...\r\n\x1b" "7\x1b[24;0f\x1b[42mProgress: [ {}%]\x1b[49m\x1b" "8", pkg, pct);
  apt += "done\r\n";
  CAF_CHECK_EQUAL(shown(apt), "Unpacking pkg1 ...\nProgress: [ 25%]\nUnpacking pkg2 ...\nProgress: [ 50%]\ndone\n");
  // A spinner saved and restored on its own line is redrawn in place.
  CAF_CHECK_EQUAL(shown("Working \x1b" "7|\x1b" "8/\x1b" "8-\x1b[u\\\x1b" "8done\r\n"), "Working done\n");
  CAF_CHECK_EQUAL(shown("Load \x1b[s10%\x1b[u50%\x1b[u100%\r\n"), "Load 100%\n");
  // A tab before it takes the look's cells to its stop, as the restore counts them.
  CAF_CHECK_EQUAL(shown("\tWorking \x1b" "7|\x1b" "8/\x1b" "8done\r\n"), "\tWorking done\n");
  // Restored after a move up (a header redrawn above), or lines below: back on its line.
  CAF_CHECK_EQUAL(shown("l1\nl2\nl3 \x1b" "7\x1b[2A\rHEAD\x1b" "8tail\r\n"), "HEAD\nl2\nl3 tail\n");
  CAF_CHECK_EQUAL(shown("top \x1b" "7\r\nmore\r\n\x1b" "8end\r\n"), "top end\nmore\n");
}

CAF_TEST(a CR past the terminal s width ends the row a long line wrapped to) {
  // readline wraps a long input line by writing a space past the margin and a CR:
  // on a terminal the CR returns to the new row, not over the line's start.
  auto echoed = "$ echo aaaaa \raaaaa\r\n";
  TerminalText narrow(10);
  CAF_CHECK_EQUAL(readable_text(narrow.feed(echoed) + narrow.flush()), "$ echo aaaaa \naaaaa\n");
  // Within the width a CR redraws the line, and a cursor-to-column sets where it is.
  TerminalText wide(80);
  CAF_CHECK_EQUAL(readable_text(wide.feed("50%\r100%\r\n") + wide.flush()), "100%\n");
  TerminalText moved(10);
  CAF_CHECK_EQUAL(readable_text(moved.feed("0123456789\x1b[1Gab\r\n") + moved.flush()), "ab23456789\n");
  // Cursor left and right redraw within the line too, as on a pipe.
  CAF_CHECK_EQUAL(shown("abc\x1b[2Dx\r\n"), "axc\n");
  CAF_CHECK_EQUAL(shown("abc\r\x1b[2Cx\r\n"), "abx\n");
}

CAF_TEST(a full screen program s text is left out between its screen switches) {
  const std::string took = "[jp-actors: a full-screen program took the terminal; a look shows its screen "
                           "(`screen`) until it leaves]\n";
  const std::string left = "[jp-actors: the full-screen program left the terminal]\n";
  CAF_CHECK_EQUAL(plain("$ top\r\n\x1b[?1049h\x1b[Hframe 1\r\x1b[Hframe 2\x1b[?1049l$ "), "$ top\n" + took + left + "$ ");
  // Any of its modes, among others set at once; a line not ended is ended first.
  CAF_CHECK_EQUAL(plain("a\x1b[?1;47hx\x1b[?47lb"), "a\n" + took + left + "b");
  CAF_CHECK_EQUAL(plain("\x1b[?1047hx\x1b[?1047l\x1b[?1049hy\x1b[?1049l"), took + left + took + left);
  // Other private modes (cursor keys, bracketed paste) switch nothing.
  CAF_CHECK_EQUAL(plain("\x1b[?1h\x1b[?2004hx\x1b[?10490h"), "x");
  CAF_CHECK_EQUAL(plain_bytewise("\x1b[?1049hx\ry\x1b[2K\x1b[?1049lz"), took + left + "z");
  TerminalText t;
  t.feed("\x1b[?1049h");
  CAF_CHECK(t.full_screen());
  t.feed("\x1b[?1049l");
  CAF_CHECK(!t.full_screen());
}

CAF_TEST(a UTF-8 character split across chunks is held until complete) {
  TerminalText t;
  CAF_CHECK_EQUAL(t.feed("x\xE2\x82"), "x");
  CAF_CHECK_EQUAL(t.feed("\xAC."), "\xE2\x82\xAC.");
}

CAF_TEST(a runaway OSC is dropped after the cap) {
  TerminalText t;
  auto out = t.feed("before\x1b]0;" + std::string(3 * TerminalText::max_sequence, 'x'));
  out += t.feed("\nafter");
  CAF_CHECK(out.rfind("before", 0) == 0);
  CAF_CHECK(out.size() < 3 * TerminalText::max_sequence);
  CAF_CHECK(out.ends_with("\nafter"));
  // A bad sequence does not stick: the next one is parsed normally.
  CAF_CHECK_EQUAL(t.feed("\x1b[31mred\x1b[m"), "red");
}

CAF_TEST(the output of a pipe reads as a terminal shows its lines) {
  // Plain text is handed over as it is, tabs and invalid UTF-8 included.
  CAF_CHECK_EQUAL(readable_text("a\tb\n\xFF\xC3\xA9\n"), "a\tb\n\xFF\xC3\xA9\n");
  // Colours, titles, hyperlinks and the rest of a coloured diff are dropped.
  auto diff = readable_text(colored_diff);
  CAF_CHECK_EQUAL(diff, "diff --git a/x b/x\n+added \xC3\xA9t\xC3\xA9\n-removed\nlink\n100%\n");
  // A progress bar leaves its last frame: redrawn after CR, erased to the line's end
  // (CSI K), moved to its first column (CSI G), backed up (CSI D, backspace).
  CAF_CHECK_EQUAL(readable_text("  5% [>    ]\r 50% [==>  ]\r100% [=====]\ndone\n"), "100% [=====]\ndone\n");
  CAF_CHECK_EQUAL(readable_text("Downloading big.tar\r\x1b[Kdone\n"), "done\n");
  CAF_CHECK_EQUAL(readable_text("Downloading big.tar\r\x1b[2Kdone\n"), "done\n");
  CAF_CHECK_EQUAL(readable_text("Downloading big.tar\x1b[1Gdone\x1b[0K\n"), "done\n");
  CAF_CHECK_EQUAL(readable_text("12%\x1b[3D99%\n"), "99%\n");
  CAF_CHECK_EQUAL(readable_text("ab\bc\n"), "ac\n");
  // What a CR redraws, and what it leaves of a longer line, as a terminal would.
  CAF_CHECK_EQUAL(readable_text("hello\rHE\n"), "HEllo\n");
  CAF_CHECK_EQUAL(readable_text("windows\r\nline\r\n"), "windows\nline\n");
  // Characters, not bytes, are redrawn.
  CAF_CHECK_EQUAL(readable_text("\xC3\xA9t\xC3\xA9\rE\n"), "Et\xC3\xA9\n");
  // The line not ended yet is shown as it is now.
  CAF_CHECK_EQUAL(readable_text("10%\r20%\r"), "20%");
  // BEL and other controls show nothing.
  CAF_CHECK_EQUAL(readable_text("a\x07" "b\x00" "c\x7f\n"s), "abc\n");
}

CAF_TEST(the output of a pipe cut inside a sequence or with hostile moves stays bounded) {
  // A sequence cut short (a head cut from its tail) is dropped as far as it was read.
  CAF_CHECK_EQUAL(readable_text("a\x1b[3"), "a");
  CAF_CHECK_EQUAL(readable_text("a\x1b[3\n\xE2\x80\xA6[9 bytes omitted]\n"), "a\n\xE2\x80\xA6[9 bytes omitted]\n");
  CAF_CHECK_EQUAL(readable_text("a\x1b"), "a");
  // A string (OSC) not ended on its line is no string: only its introducer goes.
  CAF_CHECK_EQUAL(readable_text("a\x1b]0;title\nb\n"), "a0;title\nb\n");
  CAF_CHECK_EQUAL(readable_text("a\x1b]0;t\x1b[31mb\n"), "ab\n");
  // Moves past the line's end pad nothing: what is shown is never longer than what
  // was written.
  CAF_CHECK_EQUAL(readable_text("a\x1b[99999999Cb\x1b[99999999G\n"), "ab\n");
  std::string flood;
  for (int i = 0; i < 1000; ++i)
    flood += "\x1b[200C\x1b[2Kx";
  CAF_CHECK_LESS_OR_EQUAL(readable_text(flood).size(), flood.size());
  // A longer line is handed over in blocks of 16,384 characters, a redraw reaching
  // back to its block's start.
  std::string long_line(20000, 'a');
  CAF_CHECK_EQUAL(readable_text(long_line + "\r\x1b[Kb\n"), std::string(16384, 'a') + "b\n");
  // Erasing to the cursor, or the whole line, blanks what it erases.
  CAF_CHECK_EQUAL(readable_text("abcdef\x1b[3D\x1b[1K\n"), "    ef\n");
  CAF_CHECK_EQUAL(readable_text("abcdef\x1b[3D\x1b[2Kx\n"), "   x\n");
  CAF_CHECK_EQUAL(readable_text("abcdef\x1b[3D\x1b[2K\x1b[2K\x1b[1Kxy\x1b[1K\n"), "     \n");
  // A sequence cut by the end of the bytes so far is held for the next ones, where
  // asked: a look's end cuts output anywhere.
  std::string held;
  CAF_CHECK_EQUAL(readable_text("abc\x1b[3", &held), "abc");
  CAF_CHECK_EQUAL(held, "\x1b[3");
  CAF_CHECK_EQUAL(readable_text(held + "1mred\n"), "red\n");
  held.clear();
  CAF_CHECK_EQUAL(readable_text("a\x1b]8;;http://x", &held), "a");
  CAF_CHECK_EQUAL(readable_text(held + "\x1b\\link\n"), "link\n");
  held.clear();
  CAF_CHECK_EQUAL(readable_text("a\x1b[31mb", &held), "ab");
  CAF_CHECK_EQUAL(held, "");
  // Private sequences (a cursor hidden) show nothing, and a move up stops at the
  // first line.
  CAF_CHECK_EQUAL(readable_text("\x1b[?25lup\x1b[2Aok\x1b[?25h\n"), "upok\n");
}

CAF_TEST(a progress over several lines leaves its last frame) {
  // docker pull's layers: up over them, each redrawn and erased to its end.
  std::string pull = "layer1: 10%\nlayer2: 5%\n";
  for (auto frame : {"50%", "done"})
    pull += fmt::format("\x1b[2A\rlayer1: {}\x1b[K\nlayer2: {}\x1b[K\n", frame, frame);
  CAF_CHECK_EQUAL(readable_text(pull + "pulled\n"), "layer1: done\nlayer2: done\npulled\n");
  // rich (pip): to the start of the line above (CSI F), all below erased (CSI J).
  CAF_CHECK_EQUAL(readable_text("a\nb\nc\n\x1b[3F\x1b[Jdone\n"), "done\n");
  CAF_CHECK_EQUAL(readable_text("x\ny\n\x1b[2F\x1b[1EY\n"), "x\nY\n");
  // In a terminal: the same through its text, CR LF and all.
  CAF_CHECK_EQUAL(shown("a 1%\r\nb 1%\r\n\x1b[2Aa 99%\r\nb 99%\r\n\x1b[1B"), "a 99%\nb 99%\n");
  // A move up stops at the first line a look holds; lines further back than 64, and
  // those above a line of 1,024 characters or more, are handed on as they are, and a
  // move up stops at the first line kept.
  CAF_CHECK_EQUAL(readable_text("\x1b[5Ax\n"), "x\n");
  std::string many;
  for (int i = 0; i < 300; ++i)
    many += fmt::format("L{}\n", i);
  auto redrawn = readable_text(many + "\x1b[400AX");
  CAF_CHECK(redrawn.starts_with("L0\nL1\n"));
  CAF_CHECK(redrawn.find("\nL236\nX237\nL238\n") != std::string::npos);
  CAF_CHECK(redrawn.ends_with("\nL299\n"));
  std::string wide(1024, 'w');
  CAF_CHECK_EQUAL(readable_text("a\n" + wide + "\nb\n\x1b[9AX\n"), "a\n" + wide + "\nX\n");
  // A line as long as a line is kept is handed on with the lines above it, in order,
  // and a move up stops at what is left of it.
  std::string long_line(20000, 'a');
  CAF_CHECK_EQUAL(readable_text("top\n" + long_line + "\x1b[1Ab\n"), "top\n" + long_line + "b\n");
}

CAF_TEST(screen renders rows and cursor) {
  TerminalScreen s(5, 20);
  s.feed("hello\r\nworld");
  auto r = s.render();
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"hello", "world"}));
  CAF_CHECK_EQUAL(r.cursor_row, 1);
  CAF_CHECK_EQUAL(r.cursor_col, 5);
  CAF_CHECK_EQUAL(r.height, 5);
  CAF_CHECK_EQUAL(r.width, 20);
}

CAF_TEST(a flood of lines fed in chunks shows what it shows fed line by line) {
  // The screen leaves out the plain lines of a chunk that scroll off before it ends
  // (libvterm's cost per scrolled line): whatever was on the screen, wherever the
  // cursor was, whatever the lines hold, what shows must not change.
  std::mt19937 random(18);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const std::vector<std::string> pieces{"a", "b", "xyz", " ", "\t", "\r", "\b", "é", "日", "\x7e"};
  int skipped_cases = 0;
  for (int round = 0; round < 1000; ++round) {
    int rows = 2 + pick(8), cols = 4 + pick(20);
    // What was there: text anywhere, the cursor somewhere, colours on.
    std::string before;
    for (int i = 0; i < 6; ++i)
      before += fmt::format("\x1b[{};{}H\x1b[3{}m{}", 1 + pick(rows), 1 + pick(cols), pick(8),
                            std::string(static_cast<size_t>(pick(cols + 3)), static_cast<char>('A' + pick(26))));
    // The cursor somewhere (a line end after it: a line of plain text starts).
    before += fmt::format("\x1b[{};{}H\x1b[0m\n{}\n", 1 + pick(rows), 1 + pick(cols), std::string(pick(3), 'p'));
    if (pick(4) == 0)
      before += fmt::format("\x1b[{};{}H", 1 + pick(rows), 1 + pick(cols)); // or not: nothing may be left out
    // The flood: lines of plain text, some wrapping, some coloured, a few with other sequences.
    std::vector<std::string> lines;
    int n = pick(6 * rows);
    for (int i = 0; i < n; ++i) {
      std::string line;
      for (int k = pick(2 * cols); k > 0; --k)
        line += pieces[static_cast<size_t>(pick(static_cast<int>(pieces.size())))];
      if (pick(3) == 0)
        line = fmt::format("\x1b[3{}m{}\x1b[0m", pick(8), line); // a coloured log
      else if (pick(20) == 0) // a sequence amid the flood: nothing before it may be left out
        line += std::vector<std::string>{fmt::format("\x1b[{}A\x1b[{}Cmoved", 1 + pick(rows), pick(cols)),
                                         "\x1b[?7l", "\x1b[?1049h", "\x1b[?6h\x1b[2;3r", "\x1b[20h",
                                         "\xc2\x9b?7l", "\x1b[2;3r", "\x1b[r", "\x1b[?69h\x1b[2;5s",
                                         fmt::format("\x1b[{}H", 1 + pick(rows))}[static_cast<size_t>(pick(10))];
      line += pick(2) == 0 ? "\r\n" : "\n";
      lines.push_back(line);
    }
    if (pick(2) == 0)
      lines.push_back("tail without end");
    TerminalScreen whole(rows, cols), by_line(rows, cols);
    whole.feed(before);
    by_line.feed(before);
    std::string chunk;
    for (auto& line : lines) {
      chunk += line;
      by_line.feed(line);
    }
    // In pieces as a pty's reads cut them: anywhere, in a sequence or a character too.
    for (size_t at = 0; at < chunk.size();) {
      auto n = pick(3) == 0 ? chunk.size() : static_cast<size_t>(1 + pick(400));
      whole.feed(std::string_view(chunk).substr(at, n));
      at += n;
    }
    auto a = whole.render(), b = by_line.render();
    if (a.rows != b.rows || a.cursor_row != b.cursor_row || a.cursor_col != b.cursor_col)
      CAF_FAIL("round " << round << " (" << rows << "x" << cols << "): fed whole\n" << fmt::format("{}", fmt::join(a.rows, "|\n"))
                        << "\nfed by line\n" << fmt::format("{}", fmt::join(b.rows, "|\n")) << "\nwhat was there "
                        << json_quote(before) << "\nthe flood " << json_quote(chunk));
    skipped_cases += n > 2 * rows + 1;
  }
  CAF_CHECK(skipped_cases > 200); // the floods were long enough to leave lines out
}

namespace {

/// The screen after `before` (chunks, fed as they are) and then `flood` fed whole, and
/// the screen after the same with the flood fed line by line: equal, or the test fails.
void flood_shows_as_by_line(int rows, int cols, const std::vector<std::string>& before, const std::string& flood) {
  TerminalScreen whole(rows, cols), by_line(rows, cols);
  for (auto& chunk : before) {
    whole.feed(chunk);
    by_line.feed(chunk);
  }
  whole.feed(flood);
  for (size_t at = 0; at < flood.size();) {
    auto end = std::min(flood.find('\n', at), flood.size() - 1) + 1;
    by_line.feed(std::string_view(flood).substr(at, end - at));
    at = end;
  }
  auto a = whole.render(), b = by_line.render();
  if (a.rows != b.rows || a.cursor_row != b.cursor_row || a.cursor_col != b.cursor_col)
    CAF_FAIL("after " << json_quote(fmt::format("{}", fmt::join(before, "|"))) << ": fed whole\n"
                      << fmt::format("{}", fmt::join(a.rows, "|\n")) << "\nfed by line\n"
                      << fmt::format("{}", fmt::join(b.rows, "|\n")));
}

std::string lines(const std::string& prefix, int n, const std::string& suffix = "") {
  std::string out;
  for (int i = 1; i <= n; ++i)
    out += fmt::format("{}{:03}{}\r\n", prefix, i, suffix);
  return out;
}

} // namespace

CAF_TEST(lines are not left out after a scroll region or margins however their sequence came) {
  // Cut between two reads, with a sub-parameter or a DEL inside, or set with another mode.
  for (auto before : std::vector<std::vector<std::string>>{{"\x1b[4;", "5r\n"},
                                                           {"\x1b[4;5:1r\n"},
                                                           {"\x1b[4;\x7f" "5r\n"},
                                                           {"\x1b[?69;7h\x1b[1;5s\x1b[H\n"},
                                                           {"\x1b[?6", "9h\x1b[1;5s\x1b[H\n"}})
    flood_shows_as_by_line(6, 20, before, lines("L", 40, "-abcdefgh"));
}

CAF_TEST(lines are not left out while a sequence a line end did not end is open) {
  // C0 controls run inside a sequence without ending it.
  flood_shows_as_by_line(6, 20, {"x\x1b\n"}, "(0\r\n" + lines("LN", 40, "qqq"));
  flood_shows_as_by_line(6, 20, {"\x1b]0;a\nb"}, "\x1b[0m" + lines("L", 40));
}

CAF_TEST(a repeat of the last character repeats it and never stops or crashes the screen) {
  // REP (CSI n b) repeats what was printed last, however many lines were left out since.
  std::string blank_lines;
  for (int i = 0; i < 20; ++i)
    blank_lines += "\r\n";
  flood_shows_as_by_line(6, 20, {"A\r\n"}, "Z\r\n" + blank_lines + "\x1b[5b");
  TerminalScreen s(6, 20);
  s.feed("A\r\nZ\r\n\x1b[4b");
  auto screen = s.render();
  CAF_CHECK_EQUAL(screen.rows.back(), "ZZZZ");
  // libvterm alone looped forever on a REP before any character, and crashed on one
  // after a wide character at the right margin, or on a wide character one column wide.
  TerminalScreen fresh(24, 80);
  fresh.feed("\x1b[b\x1b[3b");
  fresh.feed("\x1b[78G日\x1b[b");
  fresh.feed("\x1b[99999999999b");
  CAF_CHECK(fresh.render().rows.size() >= 1u);
  TerminalScreen narrow(4, 1);
  narrow.feed("日本\r\n");
  narrow.resize(3, 1);
  narrow.feed("語");
  CAF_CHECK(!narrow.render().rows.empty());
}

CAF_TEST(a character cut between two chunks shows on the screen) {
  // A pty's read ends anywhere: libvterm alone showed "ab" + U+FFFD + "cd".
  TerminalScreen s(4, 10);
  s.feed("ab\xc3");
  s.feed("\xa9" "cd\xe6\x97");
  s.feed("\xa5");
  CAF_CHECK_EQUAL(s.render().rows, (std::vector<std::string>{"abécd日"}));
}

CAF_TEST(what follows a sequence left out is read as libvterm would read it with the sequence) {
  // An ESC that the next ESC makes void, in a DCS or an OSC, stayed open in libvterm
  // when the sequence after it was left out or a REP replaced, and the P after the
  // cut opened a DCS whose status query crashed libvterm 0.1.4.
  TerminalScreen dcs(4, 20);
  dcs.feed("\x1bP\x1b\x1b[\x80P$qj\x1b\\");
  auto after_dcs = dcs.render();
  CAF_CHECK_EQUAL(after_dcs.rows, (std::vector<std::string>{"P$qj"}));
  TerminalScreen osc(4, 20);
  osc.feed("A\x1b]0;t\x1b\x1b[3bP$qj\x1b\\");
  auto after_osc = osc.render();
  CAF_CHECK_EQUAL(after_osc.rows, (std::vector<std::string>{"AAAAP$qj"}));
}

CAF_TEST(a sequence left out keeps the controls in it and leaves the parser where libvterm would be) {
  // libvterm does a C0 control inside a CSI where it comes: the line feed inside
  // this cut-short one moves the cursor down.
  TerminalScreen controls(4, 10);
  controls.feed("ab\x1b[1\n\x1b[mcd");
  auto moved = controls.render();
  CAF_CHECK_EQUAL(moved.rows, (std::vector<std::string>{"ab", "  cd"}));
  // An ESC after ESC ( starts anew: ESC c resets, and the screen's state follows.
  TerminalScreen reset(6, 20);
  reset.feed("\x1b[?1049hALT");
  reset.feed("\x1b(\x1b" "c");
  reset.feed("hello");
  reset.resize(6, 20);
  reset.feed("\x1b[?1049l");
  auto after_reset = reset.render();
  CAF_CHECK_EQUAL(after_reset.rows, (std::vector<std::string>{"hello"}));
  // A flood of REPs writes no more than two screens a chunk, and never overflows
  // libvterm's stack (a code point per byte of a write).
  TerminalScreen big(50, 100);
  std::string reps = "x";
  for (int i = 0; i < 584; ++i)
    reps += "\x1b[9999b";
  big.feed(reps);
  auto flooded = big.render();
  CAF_CHECK_EQUAL(flooded.rows.size(), 50u);
}

CAF_TEST(what an APC a PM or a SOS holds is not shown on the screen) {
  // libvterm 0.1.4 printed it: a kitty image's base64 filled the screen.
  TerminalScreen s(4, 30);
  s.feed("apc:\x1b_Gf=100;QUFB\x1b\\|\r\npm:\x1b^privacy\x1b\\|\r\nsos:\x1bXstr");
  s.feed("ing\x1b\\|\r\n\x1b(Xok");
  CAF_CHECK_EQUAL(s.render().rows, (std::vector<std::string>{"apc:|", "pm:|", "sos:|", "ok"}));
}

CAF_TEST(a sequence too long to keep keeps its controls in every chunk it spans) {
  // Past 64 parameter bytes a CSI is dropped; the line feeds inside it are done
  // where they come, as libvterm does them, whichever chunk they came in.
  std::string digits(100, '1');
  TerminalScreen spanned(4, 10);
  spanned.feed("ab\x1b[" + digits + "\n");
  spanned.feed(digits + "\n" + digits);
  spanned.feed(digits + "\nmcd");
  CAF_CHECK_EQUAL(spanned.render().rows, (std::vector<std::string>{"ab", "", "", "  cd"}));
  TerminalScreen whole(4, 10);
  whole.feed("ab\x1b[" + digits + "\n" + digits + "\n" + digits + digits + "\nmcd");
  CAF_CHECK_EQUAL(whole.render().rows, spanned.render().rows);
}

CAF_TEST(a C1 control as UTF-8 is not printed however its bytes came) {
  // U+0080..U+009F: libvterm 0.1.4 printed it as a character of width -1 and, in
  // insert mode on a narrow screen, crashed. Its two bytes may come together, or
  // with controls between them (libvterm's decoder waited for the second across
  // them): then each shows as U+FFFD, as any stray byte does.
  TerminalScreen s(4, 10);
  s.feed("\x1b[4h" "a\xc2\x9b" "b\xc2\xa9");
  auto together = s.render();
  CAF_CHECK_EQUAL(together.rows, (std::vector<std::string>{"ab©"}));
  TerminalScreen narrow(12, 21);
  narrow.feed("\x1b[4h");
  narrow.resize(2, 2);
  narrow.feed("\xc2\r;;\x99m");
  auto apart = narrow.render();
  CAF_CHECK_EQUAL(apart.rows, (std::vector<std::string>{";;", "\xef\xbf\xbd" "m"}));
  TerminalScreen split(4, 10);
  split.feed("x\xc2");
  split.feed("\r;;");
  split.feed("\x99y");
  auto chunks = split.render();
  CAF_CHECK_EQUAL(chunks.rows, (std::vector<std::string>{";;\xef\xbf\xbd" "y"}));
  TerminalScreen latin1(4, 10);
  latin1.feed("x\xc2" "A");
  auto lone = latin1.render();
  CAF_CHECK_EQUAL(lone.rows, (std::vector<std::string>{"x\xef\xbf\xbd" "A"}));
  // A byte past 0x7F ends a CSI as invalid, and what follows it is text.
  TerminalScreen csi(5, 20);
  csi.feed("\x1b[4h" "\x1b[\xa1\xc2\x99m");
  auto after_csi = csi.render();
  CAF_CHECK_EQUAL(after_csi.rows, (std::vector<std::string>{"m"}));
}

CAF_TEST(a screen past the cap keeps the rows nearest the cursor) {
  // Ten rows of ten bytes, the cursor on the fourth: 35 bytes keep it and the rows
  // either side of it; the rest are left out, empty, and counted.
  TerminalScreen s(10, 20);
  for (int row = 0; row < 10; ++row)
    s.feed(fmt::format("\x1b[{};1Hrow {}.....", row + 1, row));
  s.feed("\x1b[4;1H");
  auto whole = s.render();
  CAF_CHECK_EQUAL(whole.omitted_bytes, 0u);
  auto r = s.render(35);
  CAF_REQUIRE_EQUAL(r.rows.size(), 10u);
  CAF_CHECK_EQUAL(r.rows[3], "row 3.....");
  CAF_CHECK_EQUAL(r.rows[2], "row 2.....");
  CAF_CHECK_EQUAL(r.rows[4], "row 4.....");
  CAF_CHECK_EQUAL(r.rows[0], "");
  CAF_CHECK_EQUAL(r.rows[9], "");
  CAF_CHECK_EQUAL(r.omitted_bytes, 70u);
  CAF_CHECK_EQUAL(r.cursor_row, 3);
}

CAF_TEST(a cell shows its character and at most two combining marks) {
  // A cell can hold six code points: a tool filling each with marks would make the
  // screen six times its size.
  TerminalScreen s(2, 10);
  std::string mark = "\xCC\x81"; // U+0301
  s.feed("e" + mark + mark + mark + mark + mark);
  CAF_CHECK_EQUAL(s.render().rows, (std::vector<std::string>{"e" + mark + mark}));
}

CAF_TEST(screen clears and moves the cursor) {
  TerminalScreen s(5, 20);
  s.feed("junk\r\nmore junk");
  s.feed("\x1b[H\x1b[2J\x1b[3;4Hx");
  auto r = s.render();
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"", "", "   x"}));
  CAF_CHECK_EQUAL(r.cursor_row, 2);
  CAF_CHECK_EQUAL(r.cursor_col, 4);
}

CAF_TEST(alternate screen shows new content and restores the old) {
  TerminalScreen s(5, 20);
  s.feed("shell prompt $ ");
  s.feed("\x1b[?1049h\x1b[H\x1b[2Jless page");
  CAF_CHECK_EQUAL(s.render().rows, (std::vector<std::string>{"less page"}));
  s.feed("\x1b[?1049l");
  auto r = s.render();
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"shell prompt $"}));
  CAF_CHECK_EQUAL(r.cursor_col, 15);
}

CAF_TEST(screen resize changes the size) {
  TerminalScreen s(5, 20);
  s.feed("abc");
  s.resize(10, 40);
  auto r = s.render();
  CAF_CHECK_EQUAL(r.height, 10);
  CAF_CHECK_EQUAL(r.width, 40);
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"abc"}));
  s.feed("\x1b[10;40HZ");
  CAF_CHECK_EQUAL(s.render().rows.size(), 10u);
  CAF_CHECK(s.render().rows.back().ends_with("Z"));
}

CAF_TEST(a screen resized keeps its text where the cursor is and the modes keys follow) {
  // Made anew at the new size (libvterm's own resize broke its state): what it showed,
  // the cursor's row kept on screen, and the modes set before (application cursor
  // keys, the line drawing set) still in force.
  TerminalScreen s(6, 20);
  s.feed("\x1b[?1hone\r\ntwo\r\nthree\r\nfour\x1b(0");
  s.resize(3, 10);
  auto r = s.render();
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"two", "three", "four"}));
  CAF_CHECK_EQUAL(r.cursor_row, 2);
  CAF_CHECK_EQUAL(r.cursor_col, 4);
  auto up = s.encode_keys({"Up"});
  CAF_CHECK(up.ok() && *up == "\x1bOA");
  s.feed("q");
  r = s.render();
  CAF_CHECK_EQUAL(r.rows.back(), "four─");
  // In the alternate screen, it stays there.
  TerminalScreen alt(4, 10);
  alt.feed("shell\r\n\x1b[?1049h\x1b[Hfull");
  alt.resize(5, 12);
  alt.feed("\x1b[?1049l");
  r = alt.render();
  CAF_CHECK(r.rows.empty() || r.rows[0] != "full");
}

CAF_TEST(wide characters appear once) {
  TerminalScreen s(3, 10);
  s.feed("\xE4\xB8\xAD\xE6\x96\x87x");
  auto r = s.render();
  CAF_CHECK_EQUAL(r.rows, (std::vector<std::string>{"\xE4\xB8\xAD\xE6\x96\x87x"}));
  CAF_CHECK_EQUAL(r.cursor_col, 5);
}

CAF_TEST(terminal replies to a cursor position query) {
  TerminalScreen s(5, 20);
  s.feed("\x1b[3;7H\x1b[6n");
  CAF_CHECK_EQUAL(s.take_replies(), "\x1b[3;7R");
  CAF_CHECK_EQUAL(s.take_replies(), "");
  s.feed("\x1b[c");
  CAF_CHECK(s.take_replies().starts_with("\x1b[?"));
}

CAF_TEST(keys follow the terminal modes) {
  TerminalScreen s(5, 20);
  // Held in a variable: the check keeps a reference to what it compares.
  auto normal = s.encode_keys({"Up"});
  CAF_REQUIRE(normal);
  CAF_CHECK_EQUAL(*normal, "\x1b[A");
  s.feed("\x1b[?1h"); // application cursor keys, as less and vim set them
  auto application = s.encode_keys({"up"});
  CAF_REQUIRE(application);
  CAF_CHECK_EQUAL(*application, "\x1bOA");
  CAF_CHECK_EQUAL(s.take_replies(), ""); // typed keys are no replies
}

CAF_TEST(named keys and modifiers encode) {
  TerminalScreen s(5, 20);
  auto keys = [&](std::vector<std::string> names) {
    auto r = s.encode_keys(names);
    CAF_REQUIRE(r.ok());
    return *r;
  };
  CAF_CHECK_EQUAL(keys({"C-c"}), "\x03");
  CAF_CHECK_EQUAL(keys({"C-d"}), "\x04");
  CAF_CHECK_EQUAL(keys({"c-C"}), "\x03");
  CAF_CHECK_EQUAL(keys({"C-["}), "\x1b");
  CAF_CHECK_EQUAL(keys({"C-m"}), "\r");
  CAF_CHECK_EQUAL(keys({"Enter"}), "\r");
  CAF_CHECK_EQUAL(keys({"M-b"}), "\x1b"s "b");
  CAF_CHECK_EQUAL(keys({"C-M-x"}), "\x1b\x18");
  CAF_CHECK_EQUAL(keys({"S-a"}), "A");
  CAF_CHECK_EQUAL(keys({"S-Tab"}), "\x1b[Z");
  CAF_CHECK_EQUAL(keys({"Esc", "escape"}), "\x1b\x1b");
  CAF_CHECK_EQUAL(keys({"Backspace", "Tab", "Space"}), "\x7f\t ");
  CAF_CHECK_EQUAL(keys({"F1", "F12", "PageDown", "Delete"}), "\x1bOP\x1b[24~\x1b[6~\x1b[3~");
  CAF_CHECK_EQUAL(keys({"y", "q", "/", "-", "\xC3\xA9"}), "yq/-\xC3\xA9");
  // Ctrl with a digit or / as xterm sends it (the VT220's).
  CAF_CHECK_EQUAL(keys({"C-2", "C-3", "C-7", "C-8", "C-/"}), "\0\x1b\x1f\x7f\x1f"s);
  // As xterm sends them by default, not as CSI u (which bash ran the tail of as a
  // command: `echo a;2ub;5u`).
  CAF_CHECK_EQUAL(keys({"S-Space", "C-Space", "M-Space", "C-S-Space"}), " \0\x1b \0"s);
  CAF_CHECK_EQUAL(keys({"C-Enter", "S-Enter", "M-Enter", "C-M-Enter"}), "\r\r\x1b\r\x1b\r");
  CAF_CHECK_EQUAL(keys({"C-Tab", "C-S-Tab", "M-Tab"}), "\t\x1b[Z\x1b\t");
  CAF_CHECK_EQUAL(keys({"C-Backspace", "S-Backspace", "M-Backspace"}), "\x08\x7f\x1b\x7f");
  CAF_CHECK_EQUAL(keys({"S-Escape", "C-Esc"}), "\x1b\x1b");
  // Alt with a character beyond ASCII: ESC and its UTF-8 (not its low byte alone).
  CAF_CHECK_EQUAL(keys({"M-\xC3\xA9", "S-\xC3\xA9", "M-S-a"}), "\x1b\xC3\xA9\xC3\xA9\x1b" "A");
  CAF_CHECK_EQUAL(keys({}), "");
  CAF_CHECK_EQUAL(s.take_replies(), "");
}

CAF_TEST(the keys form sent as JSON text is typed as keys and other text as written) {
  // A client that checks `input` against a schema of type string (MCP's dialect) can
  // send the keys object only as its text.
  HandleTerminal term(24, 80);
  auto typed = [&](const char* text) {
    auto bytes = term.typed_bytes(Json(text));
    return bytes.ok() ? *bytes : "error: " + bytes.error();
  };
  CAF_CHECK_EQUAL(typed(R"({"keys": ["C-c"]})"), "\x03");
  CAF_CHECK_EQUAL(typed(R"({"text": "ls", "keys": ["Enter"]})"), "ls\r");
  CAF_CHECK_EQUAL(typed(R"({"keys": 1 and more})"), R"({"keys": 1 and more})");
  CAF_CHECK_EQUAL(typed(R"({"text": "no keys"})"), R"({"text": "no keys"})");
  CAF_CHECK(typed(R"({"keys": ["Nope"]})").starts_with("error: unknown key"));
}

CAF_TEST(unknown key is an error naming it) {
  TerminalScreen s(5, 20);
  for (auto bad : {"Foo", "", "ls", "X-a", "F13", "M-"}) {
    auto r = s.encode_keys({"Enter", bad});
    CAF_REQUIRE(!r.ok());
    CAF_CHECK(r.error().find("\""s + bad + "\"") != std::string::npos);
    CAF_CHECK(r.error().find("C- (Ctrl)") != std::string::npos);
  }
  // Ctrl with what no terminal sends it with (libvterm made an escape sequence of it).
  for (auto bad : {"C-1", "C-9", "C-M-0", "C-,", "C-\xC3\xA9"}) {
    auto r = s.encode_keys({bad});
    CAF_REQUIRE(!r.ok());
    CAF_CHECK(r.error().find("unknown key \""s + bad + "\": no terminal sends Ctrl with") != std::string::npos);
  }
  CAF_CHECK_EQUAL(s.take_replies(), "");
  CAF_CHECK(key_help().find("PageUp") != std::string::npos);
}
