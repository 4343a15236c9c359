/* A 64-bit content hash (not cryptographic), 8 bytes per step. */
#ifndef HBG_UTIL_HASH_H
#define HBG_UTIL_HASH_H
#include <stddef.h>
#include <stdint.h>
uint64_t hbg__hash64(const void *data, size_t n);
#endif
