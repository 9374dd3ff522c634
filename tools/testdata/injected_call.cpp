// Not part of sluice: a fixture for tools/forbidden_calls (see tools/CMakeLists.txt). It
// makes four real forbidden calls, which the source scan and, once compiled, the symbol scan
// must both report, among decoys neither may report.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace {

// Members named like the forbidden functions, for the member-call decoys below. The scan
// reports a declaration like a call, so these are declared with parenthesised names, which
// it does not see.
struct Handle {
  int(kill)(int sig) { return sig; }
  int(exit)(int code) { return code; }
};

int skill(int level) { return level; }
int exit_code(int code) { return code; }
int kill_now(int pid) { return pid; }

}  // namespace

// Decoys: kill(1, 9) in this comment, and in the ones, strings and members below.
/* exit(0); abort(); */
const char* decoy_text() { return "exit(0) kill(1, 9)"; }
const char* decoy_raw() { return R"(abort())"; }
const char* decoy_raw_delimited() { return R"x(system("ls") )" execv(")x"; }
char decoy_char() { return '('; }
int decoy_calls(Handle& x, Handle* p) {
  return skill(3) + x.kill(2) + p->exit(0) + exit_code(1) + kill_now(0);
}

// The real calls, one per function so that none is dead code after a noreturn call.
int injected_kill() { return ::kill(1, 9); }
int injected_exec() {
  char* argv[] = {nullptr};
  return execvp("x", argv);
}
void injected_exit() { std::exit(1); }
void injected_abort() { abort(); }
