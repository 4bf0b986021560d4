#include "CStartupSignals.h"

#include <signal.h>

static void block_shutdown_signals(int argc, char **argv, char **envp) {
  (void)argc;
  (void)argv;
  (void)envp;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  // Threads inherit the mask, so every thread the runtime starts keeps them blocked too.
  pthread_sigmask(SIG_BLOCK, &set, 0);
}

__attribute__((section(".preinit_array"), used)) static void (*const block_early)(
    int, char **, char **) = block_shutdown_signals;

int cstartupsignals_linked(void) { return 1; }
