// libdispatch's hooks for a run loop that drives the main queue, as CoreFoundation's run loop
// does: an eventfd that becomes readable when main-queue work (the main actor's jobs) is
// enqueued, and the call that runs that work on the calling (main) thread. Exported by
// libdispatch for CoreFoundation; declared here because no public header has them.
#ifndef CMAINQUEUE_H
#define CMAINQUEUE_H

int _dispatch_get_main_queue_handle_4CF(void);
void _dispatch_main_queue_callback_4CF(void *message);

// The handle of the main queue (Linux: an eventfd).
static inline int cmainqueue_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }

// Runs the main queue's pending work on the calling thread, which must be the main thread.
static inline void cmainqueue_drain(void) { _dispatch_main_queue_callback_4CF(0); }

#endif
