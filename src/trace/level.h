/* A log level's name as a stamp and `hbg run --log-level` spell it: in
 * lower case, where a record's [LEVEL] field is in upper case. One table
 * (level.c) for both, so the stamp's HBG_LOG_LEVEL= and its command's
 * --log-level can never spell one level two ways. */
#ifndef HBG_TRACE_LEVEL_H
#define HBG_TRACE_LEVEL_H

#include "hbg/trace.h"

const char *hbg__level_lower(hbg_level l); /* "debug" ... "off"; "?" if out of range */

#endif
