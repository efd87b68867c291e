/* The FMI 2.0 model-exchange API around one small model, for morc's event tests
   (bounce2.c, stairs2.c, dinput2.c include it). The model file defines, before
   including this:
     NR, NI       how many Real and Integer variables (indexed by value reference)
     NX, NZ       continuous states and event indicators
     STATES       the value references of the states, DERIVATIVES those of their derivatives
     TOKEN        the GUID
   and, after it, these functions (M: the instance, below):
     start(m)                  start values
     calculate(m)              derivatives and outputs from time, states and inputs
     indicators(m, z)          the NZ event indicators
     update(m, info)           one event iteration (fmi2NewDiscreteStates)
   The instance is strict where morc must be: every call checks the mode FMI 2.0 allows
   it in (§3.2.3), Integer and Boolean inputs are refused in continuous-time mode, and
   the state and indicator vectors must have NX and NZ elements, else the call logs why
   and returns fmi2Error. FMPy binds every FMI 2 function: those these models do not
   offer (FMU state, directional derivatives) return fmi2Error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Logger)(void *env, const char *instance, int status, const char *category, const char *message, ...);
typedef struct { Logger logger; void *allocate; void *free; void *step_finished; void *env; } Callbacks;
typedef struct {
    int newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged, valuesOfContinuousStatesChanged,
        nextEventTimeDefined;
    double nextEventTime;
} EventInfo;

enum Mode { INSTANTIATED, INITIALIZATION, EVENT, CONTINUOUS, TERMINATED };
static const char *MODE_NAMES[] = { "instantiated", "initialization", "event", "continuous-time", "terminated" };

typedef struct {
    Callbacks cb;
    char name[64];
    enum Mode mode;
    double time, r[NR];
    int i[NI];
    double aux[8]; /* the model's own */
} M;

static const int STATE_VRS[] = STATES;
static const int DERIVATIVE_VRS[] = DERIVATIVES;

static void start(M *m);
static void calculate(M *m);
static void indicators(M *m, double *z);
static void update(M *m, EventInfo *info);

static int fail(M *m, const char *fmt, ...) {
    char text[256];
    va_list a;
    va_start(a, fmt);
    vsnprintf(text, sizeof text, fmt, a);
    va_end(a);
    /* The text as the message itself: importers (FMPy, morc) do not format the arguments. */
    if (m->cb.logger) m->cb.logger(m->cb.env, m->name, 3, "logStatusError", text);
    return 3;
}
/* The call is allowed in the modes of `allowed` (a bit per mode). */
#define ALLOW(m, call, allowed) \
    if (!((allowed) & (1 << (m)->mode))) return fail(m, call " is not allowed in %s mode", MODE_NAMES[(m)->mode])
#define ALL ((1 << INSTANTIATED) | (1 << INITIALIZATION) | (1 << EVENT) | (1 << CONTINUOUS) | (1 << TERMINATED))
#define RUNNING ((1 << INITIALIZATION) | (1 << EVENT) | (1 << CONTINUOUS))

const char *fmi2GetTypesPlatform(void) { return "default"; }
const char *fmi2GetVersion(void) { return "2.0"; }
int fmi2SetDebugLogging(void *c, int on, size_t n, const char *const *categories) { return 0; }

void *fmi2Instantiate(const char *name, int type, const char *guid, const char *resources, const Callbacks *cb, int visible, int logging) {
    if (type != 0 || strcmp(guid, TOKEN) != 0) {
        if (cb && cb->logger) cb->logger(cb->env, name, 3, "logStatusError", type != 0 ? "model exchange only" : "wrong GUID");
        return NULL;
    }
    M *m = calloc(1, sizeof(M));
    m->cb = *cb;
    strncpy(m->name, name, sizeof m->name - 1);
    start(m);
    return m;
}
void fmi2FreeInstance(void *c) { free(c); }
int fmi2SetupExperiment(void *c, int tolerance_defined, double tolerance, double start_time, int stop_defined, double stop) {
    M *m = c;
    ALLOW(m, "fmi2SetupExperiment", 1 << INSTANTIATED);
    m->time = start_time;
    return 0;
}
int fmi2EnterInitializationMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi2EnterInitializationMode", 1 << INSTANTIATED);
    m->mode = INITIALIZATION;
    return 0;
}
int fmi2ExitInitializationMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi2ExitInitializationMode", 1 << INITIALIZATION);
    calculate(m);
    m->mode = EVENT;
    return 0;
}
int fmi2Terminate(void *c) { ((M *)c)->mode = TERMINATED; return 0; }
int fmi2Reset(void *c) {
    M *m = c;
    memset(m->r, 0, sizeof m->r); memset(m->i, 0, sizeof m->i); memset(m->aux, 0, sizeof m->aux);
    m->mode = INSTANTIATED; m->time = 0;
    start(m);
    return 0;
}

