/* Heap accounting for the benchmark: the executable defines malloc and friends, which
 * forward to glibc and count the usable bytes live, their peak and the allocations. */
#ifndef CMALLOCCOUNTER_H
#define CMALLOCCOUNTER_H

#include <stdint.h>

/* Turns counting on (it is off at start). Blocks allocated before then are not counted
 * when freed either, so only differences taken after this call mean anything. */
void mc_start_counting(void);
/* Starts a measurement: the peak is set to the bytes live now. */
void mc_reset_peak(void);
/* Bytes live now. */
int64_t mc_current_bytes(void);
/* The most bytes live at once since mc_reset_peak(). */
int64_t mc_peak_bytes(void);
/* Allocations made since the program started. */
int64_t mc_allocations(void);
/* Whether the interposition is in effect (counting is on and saw an allocation). */
int mc_is_active(void);

#endif
