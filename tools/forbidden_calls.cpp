// forbidden_calls: the static check behind invariants §4, rows gw_self_reexec,
// gw_exit_from_request_path and kill_by_name. sluice's own code may exec, fork, signal,
// spawn, exit or abort only in the spawner and signal wrapper (src/process/child.cpp) and in
// main() (src/main.cpp). This tool is a test helper, not part of sluice, and is not scanned.
//
//   forbidden_calls source --root DIR [--expect NAMES] PATH...
//     Scans the C++ files at PATH (relative to DIR; a directory is walked for .cpp .cc .cxx
//     .hpp .h .hh .ipp .inl). Prints "PATH:LINE: forbidden call NAME" for each.
//   forbidden_calls symbols [--nm NM] [--expect NAMES] OBJECT...
//     Runs `NM -u --format=posix` on each object file (an argument may hold several,
//     separated by ';', as CMake's $<TARGET_OBJECTS> gives them) and prints
//     "OBJECT: forbidden symbol NAME" for each undefined forbidden symbol.
//
// Exit status: 0 when nothing was found; 1 when something was; 2 on a usage or I/O error
// (an unreadable file, nm failing, nothing to scan). With `--expect a,b,c` the status is 0
// only when the names found are exactly a, b, c in report order (the self-tests use it).
//
// Source scan. Comments (`//`, including backslash-continued lines, and `/* */`), string
// literals (with any u8/u/U/L prefix, and raw strings `R"delim(...)delim"`) and character
// literals are blanked first, keeping newlines, so line numbers stay right; a `'` inside a
// number is a digit separator, not a literal. Then each identifier equal to a forbidden name
// and followed by `(` is a call: plain `name(`, global `::name(`, and qualified `std::name(`
// or `ns::name(` (a process-level name in another namespace, like Boost.Process's
// `bp::system`, is as forbidden as libc's). Member calls `x.name(` and `p->name(` are not
// reported: a member is not the libc function (CLI11's `app.exit(e)` only formats a
// message). Identifiers that merely contain a name (`skill(`, `exit_code`, `kill_now(`) are
// other identifiers. A declaration or definition of a function with a forbidden name
// (`bool abort(...)`) looks like a call and is reported as one: sluice should not name its
// own functions after these. Deliberately not caught by this scan: a name used without a
// call (`&::kill`, `std::function f = kill`), a parenthesised name (`(kill)(pid, sig)`), and
// a call spelled through a macro; the symbol scan catches all three for the C functions,
// since any use of them leaves an undefined symbol. `syscall` is itself a forbidden name, so
// `syscall(SYS_kill, ...)` is reported whatever its arguments.
//
// Exemptions: an unqualified call in a listed file that resolves to sluice's own function of
// the same name (today one: `Evaluator::abort` in src/schema/validate.cpp, which stops
// a schema walk). Qualified calls (`::abort(`, `std::abort(`) in that file are still
// reported, and the symbol scan still sees a real `abort`. An exemption that matches
// nothing in a scanned file is reported too, so it cannot outlive its reason.
//
// Symbol scan. Precise where the source scan is heuristic: it sees the C functions an
// object really references, whatever the spelling. `nm -u` over every sluice object in the
// RelWithDebInfo, Debug and asan builds shows `kill` and `posix_spawn` in child.cpp.o only,
// and no `abort`, `exit` or `raise` anywhere: assertions in our code and in
// libstdc++/Boost/fmt headers reach abort through glibc's `__assert_fail` (Debug and asan),
// and exception and noexcept paths through libstdc++'s `std::terminate` (`_ZSt9terminatev`,
// 9 of 30 objects), both defined outside our objects. So `abort` stays in the symbol scan,
// and `__assert_fail` and `std::terminate` are not reported (an assertion is how a condition
// that cannot happen is written; a terminate reference is emitted by the compiler). An
// explicit `std::terminate()` call is reported by the source scan.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Functions that exec, fork, signal, spawn, end the process or make a raw system call.
constexpr auto kSymbolNames = std::to_array<std::string_view>({
    "execl",    "execle",       "execlp",  "execv",      "execve",      "execvp",
    "execvpe",  "execveat",     "fexecve", "fork",       "vfork",       "clone",
    "clone3",   "kill",         "killpg",  "tgkill",     "tkill",       "pidfd_send_signal",
    "sigqueue", "pthread_kill", "system",  "popen",      "posix_spawn", "posix_spawnp",
    "exit",     "_exit",        "_Exit",   "quick_exit", "abort",       "raise",
    "syscall",
});

