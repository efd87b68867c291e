/* The bouncing ball of bounce2.c as an FMI 3.0 model-exchange FMU: states x = (h, v),
   the event indicator h; at the floor h = DBL_MIN, v = -e v, resting below 0.1 m/s.
   Built by tests/fmu_me_events.rs. */
#include <float.h>

#define NX 2
#define NZ 1
#define TOKEN "{morc-bounce3-token}"
#include "me3.h"

enum { TIME = 0, H = 1, DER_H = 2, V = 3, DER_V = 4, G = 5, E = 6 };
#define RESTING aux[0]

static void start(M *m) { m->x[0] = 1; m->x[1] = 0; m->p[0] = -9.81; m->p[1] = 0.7; }
static double *variable(M *m, unsigned vr, size_t *n) {
    *n = 1;
    switch (vr) {
    case TIME: return &m->time;
    case H: return &m->x[0];
    case DER_H: return &m->dx[0];
    case V: return &m->x[1];
    case DER_V: return &m->dx[1];
    case G: return &m->p[0];
    case E: return &m->p[1];
    default: return NULL;
    }
}
static void calculate(M *m) { m->dx[0] = m->x[1]; m->dx[1] = m->RESTING ? 0 : m->p[0]; }
static void indicators(M *m, double *z) { z[0] = m->x[0]; }
static void update(M *m, bool *values_changed) {
    if (m->x[0] <= 0 && m->x[1] < 0) {
        m->x[0] = DBL_MIN;
        m->x[1] = -m->p[1] * m->x[1];
        if (m->x[1] < 0.1) { m->x[1] = 0; m->RESTING = 1; }
        *values_changed = true;
    }
}
