/* links fmi_stubs.c — An FMI 2.0 co-simulation FMU for issue 16's conformance items, built
   by tests/fmu_conformance.rs:
   - inputs with start values that are not zero: u (Real, 2.5), mode (Enumeration 1..3, start 2:
     fmi2SetInteger refuses 0, as an enumeration with no item 0 must), s_in (String "Set me!");
   - y = k·u, mode_out = mode, s_out = s_in, level = u (unit m from its declared type);
   - x integrates u (dx/dt = u) from its start value (initial exact: settable before init);
   - t_fmu is the FMU's own time, from fmi2SetupExperiment's startTime;
   - at stop_at it ends the simulation itself: fmi2DoStep returns fmi2Discard and
     fmi2GetBooleanStatus(fmi2Terminated) is true, fmi2LastSuccessfulTime the step's start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Logger)(void *env, const char *instance, int status, const char *category, const char *message, ...);
typedef struct { Logger log; void *allocate, *free, *step_finished, *env; } Callbacks;
typedef struct {
    Logger log; void *env;
    double u, k, x, time, stop_at, last;
    int mode, terminated;
    char s_in[64];
} M;

enum { U = 0, Y = 1, K = 2, MODE = 3, MODE_OUT = 4, S_IN = 5, S_OUT = 6, T_FMU = 7, STOP_AT = 8, X = 9, LEVEL = 10 };
enum { OK = 0, DISCARD = 2, ERROR = 3 };

static int fail(M *m, const char *message) {
    if (m->log) m->log(m->env, "conform2", ERROR, "logStatusError", message);
    return ERROR;
}

void *fmi2Instantiate(const char *name, int kind, const char *guid, const char *res, const Callbacks *cb, int visible, int logging) {
    M *m = calloc(1, sizeof(M));
    if (!m) return 0;
    m->log = cb ? cb->log : 0; m->env = cb ? cb->env : 0;
    /* Start values, as the model description declares them. */
    m->u = 2.5; m->k = 2; m->x = 0.5; m->stop_at = 1e300; m->mode = 2;
    strcpy(m->s_in, "Set me!");
    return m;
}
void fmi2FreeInstance(void *m) { free(m); }
int fmi2SetDebugLogging(void *m, int on, size_t n, const char *const *c) { return OK; }
int fmi2SetupExperiment(void *p, int tol_defined, double tol, double start, int stop_defined, double stop) {
    M *m = p; m->time = start; return OK;
}
int fmi2EnterInitializationMode(void *m) { return OK; }
int fmi2ExitInitializationMode(void *m) { return OK; }
int fmi2Terminate(void *m) { return OK; }
int fmi2Reset(void *m) { return OK; }

int fmi2GetReal(void *p, const unsigned *vr, size_t n, double *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case U: case LEVEL: v[i] = m->u; break;
        case Y: v[i] = m->k * m->u; break;
        case K: v[i] = m->k; break;
        case T_FMU: v[i] = m->time; break;
        case STOP_AT: v[i] = m->stop_at; break;
        case X: v[i] = m->x; break;
        default: return fail(m, "fmi2GetReal: no such Real");
        }
    }
    return OK;
}
int fmi2SetReal(void *p, const unsigned *vr, size_t n, const double *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case U: m->u = v[i]; break;
        case K: m->k = v[i]; break;
        case STOP_AT: m->stop_at = v[i]; break;
        case X: m->x = v[i]; break;
        default: return fail(m, "fmi2SetReal: not settable");
        }
    }
    return OK;
}
int fmi2GetInteger(void *p, const unsigned *vr, size_t n, int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != MODE && vr[i] != MODE_OUT) return fail(m, "fmi2GetInteger: no such Integer");
        v[i] = m->mode;
    }
    return OK;
}
int fmi2SetInteger(void *p, const unsigned *vr, size_t n, const int *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != MODE) return fail(m, "fmi2SetInteger: not settable");
        if (v[i] < 1 || v[i] > 3) {
            char text[80];
            snprintf(text, sizeof text, "mode = %d is no item of Mode (1, 2, 3)", v[i]);
            return fail(m, text);
        }
        m->mode = v[i];
    }
    return OK;
}
int fmi2GetBoolean(void *p, const unsigned *vr, size_t n, int *v) { return n ? fail(p, "no Booleans") : OK; }
int fmi2SetBoolean(void *p, const unsigned *vr, size_t n, const int *v) { return n ? fail(p, "no Booleans") : OK; }
int fmi2GetString(void *p, const unsigned *vr, size_t n, const char **v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S_IN && vr[i] != S_OUT) return fail(m, "fmi2GetString: no such String");
        v[i] = m->s_in;
    }
    return OK;
}
int fmi2SetString(void *p, const unsigned *vr, size_t n, const char *const *v) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S_IN) return fail(m, "fmi2SetString: not settable");
        snprintf(m->s_in, sizeof m->s_in, "%s", v[i] ? v[i] : "");
    }
    return OK;
}

int fmi2DoStep(void *p, double t, double h, int no_prior) {
    M *m = p;
    if (t + h > m->stop_at + 1e-12) {
        m->terminated = 1; m->last = t;
        if (m->log) m->log(m->env, "conform2", DISCARD, "logStatusDiscard", "stop_at reached: the simulation ends here");
        return DISCARD;
    }
    m->x += h * m->u;
    m->time = t + h;
    return OK;
}
int fmi2GetBooleanStatus(void *p, int kind, int *v) {
    M *m = p;
    if (kind != 3) return ERROR; /* fmi2Terminated */
    *v = m->terminated;
    return OK;
}
int fmi2GetRealStatus(void *p, int kind, double *v) {
    M *m = p;
    if (kind != 2) return ERROR; /* fmi2LastSuccessfulTime */
    *v = m->last;
    return OK;
}