// The source scan also reports `terminate(` (an explicit std::terminate is an abort); as a
// symbol it is emitted by the compiler for noexcept and exception paths.
constexpr std::string_view kSourceOnlyName = "terminate";

struct AllowedSource {
  std::string_view path;           // relative to the source root
  std::string_view object_suffix;  // the tail of its object file's path, as CMake names it
};

constexpr auto kAllowed = std::to_array<AllowedSource>({
    {"src/process/child.cpp", "/sluice_process.dir/process/child.cpp.o"},
    {"src/main.cpp", "/sluice.dir/main.cpp.o"},
});

struct Exemption {
  std::string_view path;  // relative to the source root
  std::string_view name;  // unqualified calls of this name in that file are sluice's own
};

constexpr auto kExemptions = std::to_array<Exemption>({
    {"src/schema/validate.cpp", "abort"},  // Evaluator::abort stops a schema walk
});

struct Finding {
  std::string where;    // "path:line", a path, or an object file
  std::string name;     // what --expect compares: the forbidden name, or "unused_exemption"
  std::string message;  // printed after `where`
};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool is_source_name(std::string_view name) {
  return name == kSourceOnlyName ||
         std::find(kSymbolNames.begin(), kSymbolNames.end(), name) != kSymbolNames.end();
}

// Replaces every character of [from, to) but newlines with a space.
void blank(std::string& text, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to && i < text.size(); ++i) {
    if (text[i] != '\n') text[i] = ' ';
  }
}

// The identifier characters immediately before `at` in `text` (a literal's prefix).
std::string_view identifier_before(std::string_view text, std::size_t at) {
  std::size_t begin = at;
  while (begin > 0 && is_ident_char(text[begin - 1])) --begin;
  return text.substr(begin, at - begin);
}

// True when the `'` at `at` continues a number (a digit separator, as in 1'000 or 0x1'f).
bool quote_is_digit_separator(std::string_view text, std::size_t at) {
  std::size_t begin = at;
  while (begin > 0 &&
         (is_ident_char(text[begin - 1]) || text[begin - 1] == '.' || text[begin - 1] == '\'')) {
    --begin;
  }
  while (begin < at && text[begin] == '.') ++begin;
  return begin < at && is_digit(text[begin]);
}

// The end (one past the closing quote) of the "..." or '...' literal opening at `at`; an
// unterminated literal ends at the end of its line.
std::size_t quoted_end(std::string_view text, std::size_t at) {
  const char quote = text[at];
  std::size_t i = at + 1;
  while (i < text.size()) {
    if (text[i] == '\\') {
      i += 2;
    } else if (text[i] == quote) {
      return i + 1;
    } else if (text[i] == '\n') {
      return i;
    } else {
      ++i;
    }
  }
  return text.size();
}

// The end of the raw string whose opening quote is at `at`, or nullopt when what follows is
// not a valid raw-string delimiter (then it is read as an ordinary literal).
std::optional<std::size_t> raw_string_end(std::string_view text, std::size_t at) {
  constexpr std::size_t kMaxDelimiter = 16;
  std::size_t open = text.find('(', at + 1);
  if (open == std::string_view::npos || open - at - 1 > kMaxDelimiter) return std::nullopt;
  std::string_view delimiter = text.substr(at + 1, open - at - 1);
  if (delimiter.find_first_of(" \t\n\\)\"") != std::string_view::npos) return std::nullopt;
  std::string terminator = ")" + std::string(delimiter) + "\"";
  std::size_t close = text.find(terminator, open + 1);
  return close == std::string_view::npos ? text.size() : close + terminator.size();
}

// `source` with comments and string and character literals blanked (newlines kept).
std::string strip_comments_and_literals(std::string_view source) {
  std::string out(source);
  std::size_t i = 0;
  while (i < source.size()) {
    const char c = source[i];
    const char next = i + 1 < source.size() ? source[i + 1] : '\0';
    std::size_t end = i + 1;
    if (c == '/' && next == '/') {
      end = i + 2;
      while (end < source.size() && source[end] != '\n') {
        // A backslash at the end of the line continues the comment on the next one.
        std::size_t splice = end + 1;
        if (source[end] == '\\' && splice < source.size() && source[splice] == '\r') ++splice;
        bool continued = source[end] == '\\' && splice < source.size() && source[splice] == '\n';
        end = continued ? splice + 1 : end + 1;
      }
    } else if (c == '/' && next == '*') {
      std::size_t close = source.find("*/", i + 2);
      end = close == std::string_view::npos ? source.size() : close + 2;
    } else if (c == '"') {
      std::string_view prefix = identifier_before(out, i);
      bool raw =
          prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR";
      std::optional<std::size_t> raw_end = raw ? raw_string_end(source, i) : std::nullopt;
      end = raw_end ? *raw_end : quoted_end(source, i);
    } else if (c == '\'' && !quote_is_digit_separator(out, i)) {
      end = quoted_end(source, i);
    } else {
      ++i;
      continue;
    }
    blank(out, i, end);
    i = end;
  }
  return out;
}

