/* The FMI 3.0 model-exchange API around one small model with Float64 variables only,
   for morc's event tests (bounce3.c, array3.c include it). The model file defines,
   before including this:
     NX, NZ       continuous state and event indicator elements
     TOKEN        the instantiation token
   and, after it, these functions (M: the instance, below; its states are m->x, their
   derivatives m->dx, its parameters m->p):
     start(m)                       start values
     variable(m, vr, &n)            where the Float64 variable `vr` lives and its n elements, or NULL
     calculate(m)                   m->dx and outputs from time and states
     indicators(m, z)               the NZ event indicators
     update(m, values_changed)      one event iteration
   Every call checks the mode FMI 3.0 allows it in, and the state and indicator vectors
   must have NX and NZ elements (else it logs why and returns fmi3Error). FMPy binds
   every FMI 3 function: those these models do not offer return fmi3Error. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Log)(void *env, int status, const char *category, const char *message);
enum Mode { INSTANTIATED, INITIALIZATION, EVENT, CONTINUOUS, TERMINATED };
static const char *MODE_NAMES[] = { "instantiated", "initialization", "event", "continuous-time", "terminated" };

typedef struct {
    void *env;
    Log log;
    enum Mode mode;
    double time, x[NX], dx[NX], p[8], aux[8];
} M;

static void start(M *m);
static double *variable(M *m, unsigned vr, size_t *n);
static void calculate(M *m);
static void indicators(M *m, double *z);
static void update(M *m, bool *values_changed);

static int fail(M *m, const char *fmt, ...) {
    char text[256];
    va_list a;
    va_start(a, fmt);
    vsnprintf(text, sizeof text, fmt, a);
    va_end(a);
    if (m->log) m->log(m->env, 3, "logStatusError", text);
    return 3;
}
#define ALLOW(m, call, allowed) \
    if (!((allowed) & (1 << (m)->mode))) return fail(m, call " is not allowed in %s mode", MODE_NAMES[(m)->mode])
#define RUNNING ((1 << INITIALIZATION) | (1 << EVENT) | (1 << CONTINUOUS))

const char *fmi3GetVersion(void) { return "3.0"; }
int fmi3SetDebugLogging(void *c, bool on, size_t n, const char *const *categories) { return 0; }

void *fmi3InstantiateModelExchange(const char *name, const char *token, const char *resources, bool visible, bool logging, void *env, Log log) {
    if (strcmp(token, TOKEN) != 0) {
        if (log) log(env, 3, "logStatusError", "wrong instantiation token");
        return NULL;
    }
    M *m = calloc(1, sizeof(M));
    m->env = env; m->log = log;
    start(m);
    return m;
}
void *fmi3InstantiateCoSimulation(void) { return NULL; }
void *fmi3InstantiateScheduledExecution(void) { return NULL; }
void fmi3FreeInstance(void *c) { free(c); }
int fmi3EnterInitializationMode(void *c, bool tolerance_defined, double tolerance, double start_time, bool stop_defined, double stop) {
    M *m = c;
    ALLOW(m, "fmi3EnterInitializationMode", 1 << INSTANTIATED);
    m->time = start_time; m->mode = INITIALIZATION;
    return 0;
}
int fmi3ExitInitializationMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi3ExitInitializationMode", 1 << INITIALIZATION);
    calculate(m);
    m->mode = EVENT;
    return 0;
}
int fmi3EnterEventMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi3EnterEventMode", (1 << EVENT) | (1 << CONTINUOUS));
    m->mode = EVENT;
    return 0;
}
int fmi3Terminate(void *c) { ((M *)c)->mode = TERMINATED; return 0; }
int fmi3Reset(void *c) {
    M *m = c;
    void *env = m->env; Log log = m->log;
    memset(m, 0, sizeof *m);
    m->env = env; m->log = log;
    start(m);
    return 0;
}

int fmi3GetFloat64(void *c, const uint32_t *vr, size_t nvr, double *v, size_t nv) {
    M *m = c;
    size_t k = 0, n;
    calculate(m);
    for (size_t i = 0; i < nvr; i++) {
        const double *x = variable(m, vr[i], &n);
        if (!x) return fail(m, "fmi3GetFloat64: no Float64 has value reference %u", vr[i]);
        if (k + n > nv) return fail(m, "fmi3GetFloat64: %zu values for more elements", nv);
        for (size_t j = 0; j < n; j++) v[k++] = x[j];
    }
    return k == nv ? 0 : fail(m, "fmi3GetFloat64: %zu values for %zu elements", nv, k);
}
int fmi3SetFloat64(void *c, const uint32_t *vr, size_t nvr, const double *v, size_t nv) {
    M *m = c;
    size_t k = 0, n;
    for (size_t i = 0; i < nvr; i++) {
        double *x = variable(m, vr[i], &n);
        if (!x) return fail(m, "fmi3SetFloat64: no Float64 has value reference %u", vr[i]);
        if (k + n > nv) return fail(m, "fmi3SetFloat64: %zu values for more elements", nv);
        for (size_t j = 0; j < n; j++) x[j] = v[k++];
    }
    return k == nv ? 0 : fail(m, "fmi3SetFloat64: %zu values for %zu elements", nv, k);
}

int fmi3UpdateDiscreteStates(void *c, bool *again, bool *terminate, bool *nominals_changed, bool *values_changed, bool *next_defined, double *next) {
    M *m = c;
    ALLOW(m, "fmi3UpdateDiscreteStates", 1 << EVENT);
    *again = false; *terminate = false; *nominals_changed = false; *values_changed = false; *next_defined = false; *next = 0;
    calculate(m);
    update(m, values_changed);
    calculate(m);
    return 0;
}
int fmi3EnterContinuousTimeMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi3EnterContinuousTimeMode", 1 << EVENT);
    m->mode = CONTINUOUS;
    return 0;
}
int fmi3CompletedIntegratorStep(void *c, bool no_prior, bool *enter_event_mode, bool *terminate) {
    M *m = c;
    ALLOW(m, "fmi3CompletedIntegratorStep", 1 << CONTINUOUS);
    *enter_event_mode = false; *terminate = false;
    return 0;
}
int fmi3SetTime(void *c, double t) {
    M *m = c;
    ALLOW(m, "fmi3SetTime", (1 << EVENT) | (1 << CONTINUOUS));
    m->time = t;
    return 0;
}
int fmi3SetContinuousStates(void *c, const double *x, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi3SetContinuousStates", 1 << CONTINUOUS);
    if (nx != NX) return fail(m, "fmi3SetContinuousStates: expected nx=%d but was %zu", NX, nx);
    memcpy(m->x, x, sizeof m->x);
    return 0;
}
int fmi3GetContinuousStates(void *c, double *x, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi3GetContinuousStates", RUNNING);
    if (nx != NX) return fail(m, "fmi3GetContinuousStates: expected nx=%d but was %zu", NX, nx);
    memcpy(x, m->x, sizeof m->x);
    return 0;
}
int fmi3GetContinuousStateDerivatives(void *c, double *dx, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi3GetContinuousStateDerivatives", RUNNING);
    if (nx != NX) return fail(m, "fmi3GetContinuousStateDerivatives: expected nx=%d but was %zu", NX, nx);
    calculate(m);
    memcpy(dx, m->dx, sizeof m->dx);
    return 0;
}
int fmi3GetEventIndicators(void *c, double *z, size_t nz) {
    M *m = c;
    ALLOW(m, "fmi3GetEventIndicators", RUNNING);
    if (nz != NZ) return fail(m, "fmi3GetEventIndicators: expected nz=%d but was %zu", NZ, nz);
    indicators(m, z);
    return 0;
}
int fmi3GetNominalsOfContinuousStates(void *c, double *x, size_t nx) {
    for (size_t k = 0; k < nx; k++) x[k] = 1.0;
    return 0;
}
int fmi3GetNumberOfEventIndicators(void *c, size_t *n) { *n = NZ; return 0; }
int fmi3GetNumberOfContinuousStates(void *c, size_t *n) { *n = NX; return 0; }

/* Not offered: other types, FMU state, derivatives, clocks, co-simulation, configuration. */
#define NOT_OFFERED(f) int f(void *c) { return fail(c, #f ": not offered by this model"); }
NOT_OFFERED(fmi3ActivateModelPartition) NOT_OFFERED(fmi3DeserializeFMUState) NOT_OFFERED(fmi3DoStep)
NOT_OFFERED(fmi3EnterConfigurationMode) NOT_OFFERED(fmi3EnterStepMode) NOT_OFFERED(fmi3EvaluateDiscreteStates)
NOT_OFFERED(fmi3ExitConfigurationMode) NOT_OFFERED(fmi3FreeFMUState) NOT_OFFERED(fmi3GetAdjointDerivative)
NOT_OFFERED(fmi3GetBinary) NOT_OFFERED(fmi3GetBoolean) NOT_OFFERED(fmi3GetClock) NOT_OFFERED(fmi3GetDirectionalDerivative)
NOT_OFFERED(fmi3GetFMUState) NOT_OFFERED(fmi3GetFloat32) NOT_OFFERED(fmi3GetInt16) NOT_OFFERED(fmi3GetInt32)
NOT_OFFERED(fmi3GetInt64) NOT_OFFERED(fmi3GetInt8) NOT_OFFERED(fmi3GetIntervalDecimal) NOT_OFFERED(fmi3GetIntervalFraction)
NOT_OFFERED(fmi3GetNumberOfVariableDependencies) NOT_OFFERED(fmi3GetOutputDerivatives) NOT_OFFERED(fmi3GetShiftDecimal)
NOT_OFFERED(fmi3GetShiftFraction) NOT_OFFERED(fmi3GetString) NOT_OFFERED(fmi3GetUInt16) NOT_OFFERED(fmi3GetUInt32)
NOT_OFFERED(fmi3GetUInt64) NOT_OFFERED(fmi3GetUInt8) NOT_OFFERED(fmi3GetVariableDependencies)
NOT_OFFERED(fmi3SerializeFMUState) NOT_OFFERED(fmi3SerializedFMUStateSize) NOT_OFFERED(fmi3SetBinary)
NOT_OFFERED(fmi3SetBoolean) NOT_OFFERED(fmi3SetClock) NOT_OFFERED(fmi3SetFMUState) NOT_OFFERED(fmi3SetFloat32)
NOT_OFFERED(fmi3SetInt16) NOT_OFFERED(fmi3SetInt32) NOT_OFFERED(fmi3SetInt64) NOT_OFFERED(fmi3SetInt8)
NOT_OFFERED(fmi3SetIntervalDecimal) NOT_OFFERED(fmi3SetIntervalFraction) NOT_OFFERED(fmi3SetShiftDecimal)
NOT_OFFERED(fmi3SetShiftFraction) NOT_OFFERED(fmi3SetString) NOT_OFFERED(fmi3SetUInt16) NOT_OFFERED(fmi3SetUInt32)
NOT_OFFERED(fmi3SetUInt64) NOT_OFFERED(fmi3SetUInt8)
