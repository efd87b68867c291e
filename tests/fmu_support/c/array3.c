/* Three decays in one FMI 3.0 state array: der(x) = -k .* x (x, k: 3-element arrays),
   and a 3-element event indicator z = x - 0.5: when x[i] falls to 0.5 the event sets it
   back to 1. The FMU refuses state vectors that are not 3 long ("expected nx=3").
   Outputs y1, y2, y3 are the elements. Built by tests/fmu_me_events.rs. */
#define NX 3
#define NZ 3
#define TOKEN "{morc-array3-token}"
#include "me3.h"

enum { TIME = 0, X = 1, DER_X = 2, K = 3, Y1 = 4, Y2 = 5, Y3 = 6, Z = 7 };

static void start(M *m) {
    for (int i = 0; i < 3; i++) { m->x[i] = 1; m->p[i] = i + 1; }
}
static double *variable(M *m, unsigned vr, size_t *n) {
    *n = 1;
    switch (vr) {
    case TIME: return &m->time;
    case X: *n = 3; return m->x;
    case DER_X: *n = 3; return m->dx;
    case K: *n = 3; return m->p;
    case Y1: case Y2: case Y3: return &m->x[vr - Y1];
    case Z: *n = 3; return &m->aux[0];
    default: return NULL;
    }
}
static void calculate(M *m) {
    for (int i = 0; i < 3; i++) { m->dx[i] = -m->p[i] * m->x[i]; m->aux[i] = m->x[i] - 0.5; }
}
static void indicators(M *m, double *z) {
    for (int i = 0; i < 3; i++) z[i] = m->x[i] - 0.5;
}
static void update(M *m, bool *values_changed) {
    for (int i = 0; i < 3; i++) {
        if (m->x[i] <= 0.5) { m->x[i] = 1; *values_changed = true; }
    }
}
