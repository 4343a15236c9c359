/* Synthetic bind logs for the comparison tests: either runtime's grammar,
 * any number of ranks and rounds, segment durations from a seeded
 * generator so every figure is known, and knobs for what a comparison
 * must notice (a slower host_orch, a moved control segment, a contended
 * repetition, a different stamp or exact figure). */
#ifndef HBG_TEST_COMPARE_GEN_H
#define HBG_TEST_COMPARE_GEN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cg_spec {
    bool original;          /* the original runtime's grammar */
    const char *commit;     /* the stamp's commit; NULL: no stamp line */
    const char *env_extra;  /* appended to the stamp's assignments, or NULL */
    int ranks, rounds;      /* passes per rank = rounds (the first is cold) */
    uint64_t seed;          /* the noise; the same seed gives the same log */
    double noise;           /* relative amplitude of the per-pass jitter, e.g. 0.01 */
    double control_noise;   /* runtime_init's own, when not 0 */
    double host_orch_scale; /* 1.10: host_orch 10 % slower in every pass */
    double control_scale;   /* runtime_init's scale */
    double all_scale;       /* every segment (a contended machine) */
    uint64_t heap_used;     /* 0: 127673344 */
    bool drop_graph_upload; /* a different segment set */
} cg_spec;

/* A spec with the defaults: ours, commit c, 1 rank, 6 rounds, 1 % noise. */
cg_spec cg_default(const char *commit, uint64_t seed);

/* Writes the log into dir under name; returns its path (malloc'd). Fails
 * the test when the file cannot be written. */
char *cg_write(const char *dir, const char *name, const cg_spec *s);

/* A fresh temporary directory (malloc'd). */
char *cg_tempdir(void);

#endif
