/* links fmi_stubs.c — An FMI 3.0 co-simulation FMU for issue 16's FMI 3 type items, built by
   tests/fmu_conformance.rs: enumerations through fmi3Get/SetInt64 only (fmi3GetInt32 on one is
   an error, as FMI 3 makes enumerations Int64); an alias (y_alias is y's value reference); a
   unit from a declared type (pos: Position, m); a Float64 array and a Float32 output; a string
   input with a start value echoed to a string output; a Binary parameter.
   y = 2u, pos = u, v3 = (u, 2u, u/3), f = (float)(u/3), level = level_in, s_out = s_in. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Log)(void *env, int status, const char *category, const char *message);
typedef struct { void *env; Log log; double u, time; int64_t level; char s_in[64]; uint8_t blob[16]; size_t blob_size; } M;

enum { TIME = 0, U = 1, Y = 2, POS = 3, V3 = 4, F = 5, LEVEL_IN = 6, LEVEL = 7, S_IN = 8, S_OUT = 9, BLOB = 10 };
enum { OK = 0, ERROR = 3 };

static int fail(M *m, const char *message) {
    if (m->log) m->log(m->env, ERROR, "logStatusError", message);
    return ERROR;
}

void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool vis, bool log_on,
    bool event_mode, bool early, const uint32_t *req, size_t nreq, void *env, Log log, void *update) {
    M *m = calloc(1, sizeof(M));
    if (!m) return 0;
    m->env = env; m->log = log;
    m->u = 1.5; m->level = 2; strcpy(m->s_in, "Set me!");
    m->blob[0] = 10; m->blob[1] = 11; m->blob[2] = 12; m->blob_size = 3;
    return m;
}
void fmi3FreeInstance(void *m) { free(m); }
int fmi3EnterInitializationMode(void *p, bool tol_defined, double tol, double start, bool stop_defined, double stop) {
    M *m = p; m->time = start; return OK;
}
int fmi3ExitInitializationMode(void *m) { return OK; }
int fmi3Terminate(void *m) { return OK; }
int fmi3Reset(void *m) { return OK; }
int fmi3SetDebugLogging(void *m, bool on, size_t n, const char *const *c) { return OK; }

int fmi3GetFloat64(void *p, const uint32_t *vr, size_t n, double *v, size_t nv) {
    M *m = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        switch (vr[i]) {
        case TIME: v[k++] = m->time; break;
        case U: case POS: v[k++] = m->u; break;
        case Y: v[k++] = 2 * m->u; break;
        case V3: v[k++] = m->u; v[k++] = 2 * m->u; v[k++] = m->u / 3; break;
        default: return fail(m, "fmi3GetFloat64: no such Float64");
        }
    }
    return k == nv ? OK : fail(m, "fmi3GetFloat64: wrong nValues");
}
int fmi3SetFloat64(void *p, const uint32_t *vr, size_t n, const double *v, size_t nv) {
    M *m = p;
    if (n != 1 || nv != 1 || vr[0] != U) return fail(m, "fmi3SetFloat64: only u is settable");
    m->u = v[0];
    return OK;
}
int fmi3GetFloat32(void *p, const uint32_t *vr, size_t n, float *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != F) return fail(m, "fmi3GetFloat32: no such Float32");
        v[i] = (float)(m->u / 3);
    }
    return OK;
}
int fmi3GetInt64(void *p, const uint32_t *vr, size_t n, int64_t *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != LEVEL && vr[i] != LEVEL_IN) return fail(m, "fmi3GetInt64: no such Int64");
        v[i] = m->level;
    }
    return OK;
}
int fmi3SetInt64(void *p, const uint32_t *vr, size_t n, const int64_t *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != LEVEL_IN) return fail(m, "fmi3SetInt64: not settable");
        if (v[i] < 1 || v[i] > 3) return fail(m, "level_in is no item of Level (1, 2, 3)");
        m->level = v[i];
    }
    return OK;
}
int fmi3GetInt32(void *p, const uint32_t *vr, size_t n, int32_t *v, size_t nv) {
    return n ? fail(p, "fmi3GetInt32: this FMU has no Int32 (its enumerations are Int64)") : OK;
}
int fmi3SetInt32(void *p, const uint32_t *vr, size_t n, const int32_t *v, size_t nv) {
    return n ? fail(p, "fmi3SetInt32: this FMU has no Int32 (its enumerations are Int64)") : OK;
}
int fmi3GetString(void *p, const uint32_t *vr, size_t n, const char **v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S_IN && vr[i] != S_OUT) return fail(m, "fmi3GetString: no such String");
        v[i] = m->s_in;
    }
    return OK;
}
int fmi3SetString(void *p, const uint32_t *vr, size_t n, const char *const *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != S_IN) return fail(m, "fmi3SetString: not settable");
        snprintf(m->s_in, sizeof m->s_in, "%s", v[i] ? v[i] : "");
    }
    return OK;
}
int fmi3GetBinary(void *p, const uint32_t *vr, size_t n, size_t *sizes, const uint8_t **v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != BLOB) return fail(m, "fmi3GetBinary: no such Binary");
        sizes[i] = m->blob_size; v[i] = m->blob;
    }
    return OK;
}
int fmi3SetBinary(void *p, const uint32_t *vr, size_t n, const size_t *sizes, const uint8_t *const *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] != BLOB || sizes[i] > sizeof m->blob) return fail(m, "fmi3SetBinary: not settable");
        memcpy(m->blob, v[i], sizes[i]); m->blob_size = sizes[i];
    }
    return OK;
}
int fmi3DoStep(void *p, double t, double h, bool nosave, bool *event, bool *terminate, bool *early, double *last) {
    M *m = p;
    *event = false; *terminate = false; *early = false;
    m->time = t + h;
    *last = t + h;
    return OK;
}
