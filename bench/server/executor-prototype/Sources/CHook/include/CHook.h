#ifndef CHOOK_H
#define CHOOK_H
#include <stdint.h>
int _dispatch_get_main_queue_handle_4CF(void);
void _dispatch_main_queue_callback_4CF(void *message);
static inline int chook_handle(void) { return _dispatch_get_main_queue_handle_4CF(); }
static inline void chook_drain(void) { _dispatch_main_queue_callback_4CF(0); }
#endif
