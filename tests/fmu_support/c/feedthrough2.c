/* links fmi_stubs.c — An FMI 2.0 co-simulation FMU after the Modelica Reference FMUs'
   Feedthrough, for `morc ros fmu` (tests/ros_fmu.rs): each output a copy of its input
   (Float64 continuous and discrete, Int32, Boolean), a fixed and a tunable parameter, and two
   outputs that show them and the input's history:
   - scaled.y = Float64_tunable_parameter * Float64_continuous_input + Float64_fixed_parameter;
   - integral = the integral of Float64_continuous_input over time (h u per step: the input a
     step is given is what it integrates).
   Only the functions morc calls. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef void (*Logger)(void *env, const char *instance, int status, const char *category, const char *message, ...);
typedef struct { Logger log; void *allocate, *free, *step_finished, *env; } Callbacks;
typedef struct {
    Logger log; void *env;
    double fixed, tunable, u, ud, integral, time;
    int n, b, initialized;
    char s[64];
} M;

enum { FIXED = 1, TUNABLE = 2, U = 3, Y = 4, UD = 5, YD = 6, SCALED = 7, INTEGRAL = 8, N_IN = 9, N_OUT = 10, B_IN = 11, B_OUT = 12, S = 13 };
enum { OK = 0, ERROR = 3 };

static int fail(M *m, const char *message) {
    if (m->log) m->log(m->env, "feedthrough2", ERROR, "logStatusError", message);
    return ERROR;
}

void *fmi2Instantiate(const char *name, int kind, const char *guid, const char *res, const Callbacks *cb, int visible, int logging) {
    if (strcmp(guid, "{morc-feedthrough2-token}") != 0) return 0;
    M *m = calloc(1, sizeof(M));
    if (!m) return 0;
    m->log = cb ? cb->log : 0; m->env = cb ? cb->env : 0;
    strcpy(m->s, "Set me!");
    return m;
}
void fmi2FreeInstance(void *m) { free(m); }
int fmi2SetDebugLogging(void *m, int on, size_t n, const char *const *c) { return OK; }
int fmi2SetupExperiment(void *p, int tol_defined, double tol, double start, int stop_defined, double stop) {
    M *m = p; m->time = start; return OK;
}
int fmi2EnterInitializationMode(void *m) { return OK; }
int fmi2ExitInitializationMode(void *p) { M *m = p; m->initialized = 1; return OK; }
int fmi2Terminate(void *m) { return OK; }
int fmi2Reset(void *m) { return OK; }

int fmi2GetReal(void *p, const unsigned *vr, size_t n, double *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case FIXED: v[i] = m->fixed; break;
        case TUNABLE: v[i] = m->tunable; break;
        case U: case Y: v[i] = m->u; break;
        case UD: case YD: v[i] = m->ud; break;
        case SCALED: v[i] = m->tunable * m->u + m->fixed; break;
        case INTEGRAL: v[i] = m->integral; break;
        default: return fail(m, "fmi2GetReal: no such Real");
        }
    }
    return OK;
}
int fmi2SetReal(void *p, const unsigned *vr, size_t n, const double *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case FIXED:
            if (m->initialized) return fail(m, "Float64_fixed_parameter is fixed: set it before initialisation");
            m->fixed = v[i]; break;
        case TUNABLE: m->tunable = v[i]; break;
        case U: m->u = v[i]; break;
        case UD: m->ud = v[i]; break;
        default: return fail(m, "fmi2SetReal: not settable");
        }
    }
    return OK;
}
int fmi2GetInteger(void *p, const unsigned *vr, size_t n, int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != N_IN && vr[i] != N_OUT) return fail(m, "fmi2GetInteger: no such Integer");
        v[i] = m->n;
    }
    return OK;
}
int fmi2SetInteger(void *p, const unsigned *vr, size_t n, const int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != N_IN) return fail(m, "fmi2SetInteger: not settable");
        m->n = v[i];
    }
    return OK;
}
int fmi2GetBoolean(void *p, const unsigned *vr, size_t n, int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != B_IN && vr[i] != B_OUT) return fail(m, "fmi2GetBoolean: no such Boolean");
        v[i] = m->b;
    }
    return OK;
}
int fmi2SetBoolean(void *p, const unsigned *vr, size_t n, const int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != B_IN) return fail(m, "fmi2SetBoolean: not settable");
        m->b = v[i] != 0;
    }
    return OK;
}
int fmi2GetString(void *p, const unsigned *vr, size_t n, const char **v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S) return fail(m, "fmi2GetString: no such String");
        v[i] = m->s;
    }
    return OK;
}
int fmi2SetString(void *p, const unsigned *vr, size_t n, const char *const *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S) return fail(m, "fmi2SetString: not settable");
        snprintf(m->s, sizeof m->s, "%s", v[i] ? v[i] : "");
    }
    return OK;
}

int fmi2DoStep(void *p, double t, double h, int no_prior) {
    M *m = p;
    m->integral += h * m->u;
    m->time = t + h;
    return OK;
}
