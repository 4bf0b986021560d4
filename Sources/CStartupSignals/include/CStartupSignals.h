// Linking this module into an executable blocks SIGTERM, SIGINT and SIGHUP before any other
// code of the process runs (an entry in .preinit_array, which the dynamic loader calls before
// every constructor). Without it, a signal in the first milliseconds after spawn, while the
// Swift runtime and Foundation initialise, kills the process with the default action.
// `Server.run` installs the real handler and unblocks them; a signal in between stays pending.
#ifndef CSTARTUPSIGNALS_H
#define CSTARTUPSIGNALS_H

// Referenced from Swift so that the module is linked; does nothing else.
int cstartupsignals_linked(void);

#endif
