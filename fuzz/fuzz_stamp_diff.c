/* libFuzzer target: hbg compare's stamp check. The input is two stamps,
 * split at the first newline. Whatever the bytes, the check never reads
 * past either stamp, a stamp agrees with itself, the verdict is the same
 * both ways round, and a difference is named in a terminated string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/stampdiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t na = nl ? (size_t)(nl - data) : size, nb = nl ? size - na - 1 : 0;
    /* each stamp its own allocation, unterminated, so ASan sees a read past either */
    char *a = malloc(na ? na : 1), *b = malloc(nb ? nb : 1);
    if (!a || !b)
        abort();
    memcpy(a, data, na);
    if (nb)
        memcpy(b, nl + 1, nb);
    char ab[256], ba[256], aa[256];
    memset(ab, 'x', sizeof ab);
    memset(ba, 'x', sizeof ba);
    bool dab = sd_differ(a, na, b, nb, "A", "B", ab, sizeof ab);
    bool dba = sd_differ(b, nb, a, na, "B", "A", ba, sizeof ba);
    if (dab != dba)
        __builtin_trap();
    if (dab && (!memchr(ab, 0, sizeof ab) || !memchr(ba, 0, sizeof ba)))
        __builtin_trap();
    if (sd_differ(a, na, a, na, "A", "A", aa, sizeof aa) || sd_differ(b, nb, b, nb, "B", "B", aa, sizeof aa))
        __builtin_trap();
    free(a);
    free(b);
    return 0;
}
