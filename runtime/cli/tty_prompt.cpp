#include "runtime/cli/tty_prompt.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>

#include "messages/terminal_safe.hpp"

namespace jp {

namespace {

constexpr int kTries = 5; // answers read before a prompt gives up

/// A line typed on the terminal; nullopt at its end or once `cancel_fd` is readable.
std::optional<std::string> read_line(std::FILE* tty, int cancel_fd) {
  // The terminal is line-buffered (canonical mode): readable means a whole line.
  pollfd fds[2] = {{::fileno(tty), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
  while (true) {
    int n = ::poll(fds, cancel_fd >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || (cancel_fd >= 0 && fds[1].revents != 0))
      return std::nullopt;
    if (fds[0].revents != 0)
      break;
  }
  char buf[4096];
  if (!std::fgets(buf, sizeof buf, tty))
    return std::nullopt;
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

/// After an answer that is none of those offered: says so, and what a last one
/// means when no more are read (`tries` made so far of `kTries`).
void not_an_answer(std::FILE* tty, std::string_view offered, int tries, std::string_view given_up) {
  if (tries + 1 < kTries)
    fmt::print(tty, "not one of {}; type one, then Enter\n", offered);
  else
    fmt::print(tty, "not one of {}; {}\n", offered, given_up);
}

} // namespace

std::optional<Json> tty_ask(const std::string& tool, const Question& q, int cancel_fd) {
  std::FILE* tty = std::fopen("/dev/tty", "r+");
  if (!tty)
    return std::nullopt;
  std::optional<Json> answer;
  auto deflt = q.default_json.empty() ? Result<Json>(Error{""}) : Json::parse(q.default_json);
  // Enter alone answers the default only where it is an answer the question takes.
  if (deflt) {
    auto& k = q.answer_type.kind;
    auto& opts = q.answer_type.options;
    bool fits = k == answer_kind::boolean ? deflt->is_bool()
                : k == answer_kind::select
                  ? deflt->is_string() && std::find(opts.begin(), opts.end(), deflt->as_string()) != opts.end()
                  : deflt->is_string();
    if (!fits)
      deflt = Error{""};
  }
  // What a tool asks, and a model's arguments, cannot drive the terminal or
  // disguise what is asked.
  auto text = terminal_safe(q.text);
  if (!q.pre_amble.empty())
    fmt::print(tty, "{}\n", terminal_safe(q.pre_amble));
  // What Enter alone answers, shown as a prompt shows it: [Y/n], [y/N], [default: x].
  auto shown_default = [&]() -> std::string {
    if (!deflt)
      return {};
    return fmt::format(" [default: {}]", terminal_safe(deflt->as_string()));
  };
  for (int tries = 0; tries < kTries && !answer; ++tries) {
    switch (q.answer_type.kind) {
      case answer_kind::boolean:
        fmt::print(tty, "[{}] {} {} ", tool, text,
                   deflt && deflt->is_bool() ? (deflt->as_bool() ? "[Y/n]" : "[y/N]") : "[y/n]");
        break;
      case answer_kind::select:
        fmt::print(tty, "[{}] {} ({}){} ", tool, text,
                   terminal_safe(fmt::format("{}", fmt::join(q.answer_type.options, "/"))), shown_default());
        break;
      case answer_kind::text: fmt::print(tty, "[{}] {}{} ", tool, text, shown_default()); break;
    }
    std::fflush(tty);
    auto line = read_line(tty, cancel_fd);
    if (!line)
      break;
    if (line->empty() && deflt) {
      answer = *deflt;
      break;
    }
    switch (q.answer_type.kind) {
      case answer_kind::boolean: {
        std::string said = *line; // Y, Yes, NO: as any y/n prompt takes them
        for (auto& c : said)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (said == "y" || said == "yes")
          answer = Json(true);
        else if (said == "n" || said == "no")
          answer = Json(false);
        break;
      }
      case answer_kind::select:
        for (auto& o : q.answer_type.options)
          if (o == *line)
            answer = Json(o);
        break;
      case answer_kind::text: answer = Json(*line); break;
    }
    if (!answer)
      not_an_answer(tty,
                    q.answer_type.kind == answer_kind::boolean
                      ? "y, n"
                      : terminal_safe(fmt::format("{}", fmt::join(q.answer_type.options, ", "))),
                    tries, "the question goes unanswered");
  }
  std::fclose(tty);
  return answer;
}

std::optional<PermissionReply> tty_ask_permission(const std::string& tool, const Json& args, int cancel_fd,
                                                  const std::string& about) {
  std::FILE* tty = std::fopen("/dev/tty", "r+");
  if (!tty)
    return std::nullopt;
  std::optional<PermissionReply> reply;
  fmt::print(tty, "[{}] wants to run with {}\n", tool, terminal_safe(args.dump()));
  if (!about.empty())
    fmt::print(tty, "  ({})\n", terminal_safe(about));
  for (int tries = 0; tries < kTries && !reply; ++tries) {
    fmt::print(tty, "Allow? [y]es / yes for this [t]urn / [n]o / no, and tell the assistant [w]hy (then Enter): ");
    std::fflush(tty);
    auto line = read_line(tty, cancel_fd);
    if (!line)
      break;
    if (*line == "y" || *line == "yes")
      reply = PermissionReply{permission_answer::yes, {}};
    else if (*line == "t")
      reply = PermissionReply{permission_answer::yes_for_turn, {}};
    else if (*line == "n" || *line == "no")
      reply = PermissionReply{permission_answer::no, {}};
    else if (*line == "w") {
      fmt::print(tty, "Why (the assistant reads this): ");
      std::fflush(tty);
      auto why = read_line(tty, cancel_fd);
      if (!why)
        break;
      reply = PermissionReply{permission_answer::no_with_reason, *why};
    } else {
      not_an_answer(tty, "y, t, n, w", tries, "not allowed");
    }
  }
  std::fclose(tty);
  return reply;
}

std::optional<InterruptChoice> tty_interrupt_menu(interrupted_while what, int cancel_fd) {
  std::FILE* tty = std::fopen("/dev/tty", "r+");
  if (!tty)
    return std::nullopt;
  std::optional<InterruptChoice> choice;
  fmt::print(tty, "\n\njp-actors: interrupted while {}.\n",
             what == interrupted_while::streaming ? "the assistant answers" : "tools run");
  for (int tries = 0; tries < kTries && !choice; ++tries) {
    fmt::print(tty, "[s]top the turn / [c]ontinue / [r]eply to the assistant, then Enter (Ctrl-C again aborts "
                    "everything): ");
    std::fflush(tty);
    auto line = read_line(tty, cancel_fd);
    if (!line)
      break;
    if (*line == "s" || *line == "stop") {
      choice = InterruptChoice{InterruptChoice::action::stop, {}};
    } else if (*line == "c" || *line == "continue") {
      choice = InterruptChoice{InterruptChoice::action::resume, {}};
    } else if (*line == "r" || *line == "reply") {
      fmt::print(tty, "Reply (the assistant reads this): ");
      std::fflush(tty);
      auto text = read_line(tty, cancel_fd);
      if (!text)
        break;
      choice = InterruptChoice{InterruptChoice::action::reply, *text};
    } else {
      not_an_answer(tty, "s, c, r", tries, "the turn stops");
    }
  }
  if (choice)
    fmt::print(tty, "\n");
  std::fclose(tty);
  return choice;
}

} // namespace jp
