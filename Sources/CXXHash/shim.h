#if __has_include(<xxhash.h>)
#include <xxhash.h>
#endif
