/* links fmi_stubs.c — A minimal FMI 3.0 co-simulation FMU for morc's import tests: every
   scalar type, an Enumeration (an Int64 in FMI 3) and a Float64 array, each output a copy of its input (the
   array times the parameter `gain`, the Int16 plus the parameter `offset`).
   Only the functions morc calls; built by tests/fmu_fmi3_types.rs. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*Log)(void *env, int status, const char *category, const char *message);
typedef struct {
    void *env; Log log;
    double f64[32]; float f32[32]; int8_t i8[32]; uint8_t u8[32]; int16_t i16[32]; uint16_t u16[32];
    int32_t i32[32]; uint32_t u32[32]; int64_t i64[32]; uint64_t u64[32]; bool b[32]; char s[32][64];
    double arr_in[3], arr_out[3], time;
} M;

#define TOKEN "{morc-feedthrough3-token}"
enum { TIME = 0, F32 = 1, I8 = 3, U8 = 5, I16 = 7, U16 = 9, I32 = 11, U32 = 13, I64 = 15, U64 = 17,
       BOOL = 19, STR = 21, ARR_IN = 23, ARR_OUT = 24, GAIN = 25, OFFSET = 26, ENUM = 27 };

void *fmi3InstantiateCoSimulation(const char *name, const char *token, const char *res, bool vis, bool log_on,
    bool event_mode, bool early, const uint32_t *req, size_t nreq, void *env, Log log, void *update) {
    if (strcmp(token, TOKEN) != 0) {
        if (log) log(env, 3, "logStatusError", "wrong instantiation token");
        return NULL;
    }
    M *m = calloc(1, sizeof(M));
    m->env = env; m->log = log; m->f64[GAIN] = 1.0; m->i64[ENUM] = 1; /* the declared start values */
    return m;
}
void fmi3FreeInstance(void *m) { free(m); }
int fmi3EnterInitializationMode(void *m, bool a, double b, double c, bool d, double e) { return 0; }
int fmi3ExitInitializationMode(void *m) { return 0; }
int fmi3Terminate(void *m) { return 0; }

/* Scalars: outputs are at vr + 1 of their input. */
#define ACCESS(T, FIELD, NAME)                                                                     \
    int fmi3Get##NAME(void *p, const uint32_t *vr, size_t n, T *v, size_t nv) {                  \
        M *m = p; for (size_t i = 0; i < n; i++) v[i] = m->FIELD[vr[i]]; return 0; }              \
    int fmi3Set##NAME(void *p, const uint32_t *vr, size_t n, const T *v, size_t nv) {            \
        M *m = p; for (size_t i = 0; i < n; i++) m->FIELD[vr[i]] = v[i]; return 0; }
ACCESS(float, f32, Float32) ACCESS(int8_t, i8, Int8) ACCESS(uint8_t, u8, UInt8) ACCESS(int16_t, i16, Int16)
ACCESS(uint16_t, u16, UInt16) ACCESS(int32_t, i32, Int32) ACCESS(uint32_t, u32, UInt32) ACCESS(int64_t, i64, Int64)
ACCESS(uint64_t, u64, UInt64) ACCESS(bool, b, Boolean)

int fmi3GetFloat64(void *p, const uint32_t *vr, size_t n, double *v, size_t nv) {
    M *m = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == ARR_IN || vr[i] == ARR_OUT) {
            for (int j = 0; j < 3; j++) v[k++] = vr[i] == ARR_IN ? m->arr_in[j] : m->arr_out[j];
        } else if (vr[i] == TIME) { v[k++] = m->time; } else { v[k++] = m->f64[vr[i]]; }
    }
    return k == nv ? 0 : 3;
}
int fmi3SetFloat64(void *p, const uint32_t *vr, size_t n, const double *v, size_t nv) {
    M *m = p; size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == ARR_IN) { for (int j = 0; j < 3; j++) m->arr_in[j] = v[k++]; } else { m->f64[vr[i]] = v[k++]; }
    }
    return k == nv ? 0 : 3;
}
int fmi3GetString(void *p, const uint32_t *vr, size_t n, const char **v, size_t nv) {
    M *m = p; for (size_t i = 0; i < n; i++) v[i] = m->s[vr[i]]; return 0; }
int fmi3SetString(void *p, const uint32_t *vr, size_t n, const char *const *v, size_t nv) {
    M *m = p;
    for (size_t i = 0; i < n; i++) { strncpy(m->s[vr[i]], v[i], 63); m->s[vr[i]][63] = 0; }
    return 0;
}

int fmi3DoStep(void *p, double t, double h, bool nosave, bool *event, bool *terminate, bool *early, double *last) {
    M *m = p;
    m->f32[F32 + 1] = m->f32[F32]; m->i8[I8 + 1] = m->i8[I8]; m->u8[U8 + 1] = m->u8[U8];
    m->i16[I16 + 1] = (int16_t)(m->i16[I16] + m->i16[OFFSET]); m->u16[U16 + 1] = m->u16[U16];
    m->i32[I32 + 1] = m->i32[I32]; m->u32[U32 + 1] = m->u32[U32]; m->i64[I64 + 1] = m->i64[I64]; m->i64[ENUM + 1] = m->i64[ENUM];
    m->u64[U64 + 1] = m->u64[U64]; m->b[BOOL + 1] = !m->b[BOOL];
    strcpy(m->s[STR + 1], m->s[STR]); strcat(m->s[STR + 1], "!");
    for (int j = 0; j < 3; j++) m->arr_out[j] = m->f64[GAIN] * m->arr_in[j];
    m->time = t + h;
    *event = false; *terminate = false; *early = false; *last = t + h;
    return 0;
}
