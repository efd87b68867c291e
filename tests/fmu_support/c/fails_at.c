/* links fmi_stubs.c — An FMI 3.0 co-simulation FMU for fault injection: y = u (six Float64), until the
   communication point reaches the parameter `fail_time`; from then on fmi3DoStep logs why and
   returns fmi3Error, as a model that diverges or loses its solver would. Built by
   tests/fault_injection.rs. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*Log)(void *env, int status, const char *category, const char *message);
typedef struct { void *env; Log log; double u[6], y[6], fail_time, time; } M;

enum { TIME = 0, U = 1, Y = 2, FAIL_TIME = 3 };

void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool vis, bool log_on,
    bool event_mode, bool early, const uint32_t *req, size_t nreq, void *env, Log log, void *update) {
    M *m = calloc(1, sizeof(M));
    m->env = env; m->log = log; m->fail_time = 1e300;
    return m;
}
void fmi3FreeInstance(void *m) { free(m); }
int fmi3EnterInitializationMode(void *m, bool a, double b, double c, bool d, double e) { return 0; }
int fmi3ExitInitializationMode(void *m) { return 0; }
int fmi3Terminate(void *m) { return 0; }

int fmi3GetFloat64(void *p, const uint32_t *vr, size_t n, double *v, size_t nv) {
    M *m = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case TIME: v[k++] = m->time; break;
        case U: for (int j = 0; j < 6; j++) v[k++] = m->u[j]; break;
        case Y: for (int j = 0; j < 6; j++) v[k++] = m->y[j]; break;
        case FAIL_TIME: v[k++] = m->fail_time; break;
        default: return 3;
        }
    }
    return k == nv ? 0 : 3;
}
int fmi3SetFloat64(void *p, const uint32_t *vr, size_t n, const double *v, size_t nv) {
    M *m = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case U: for (int j = 0; j < 6; j++) m->u[j] = v[k++]; break;
        case FAIL_TIME: m->fail_time = v[k++]; break;
        default: return 3;
        }
    }
    return k == nv ? 0 : 3;
}

int fmi3DoStep(void *p, double t, double h, bool nosave, bool *event, bool *terminate, bool *early, double *last) {
    M *m = p;
    *event = false; *terminate = false; *early = false; *last = t;
    if (t >= m->fail_time - 1e-9) {
        char text[96];
        snprintf(text, sizeof text, "injected fault at t = %.4f s", t);
        if (m->log) m->log(m->env, 3, "logStatusError", text);
        return 3;
    }
    for (int j = 0; j < 6; j++) m->y[j] = m->u[j];
    m->time = t + h;
    *last = t + h;
    return 0;
}
