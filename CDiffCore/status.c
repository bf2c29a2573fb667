#include "CDiffCore.h"

const char *dc_status_message(dc_status_t status) {
    switch (status) {
    case DC_OK: return "ok";
    case DC_ERR_NULL_POINTER: return "a required buffer is NULL";
    case DC_ERR_TOO_MANY_ROWS: return "too many rows (the limit is 2147483646 a side)";
    case DC_ERR_WORKSPACE_TOO_SMALL: return "the workspace is smaller than the size query asked for";
    case DC_ERR_WORKSPACE_MISALIGNED: return "the workspace is not 8-byte aligned";
    case DC_ERR_CAPACITY_TOO_SMALL: return "an output buffer is smaller than its count";
    case DC_ERR_INVALID_ARGUMENT: return "an argument is out of range";
    case DC_ERR_WRONG_STATE: return "a pass was called out of order";
    case DC_ERR_TOO_MANY_COLLISIONS: return "too many distinct identities share identity keys";
    }
    return "unknown status";
}