struct Call {
  std::size_t line;
  std::string name;
  bool qualified;  // written as `::name(` or `scope::name(`
};

// Calls of forbidden names in comment- and literal-free `code`; member calls are skipped.
std::vector<Call> find_calls(std::string_view code) {
  std::vector<Call> calls;
  std::size_t line = 1;
  std::size_t i = 0;
  auto previous_non_space = [&](std::size_t at) -> std::optional<std::size_t> {
    while (at > 0) {
      --at;
      if (std::isspace(static_cast<unsigned char>(code[at])) == 0) return at;
    }
    return std::nullopt;
  };
  while (i < code.size()) {
    const char c = code[i];
    if (c == '\n') ++line;
    if (!is_ident_start(c) && !is_digit(c)) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < code.size() &&
           (is_ident_char(code[end]) || (is_digit(c) && (code[end] == '.' || code[end] == '\'')))) {
      ++end;
    }
    std::string_view name = code.substr(i, end - i);
    if (!is_digit(c) && is_source_name(name)) {
      std::size_t after = end;
      while (after < code.size() && std::isspace(static_cast<unsigned char>(code[after])) != 0) {
        ++after;
      }
      std::optional<std::size_t> before = previous_non_space(i);
      bool member = before && (code[*before] == '.' ||
                               (code[*before] == '>' && *before > 0 && code[*before - 1] == '-'));
      bool qualified = before && code[*before] == ':' && *before > 0 && code[*before - 1] == ':';
      if (after < code.size() && code[after] == '(' && !member) {
        calls.push_back({line, std::string(name), qualified});
      }
    }
    i = end;
  }
  return calls;
}

bool is_allowed_source(std::string_view path) {
  return std::any_of(kAllowed.begin(), kAllowed.end(),
                     [&](const AllowedSource& a) { return a.path == path; });
}

bool is_allowed_object(std::string_view object) {
  return std::any_of(kAllowed.begin(), kAllowed.end(),
                     [&](const AllowedSource& a) { return object.ends_with(a.object_suffix); });
}

