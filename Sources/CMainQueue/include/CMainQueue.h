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

// Gives the allocator's free memory back to the system (glibc's malloc_trim): called by the
// main loop once it has been idle for a moment. <malloc.h> is not in Swift's Glibc module.
#if __has_include(<malloc.h>)
#include <malloc.h>  // first: it defines __GLIBC__ when the C library is glibc
#endif
#if defined(__GLIBC__)
static inline void cmainqueue_trim_free_memory(void) { (void)malloc_trim(0); }
#else
static inline void cmainqueue_trim_free_memory(void) {}
#endif

#endif
