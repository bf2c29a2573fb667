/* Headers only: SwiftPM needs a source file in every C target. */
#include "CEpoll.h"