bool is_scanned_extension(const fs::path& path) {
  static constexpr auto kExtensions =
      std::to_array<std::string_view>({".cpp", ".cc", ".cxx", ".hpp", ".h", ".hh", ".ipp", ".inl"});
  std::string ext = path.extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

// The files under `root` named by `paths`, relative to `root`, sorted; nullopt (after a
// message) when a path does not exist.
std::optional<std::vector<std::string>> collect_sources(const fs::path& root,
                                                        const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& arg : paths) {
    fs::path full = root / arg;
    std::error_code ec;
    if (fs::is_directory(full, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(full, ec)) {
        if (entry.is_regular_file() && is_scanned_extension(entry.path())) {
          files.push_back(entry.path().lexically_relative(root).generic_string());
        }
      }
    } else if (fs::is_regular_file(full, ec)) {
      files.push_back(full.lexically_relative(root).generic_string());
    } else {
      std::cerr << "forbidden_calls: no such file or directory: " << full.string() << "\n";
      return std::nullopt;
    }
    if (ec) {
      std::cerr << "forbidden_calls: cannot walk " << full.string() << ": " << ec.message() << "\n";
      return std::nullopt;
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

// Source findings in `files` (relative to `root`); nullopt after a message on an I/O error.
std::optional<std::vector<Finding>> scan_sources(const fs::path& root,
                                                 const std::vector<std::string>& files) {
  std::vector<Finding> findings;
  for (const std::string& file : files) {
    if (is_allowed_source(file)) continue;
    std::optional<std::string> text = read_file(root / file);
    if (!text) {
      std::cerr << "forbidden_calls: cannot read " << file << "\n";
      return std::nullopt;
    }
    std::vector<Call> calls = find_calls(strip_comments_and_literals(*text));
    for (const Exemption& exemption : kExemptions) {
      if (exemption.path != file) continue;
      auto is_exempt = [&](const Call& call) {
        return !call.qualified && call.name == exemption.name;
      };
      if (std::none_of(calls.begin(), calls.end(), is_exempt)) {
        findings.push_back({file, "unused_exemption",
                            "exemption for " + std::string(exemption.name) +
                                " matched nothing; remove it from kExemptions"});
      }
      std::erase_if(calls, is_exempt);
    }
    for (const Call& call : calls) {
      findings.push_back(
          {file + ":" + std::to_string(call.line), call.name, "forbidden call " + call.name});
    }
  }
  return findings;
}

// The standard output of `nm -u --format=posix object`; nullopt after a message on failure.
std::optional<std::string> run_nm(const std::string& nm, const std::string& object) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::cerr << "forbidden_calls: pipe: " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string arg_u = "-u", arg_format = "--format=posix";
  std::string program = nm, path = object;
  std::array<char*, 5> argv = {program.data(), arg_u.data(), arg_format.data(), path.data(),
                               nullptr};
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, nm.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    std::cerr << "forbidden_calls: cannot run " << nm << ": " << std::strerror(rc) << "\n";
    return std::nullopt;
  }
  std::string output;
  std::array<char, 4096> buffer{};
  while (true) {
    ssize_t n = read(fds[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer.data(), static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "forbidden_calls: " << nm << " failed on " << object << "\n";
    return std::nullopt;
  }
  return output;
}

// Forbidden undefined symbols in `nm -u --format=posix` output ("name type [value size]").
std::vector<std::string> forbidden_symbols(std::string_view nm_output) {
  std::vector<std::string> names;
  std::istringstream lines{std::string(nm_output)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, type;
    if (!(fields >> name >> type)) continue;
    name = name.substr(0, name.find('@'));  // a versioned reference, kill@GLIBC_2.2.5
    if (std::find(kSymbolNames.begin(), kSymbolNames.end(), name) != kSymbolNames.end()) {
      names.push_back(name);
    }
  }
  return names;
}

std::optional<std::vector<Finding>> scan_objects(const std::string& nm,
                                                 const std::vector<std::string>& objects) {
  std::vector<Finding> findings;
  for (const std::string& object : objects) {
    if (is_allowed_object(object)) continue;
    std::optional<std::string> output = run_nm(nm, object);
    if (!output) return std::nullopt;
    for (const std::string& name : forbidden_symbols(*output)) {
      findings.push_back({object, name, "forbidden symbol " + name});
    }
  }
  return findings;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  while (true) {
    std::size_t at = text.find(separator);
    if (!text.substr(0, at).empty()) parts.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

int usage() {
  std::cerr << "usage: forbidden_calls source --root DIR [--expect NAMES] PATH...\n"
               "       forbidden_calls symbols [--nm NM] [--expect NAMES] OBJECT...\n";
  return 2;
}

// Prints the findings; the exit status as the header comment describes it.
int report(const std::vector<Finding>& findings, std::size_t scanned,
           const std::optional<std::vector<std::string>>& expected) {
  std::vector<std::string> names;
  for (const Finding& f : findings) {
    std::cout << f.where << ": " << f.message << "\n";
    names.push_back(f.name);
  }
  std::cerr << "forbidden_calls: scanned " << scanned << ", found " << findings.size() << "\n";
  if (!expected) return findings.empty() ? 0 : 1;
  if (names == *expected) return 0;
  std::cerr << "forbidden_calls: expected exactly:";
  for (const std::string& name : *expected) std::cerr << " " << name;
  std::cerr << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string_view mode = argv[1];
  if (mode != "source" && mode != "symbols") return usage();
  std::optional<std::string> root;
  std::string nm = "nm";
  std::optional<std::vector<std::string>> expected;
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--root" && has_value) {
      root = argv[++i];
    } else if (arg == "--nm" && has_value) {
      nm = argv[++i];
    } else if (arg == "--expect" && has_value) {
      expected = split(argv[++i], ',');
    } else if (arg.starts_with("--")) {
      return usage();
    } else {
      for (std::string& part : split(arg, ';')) inputs.push_back(std::move(part));
    }
  }
  if (inputs.empty()) {
    std::cerr << "forbidden_calls: nothing to scan\n";
    return 2;
  }
  if (mode == "source") {
    if (!root) return usage();
    std::optional<std::vector<std::string>> files = collect_sources(*root, inputs);
    if (!files) return 2;
    if (files->empty()) {
      std::cerr << "forbidden_calls: no C++ files under the given paths\n";
      return 2;
    }
    std::optional<std::vector<Finding>> findings = scan_sources(*root, *files);
    return findings ? report(*findings, files->size(), expected) : 2;
  }
  std::optional<std::vector<Finding>> findings = scan_objects(nm, inputs);
  return findings ? report(*findings, inputs.size(), expected) : 2;
}
