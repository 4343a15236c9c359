/* How much of an address range is resident, read back from the kernel
 * with mincore(): the tests of what a reservation, a stack commit or a
 * bind pass makes resident. */
#ifndef HBG_TEST_SUPPORT_RESIDENT_H
#define HBG_TEST_SUPPORT_RESIDENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The resident pages among those that hold a byte of [lo, hi) (hi > lo);
 * *pages, when given, says how many pages that is. Fails the test when
 * mincore refuses the range. */
static inline size_t ts_resident(uintptr_t lo, uintptr_t hi, size_t *pages)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    lo &= ~(page - 1);
    size_t n = (hi - lo + page - 1) / page;
    unsigned char *vec = malloc(n ? n : 1);
    assert_non_null(vec);
    assert_int_equal(mincore((void *)lo, n * page, vec), 0);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += vec[i] & 1;
    free(vec);
    if (pages)
        *pages = n;
    return k;
}

#endif
