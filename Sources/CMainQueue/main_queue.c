// Everything is in include/CMainQueue.h; SwiftPM needs one source file per C target.
#include "CMainQueue.h"
