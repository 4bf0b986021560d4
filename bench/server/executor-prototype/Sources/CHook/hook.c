#include "CHook.h"
