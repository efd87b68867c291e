/* A discrete input, FMI 2.0 model exchange: der(x) = n + u with the Integer input n
   (discrete) and the Real input u (continuous); the Integer output m is n as of the last
   event. fmi2SetInteger in continuous-time mode returns fmi2Error (FMI 2.0 allows
   discrete inputs to change only in initialisation and event mode). Built by
   tests/fmu_me_events.rs. */
#define NR 3
#define NI 2
#define NX 1
#define NZ 0
#define STATES { X }
#define DERIVATIVES { DER_X }
#define TOKEN "{morc-dinput2-token}"
enum { X = 0, DER_X = 1, U = 2 };
enum { N = 0, MIRROR = 1 };

#include "me2.h"

static void start(M *m) {}
static void calculate(M *m) { m->r[DER_X] = m->i[N] + m->r[U]; }
static void indicators(M *m, double *z) {}
static void update(M *m, EventInfo *info) { m->i[MIRROR] = m->i[N]; }
