/*
 * gr_tuning_default.h - the policy for every architecture without one of its
 * own (sm_80, sm_100, ...). Nothing has been measured on those GPUs: each
 * entry is the sm_90 one (gr_tuning_sm90.h), the best figure known, so a
 * build for another GPU runs exactly the code an H200 runs. An architecture
 * gets its own header (and a case in gr_tuning_for) once it has been measured
 * with the commands named in gr_tuning_sm90.h.
 */
#ifndef GR_TUNING_DEFAULT_H
#define GR_TUNING_DEFAULT_H

#include "gr_tuning_sm90.h"

#define GR_DEFAULT_FAST_LOADS GR_SM90_FAST_LOADS
#define GR_DEFAULT_EXACT_BATCH GR_SM90_EXACT_BATCH
#define GR_DEFAULT_EXACT_MINB(BLOCK) GR_SM90_EXACT_MINB(BLOCK)
#define GR_DEFAULT_STATS_MINB(BLOCK) GR_SM90_STATS_MINB(BLOCK)

GR_TUNING_FN gr_tuning_t gr_tuning_default(int family, int dtype) { return gr_tuning_sm90(family, dtype); }

#endif /* GR_TUNING_DEFAULT_H */
