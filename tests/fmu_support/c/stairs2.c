/* A staircase driven by time events, FMI 2.0 model exchange: the Integer output `count`
   starts at 1 and rises by one every `period` s (a time event: nextEventTime), and the
   state x integrates it (der(x) = count), so a step that does not end exactly on an
   event time shows in x. Built by tests/fmu_me_events.rs. */
#define NR 3
#define NI 1
#define NX 1
#define NZ 0
#define STATES { X }
#define DERIVATIVES { DER_X }
#define TOKEN "{morc-stairs2-token}"
enum { X = 0, DER_X = 1, PERIOD = 2 };
enum { COUNT = 0 };

#include "me2.h"

#define NEXT aux[0]
#define STARTED aux[1]

static void start(M *m) { m->r[PERIOD] = 0.1234; m->i[COUNT] = 1; }
static void calculate(M *m) { m->r[DER_X] = m->i[COUNT]; }
static void indicators(M *m, double *z) {}
static void update(M *m, EventInfo *info) {
    if (!m->STARTED) {
        m->STARTED = 1;
        m->NEXT = m->time + m->r[PERIOD];
    } else if (m->time >= m->NEXT - 1e-9 * m->NEXT) {
        m->i[COUNT] += 1;
        m->NEXT += m->r[PERIOD];
    }
    info->nextEventTimeDefined = 1;
    info->nextEventTime = m->NEXT;
}
