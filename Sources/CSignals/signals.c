#include "CSignals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t forward_fd = -1;

static void forward(int number) {
  int saved = errno;  // the interrupted code may be about to read errno
  unsigned char byte = (unsigned char)number;
  // A full pipe (hundreds of unread signals) drops this one: the reader already has plenty.
  ssize_t ignored = write(forward_fd, &byte, 1);
  (void)ignored;
  errno = saved;
}

static void shutdown_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGHUP);
}

int csignals_forward_shutdown_signals(int fd) {
  forward_fd = fd;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = forward;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  int numbers[] = {SIGTERM, SIGINT, SIGHUP};
  for (unsigned i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
    if (sigaction(numbers[i], &action, NULL) != 0) return -1;
  }
  // Signals that arrived while blocked (since the executable's first instruction, see
  // CStartupSignals) are delivered here, to the handler just installed.
  sigset_t set;
  shutdown_signals(&set);
  return pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0 ? 0 : -1;
}

void csignals_block_shutdown_signals(void) {
  sigset_t set;
  shutdown_signals(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}
