// Not part of sluice and never compiled: source-scan input for tools/forbidden_calls (see
// tools/CMakeLists.txt). Each line that hides a decoy in a comment or literal ends with one
// real call, which the scan must still see (so nothing is blanked past its end); the scan
// must report exactly: fork, popen, raise, _exit, system, clone, quick_exit, killpg,
// posix_spawn, terminate, vfork.
void lexing() {
  int big = 1'000'000; fork();
  const char quote = '"'; popen("x", "r");
  const char* escaped = "\"exit(1)\" \\"; raise(2);
  const char* raw = u8R"--(kill(1, 9) )" )--"; _exit(3);
  const wchar_t* wide = LR"(abort())"; system("x");
  const char16_t* prefixed = u"exit(1)"; clone(0);
  /* kill(1, 9)
     exit(2) */ quick_exit(4);
  // a comment continued on the next line \
  kill(1, 9);
  killpg(2, 9);
  long hex = 0x1'f; std :: posix_spawn(0);
  x.system(); p->raise(); skill(1); exit_code(2); kill_now(3); fork_count = 1;
  std::terminate(); vfork /* a comment between name and parenthesis */ ();
}
