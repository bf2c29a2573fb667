/* Heap accounting for the benchmark: the executable defines malloc and friends, which
 * forward to glibc and count the usable bytes live, their peak and the allocations. */
#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

#include <stdint.h>

/* Starts a measurement: the peak is set to the bytes live now. */
void mc_reset_peak(void);
/* Bytes live now. */
int64_t mc_current_bytes(void);
/* The most bytes live at once since mc_reset_peak(). */
int64_t mc_peak_bytes(void);
/* Allocations made since the program started. */
int64_t mc_allocations(void);
/* Whether the interposition is in effect (glibc called our malloc at least once). */
int mc_is_active(void);

#endif
