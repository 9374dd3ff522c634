#pragma once
// SignalsBlocked: blocks every signal in the calling thread while it lives, so that a thread
// started meanwhile (it inherits the mask) never takes a signal: signals go to the loop's
// thread, and a worker's file I/O is never interrupted. The destructor restores the mask.
// Threading: a scope guard of one thread.
#include <pthread.h>
#include <signal.h>

namespace sluice::core {

class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t previous_{};
};

}  // namespace sluice::core
