// Forwarding of the shutdown signals (SIGTERM, SIGINT, SIGHUP) to a pipe, for StateServer.
// In C because a signal handler may only call async-signal-safe functions: a Swift closure can
// reach the runtime (lazy globals, reference counting), which is not.
#ifndef CSIGNALS_H
#define CSIGNALS_H

// Installs a handler for SIGTERM, SIGINT and SIGHUP that writes the signal's number as one
// byte to `fd` (the write end of a pipe; make it non-blocking), then unblocks the three signals
// in the calling thread. Returns 0, or -1 with errno set.
int csignals_forward_shutdown_signals(int fd);

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and in threads it creates later).
void csignals_block_shutdown_signals(void);

#endif
