#include "cli/doctor_report.hpp"

#include "core/display.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace sluice::cli::doctor {
namespace bj = boost::json;
namespace {

constexpr std::size_t kStatusIndent = 8;   // "  FAIL  "
constexpr std::size_t kSettingName = 31;   // the name column of the settings table
constexpr std::size_t kSettingValue = 14;  // the value column
constexpr std::size_t kSettingIndent = 2 + kSettingName + 1;

// Terminal columns of escaped (display-safe) text: one per code point.
std::size_t columns(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

// The byte length of the first `cols` columns of `text`.
std::size_t prefix_bytes(std::string_view text, std::size_t cols) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == cols) break;
  }
  return i;
}

// `text` (already display-safe) after `first` on its first line, wrapped at spaces to
// kReportWidth with `indent` spaces on each following line; a word longer than a line is cut.
std::string wrapped(std::string first, std::string_view text, std::size_t indent) {
  std::string out;
  std::string line = std::move(first);
  bool bare = true;  // no word on `line` yet
  auto next_line = [&] {
    out += line + "\n";
    line.assign(indent, ' ');
    bare = true;
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!bare && columns(line) + 1 + columns(word) > kReportWidth) next_line();
    if (!bare) line += ' ';
    while (columns(line) + columns(word) > kReportWidth) {
      const std::size_t cut = prefix_bytes(word, kReportWidth - columns(line));
      line += word.substr(0, cut);
      word.remove_prefix(cut);
      next_line();
    }
    if (word.empty()) continue;
    line += word;
    bare = false;
  }
  out += line + "\n";
  return out;
}

std::string status_label(Status status) {
  switch (status) {
    case Status::ok:
      return "  ok    ";
    case Status::warn:
      return "  warn  ";
    case Status::fail:
      return "  FAIL  ";
  }
  return "  FAIL  ";
}

std::string check_lines(const Check& c) {
  std::string text = c.subject.empty() ? c.detail : c.subject + ": " + c.detail;
  std::string out = wrapped(status_label(c.status), core::display_safe(text), kStatusIndent);
  if (!c.fix.empty()) {
    out += wrapped(std::string(kStatusIndent, ' ') + "fix: ", core::display_safe(c.fix),
                   kStatusIndent + 5);
  }
  return out;
}

std::string padded(std::string text, std::size_t width) {
  const std::size_t n = columns(text);
  if (n < width) text.append(width - n, ' ');
  return text;
}

// `name  value  source` in columns; a value too long for its column is followed by its
// source in parentheses instead.
std::string setting_lines(const Setting& s) {
  const std::string name = padded("  " + core::display_safe(s.name), 2 + kSettingName) + " ";
  const std::string value = core::display_safe(s.value);
  const std::string source = core::display_safe(s.source);
  if (columns(value) <= kSettingValue) {
    return wrapped(name + padded(value, kSettingValue) + " ", source, kSettingIndent);
  }
  return wrapped(name, value + " (" + source + ")", kSettingIndent);
}

std::string summary_line(const Tally& t) {
  std::string failed = t.fail == 0   ? std::string("no check failed")
                       : t.fail == 1 ? std::string("1 check failed")
                                     : fmt::format("{} checks failed", t.fail);
  return fmt::format("{}, {} warning{}, {} ok\n", failed, t.warn, t.warn == 1 ? "" : "s", t.ok);
}

}  // namespace

std::string human_report(const std::vector<Check>& checks, const std::vector<Setting>& settings) {
  std::string out;
  std::string section;
  for (const Check& c : checks) {
    if (c.section != section) {
      section = c.section;
      out += (out.empty() ? "" : "\n") + core::display_safe(section) + "\n";
    }
    out += check_lines(c);
  }
  if (!settings.empty()) {
    out += "\nSettings (informational: value, then where it came from)\n";
    for (const Setting& s : settings) out += setting_lines(s);
  }
  out += "\n" + summary_line(tally(checks));
  return out;
}

std::string json_report(const std::vector<Check>& checks, const std::vector<Setting>& settings) {
  bj::array check_rows;
  for (const Check& c : checks) {
    bj::object row;
    row["id"] = c.id;
    row["section"] = c.section;
    row["subject"] = c.subject;
    row["status"] = status_name(c.status);
    row["detail"] = c.detail;
    row["fix"] = c.fix.empty() ? bj::value(nullptr) : bj::value(c.fix);
    check_rows.push_back(std::move(row));
  }
  bj::array setting_rows;
  for (const Setting& s : settings) {
    setting_rows.push_back(bj::object{{"name", s.name}, {"value", s.value}, {"source", s.source}});
  }
  const Tally t = tally(checks);
  bj::object out{{"checks", std::move(check_rows)},
                 {"settings", std::move(setting_rows)},
                 {"summary", bj::object{{"ok", t.ok}, {"warn", t.warn}, {"fail", t.fail}}}};
  return bj::serialize(out) + "\n";
}

}  // namespace sluice::cli::doctor