int fmi2GetReal(void *c, const unsigned *vr, size_t n, double *v) {
    M *m = c;
    ALLOW(m, "fmi2GetReal", ALL);
    calculate(m);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) return fail(m, "fmi2GetReal: no Real has value reference %u", vr[k]);
        v[k] = m->r[vr[k]];
    }
    return 0;
}
int fmi2SetReal(void *c, const unsigned *vr, size_t n, const double *v) {
    M *m = c;
    ALLOW(m, "fmi2SetReal", ALL);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) return fail(m, "fmi2SetReal: no Real has value reference %u", vr[k]);
        m->r[vr[k]] = v[k];
    }
    return 0;
}
int fmi2GetInteger(void *c, const unsigned *vr, size_t n, int *v) {
    M *m = c;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NI) return fail(m, "fmi2GetInteger: no Integer has value reference %u", vr[k]);
        v[k] = m->i[vr[k]];
    }
    return 0;
}
/* FMI 2.0 §3.2.3: discrete inputs are set in initialisation or event mode, never in continuous-time mode. */
int fmi2SetInteger(void *c, const unsigned *vr, size_t n, const int *v) {
    M *m = c;
    ALLOW(m, "fmi2SetInteger", (1 << INSTANTIATED) | (1 << INITIALIZATION) | (1 << EVENT));
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NI) return fail(m, "fmi2SetInteger: no Integer has value reference %u", vr[k]);
        m->i[vr[k]] = v[k];
    }
    return 0;
}
int fmi2GetBoolean(void *c, const unsigned *vr, size_t n, int *v) { return n ? fail(c, "fmi2GetBoolean: the model has no Boolean") : 0; }
int fmi2SetBoolean(void *c, const unsigned *vr, size_t n, const int *v) { return n ? fail(c, "fmi2SetBoolean: the model has no Boolean") : 0; }
int fmi2GetString(void *c, const unsigned *vr, size_t n, const char **v) { return n ? fail(c, "fmi2GetString: the model has no String") : 0; }
int fmi2SetString(void *c, const unsigned *vr, size_t n, const char *const *v) { return n ? fail(c, "fmi2SetString: the model has no String") : 0; }

int fmi2EnterEventMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi2EnterEventMode", (1 << EVENT) | (1 << CONTINUOUS));
    m->mode = EVENT;
    return 0;
}
int fmi2NewDiscreteStates(void *c, EventInfo *info) {
    M *m = c;
    ALLOW(m, "fmi2NewDiscreteStates", 1 << EVENT);
    memset(info, 0, sizeof *info);
    calculate(m);
    update(m, info);
    calculate(m);
    return 0;
}
int fmi2EnterContinuousTimeMode(void *c) {
    M *m = c;
    ALLOW(m, "fmi2EnterContinuousTimeMode", 1 << EVENT);
    m->mode = CONTINUOUS;
    return 0;
}
int fmi2CompletedIntegratorStep(void *c, int no_prior, int *enter_event_mode, int *terminate) {
    M *m = c;
    ALLOW(m, "fmi2CompletedIntegratorStep", 1 << CONTINUOUS);
    *enter_event_mode = 0; *terminate = 0;
    return 0;
}
int fmi2SetTime(void *c, double t) {
    M *m = c;
    ALLOW(m, "fmi2SetTime", (1 << EVENT) | (1 << CONTINUOUS));
    m->time = t;
    return 0;
}
int fmi2SetContinuousStates(void *c, const double *x, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi2SetContinuousStates", 1 << CONTINUOUS);
    if (nx != NX) return fail(m, "fmi2SetContinuousStates: expected nx=%d but was %zu", NX, nx);
    for (int k = 0; k < NX; k++) m->r[STATE_VRS[k]] = x[k];
    return 0;
}
int fmi2GetContinuousStates(void *c, double *x, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi2GetContinuousStates", RUNNING);
    if (nx != NX) return fail(m, "fmi2GetContinuousStates: expected nx=%d but was %zu", NX, nx);
    for (int k = 0; k < NX; k++) x[k] = m->r[STATE_VRS[k]];
    return 0;
}
int fmi2GetDerivatives(void *c, double *dx, size_t nx) {
    M *m = c;
    ALLOW(m, "fmi2GetDerivatives", RUNNING);
    if (nx != NX) return fail(m, "fmi2GetDerivatives: expected nx=%d but was %zu", NX, nx);
    calculate(m);
    for (int k = 0; k < NX; k++) dx[k] = m->r[DERIVATIVE_VRS[k]];
    return 0;
}
int fmi2GetEventIndicators(void *c, double *z, size_t nz) {
    M *m = c;
    ALLOW(m, "fmi2GetEventIndicators", RUNNING);
    if (nz != NZ) return fail(m, "fmi2GetEventIndicators: expected nz=%d but was %zu", NZ, nz);
    indicators(m, z);
    return 0;
}
int fmi2GetNominalsOfContinuousStates(void *c, double *x, size_t nx) {
    for (size_t k = 0; k < nx; k++) x[k] = 1.0;
    return 0;
}

/* Declared canGetAndSetFMUstate="false", providesDirectionalDerivative="false". */
#define NOT_OFFERED(f) int f(void *c) { return fail(c, #f ": not offered by this model"); }
NOT_OFFERED(fmi2GetFMUstate) NOT_OFFERED(fmi2SetFMUstate) NOT_OFFERED(fmi2FreeFMUstate) NOT_OFFERED(fmi2SerializedFMUstateSize)
NOT_OFFERED(fmi2SerializeFMUstate) NOT_OFFERED(fmi2DeSerializeFMUstate) NOT_OFFERED(fmi2GetDirectionalDerivative)
