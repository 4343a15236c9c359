/* 64-bit content hashes (not cryptographic). */
#ifndef HBG_UTIL_HASH_H
#define HBG_UTIL_HASH_H
#include <stddef.h>
#include <stdint.h>
/* Short texts: a callable's name, logged as its hid. */
uint64_t hbg__hash64(const void *data, size_t n);
/* A Definition image: XXH3-64 (seed 0, the default secret). */
uint64_t hbg__image_hash(const void *data, size_t n);
/* Settles which code path hbg__image_hash takes, so that the first
 * Definition a process hashes does not pay for choosing it; for creation
 * time, not the bind path. */
void hbg__image_hash_prepare(void);
#endif
