/* A bouncing ball, FMI 2.0 model exchange, after the Modelica Reference FMUs'
   BouncingBall: height h and velocity v (states), der(v) = g; the event indicator is h.
   When the ball reaches the floor falling (h <= 0, v < 0) the event re-initialises it:
   h = DBL_MIN (just above the floor, so the indicator does not cross again), v = -e v;
   below v_min = 0.1 m/s it rests (v = 0, no more gravity). With the Integer parameter
   max_bounces > 0 the FMU asks to terminate the simulation at that bounce.
   Built by tests/fmu_me_events.rs. */
#include <float.h>

#define NR 6
#define NI 1
#define NX 2
#define NZ 1
#define STATES { H, V }
#define DERIVATIVES { DER_H, DER_V }
#define TOKEN "{morc-bounce2-token}"
enum { H = 0, DER_H = 1, V = 2, DER_V = 3, G = 4, E = 5 };
enum { MAX_BOUNCES = 0 };

#include "me2.h"

#define RESTING aux[0]
#define BOUNCES aux[1]

static void start(M *m) { m->r[H] = 1; m->r[V] = 0; m->r[G] = -9.81; m->r[E] = 0.7; }
static void calculate(M *m) {
    m->r[DER_H] = m->r[V];
    m->r[DER_V] = m->RESTING ? 0 : m->r[G];
}
static void indicators(M *m, double *z) { z[0] = m->r[H]; }
static void update(M *m, EventInfo *info) {
    if (m->r[H] <= 0 && m->r[V] < 0) {
        m->r[H] = DBL_MIN;
        m->r[V] = -m->r[E] * m->r[V];
        if (m->r[V] < 0.1) { m->r[V] = 0; m->RESTING = 1; }
        info->valuesOfContinuousStatesChanged = 1;
        m->BOUNCES += 1;
        if (m->i[MAX_BOUNCES] > 0 && m->BOUNCES >= m->i[MAX_BOUNCES]) info->terminateSimulation = 1;
    }
}
