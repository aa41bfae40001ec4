/*
 * ireval_df.io._ctrec: a TREC text tokenizer for the fast path of io/trec.py.
 *
 * It splits lines on whitespace runs as trec_eval does (C isspace less the
 * newline), skips blank and '#' comment lines, and builds Arrow columns
 * (utf8view strings, float64 scores, uint32 ranks, int32 grades) that polars
 * imports through the Arrow PyCapsule interface without copying.
 *
 * It is an accelerator, never a second reader with its own rules: whenever
 * the input is anything but plain (a byte that is not ASCII, a NUL, a carriage
 * return inside a line, a number outside the simple grammar below, a line
 * with the wrong number of fields, no data line at all) it returns None, and
 * the Python readers take the file and report its problems with their line
 * numbers. So everything it accepts reads exactly as the careful reader
 * reads it, which the tests check on generated files.
 *
 * Numbers it accepts:
 *   score       -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?, finite, no underflow;
 *               correctly rounded (Clinger's exact fast path for up to 15
 *               digits without exponent, strtod_l in the C locale otherwise)
 *   rank        [0-9]+ up to 4294967295
 *   relevance   -?[0-9]+ within int32
 *
 * The work is split at line boundaries over `threads` POSIX threads with the
 * GIL released; each part becomes one chunk of every column. A string column
 * holding one value on every line (a run file's tag, mostly) is returned as
 * that value, never written out: 16 bytes a line saved.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---------------------------------------------------------------------- */
/* Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html) */

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

/* ---------------------------------------------------------------------- */
/* buffers */

#define PAGE ((size_t)4096)

/* Every buffer is mapped for the worst case up front (a data line has at
 * least one byte and one separator per field), so the tokenizer never grows
 * one; only the pages it touches cost memory, and trim() gives back the
 * rest without copying. A buffer is a mapping of `size` bytes, a multiple
 * of the page size. (Huge pages were measured slower: in a fresh process
 * the kernel zeroes and compacts 2 MiB at a time.) */
typedef struct {
    void *p;
    size_t size;
} Mapping;

static size_t round_page(size_t n) { return (n + PAGE - 1) / PAGE * PAGE; }

static int map_bytes(Mapping *m, size_t size) {
    size = round_page(size ? size : 1);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    m->p = p;
    m->size = size;
    return 1;
}

static void trim(Mapping *m, size_t used) {
    used = round_page(used ? used : 1);
    if (m->p && used < m->size) {
        munmap((unsigned char *)m->p + used, m->size - used);
        m->size = used;
    }
}

static void unmap(Mapping *m) {
    if (m->p) munmap(m->p, m->size);
    m->p = NULL;
    m->size = 0;
}

/* a utf8view value: 4-byte length, then 12 inline bytes or a 4-byte prefix,
 * buffer index and offset */
typedef struct {
    int32_t size;
    union {
        char inline_[12];
        struct {
            char prefix[4];
            int32_t buffer;
            int32_t offset;
        } ref;
    } u;
} View;

enum { K_SKIP = 'x', K_STR = 's', K_F64 = 'f', K_U32 = 'u', K_I32 = 'i' };

#define MAX_FIELDS 8

typedef struct {
    char kind;
    Mapping values; /* View, double, uint32_t or int32_t per row */
    Mapping data;   /* the bytes of strings longer than 12 bytes */
    size_t data_len;
    size_t prev_start; /* the previous row's long string, for reuse */
    /* A string column holding one value throughout (a run's tag) is not
     * written: its rows cost no memory until a second value appears, when
     * the rows so far are filled in (`varied`). Until then the value is
     * `first`, read from `first_bytes` in the input. */
    int varied;
    View first;
    const unsigned char *first_bytes;
    size_t first_len;
} Column;

typedef struct {
    const unsigned char *begin, *end;
    const char *kinds;
    int n_fields;
    int exact;
    locale_t c_locale;
    Column cols[MAX_FIELDS];
    size_t rows;
    int failed;
} Part;

/* byte classes: 0 ordinary, 1 blank (space, \t, \v, \f), 2 newline,
 * 3 carriage return, 4 refused (NUL, not ASCII) */
static unsigned char CLASS[256];

static void init_classes(void) {
    for (int c = 0; c < 256; c++) CLASS[c] = (c == 0 || c >= 0x80) ? 4 : 0;
    CLASS[' '] = CLASS['\t'] = CLASS['\v'] = CLASS['\f'] = 1;
    CLASS['\n'] = 2;
    CLASS['\r'] = 3;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int parse_score(const unsigned char *s, size_t n, double *out, locale_t loc) {
    const unsigned char *p = s, *e = s + n;
    int negative = 0;
    if (p < e && *p == '-') {
        negative = 1;
        p++;
    }
    uint64_t mantissa = 0;
    int digits = 0, fraction = 0;
    const unsigned char *start = p;
    while (p < e && *p >= '0' && *p <= '9') {
        if (digits < 19) mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        digits++;
        p++;
    }
    if (p == start) return 0;
    if (p < e && *p == '.') {
        p++;
        start = p;
        while (p < e && *p >= '0' && *p <= '9') {
            if (digits < 19) mantissa = mantissa * 10 + (uint64_t)(*p - '0');
            digits++;
            fraction++;
            p++;
        }
        if (p == start) return 0;
    }
    int exponent = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        exponent = 1;
        p++;
        if (p < e && (*p == '-' || *p == '+')) p++;
        start = p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == start) return 0;
    }
    if (p != e) return 0;
    if (!exponent && digits <= 15) {
        /* both operands exact doubles: one correctly rounded division */
        double value = (double)mantissa / POW10[fraction];
        *out = negative ? -value : value;
        return 1;
    }
    char copy[128];
    if (n >= sizeof copy) return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    char *stop = NULL;
    errno = 0;
    double value = strtod_l(copy, &stop, loc);
    if (stop != copy + n || errno == ERANGE || !isfinite(value)) return 0;
    *out = value;
    return 1;
}

static int parse_u32(const unsigned char *s, size_t n, uint32_t *out) {
    if (n == 0 || n > 10) return 0;
    uint64_t value = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        value = value * 10 + (uint64_t)(s[i] - '0');
    }
    if (value > UINT32_MAX) return 0;
    *out = (uint32_t)value;
    return 1;
}

static int parse_i32(const unsigned char *s, size_t n, int32_t *out) {
    int negative = 0;
    if (n && *s == '-') {
        negative = 1;
        s++;
        n--;
    }
    if (n == 0 || n > 10) return 0;
    int64_t value = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        value = value * 10 + (s[i] - '0');
    }
    if (negative) value = -value;
    if (value < INT32_MIN || value > INT32_MAX) return 0;
    *out = (int32_t)value;
    return 1;
}

static View string_view(Column *col, size_t row, const unsigned char *s, size_t n) {
    const View *views = (const View *)col->values.p;
    char *data = (char *)col->data.p;
    View v;
    memset(&v, 0, sizeof v);
    v.size = (int32_t)n;
    if (n <= 12) {
        memcpy(v.u.inline_, s, n);
    } else {
        memcpy(v.u.ref.prefix, s, 4);
        /* consecutive rows repeat query ids and tags: share their bytes */
        if (row > 0 && views[row - 1].size == (int32_t)n &&
            memcmp(data + col->prev_start, s, n) == 0) {
            v.u.ref.offset = (int32_t)col->prev_start;
        } else {
            memcpy(data + col->data_len, s, n);
            col->prev_start = col->data_len;
            v.u.ref.offset = (int32_t)col->data_len;
            col->data_len += n;
        }
        v.u.ref.buffer = 0;
    }
    return v;
}

static void fill(Column *col, size_t rows) {
    View *views = (View *)col->values.p;
    for (size_t r = 0; r < rows; r++) views[r] = col->first;
    col->varied = 1;
}

static void put_string(Column *col, size_t row, const unsigned char *s, size_t n) {
    if (!col->varied) {
        if (row == 0) {
            col->first = string_view(col, 0, s, n);
            col->first_bytes = s;
            col->first_len = n;
            return;
        }
        if (n == col->first_len && memcmp(s, col->first_bytes, n) == 0) return;
        fill(col, row);
    }
    ((View *)col->values.p)[row] = string_view(col, row, s, n);
}

/* Tell whether column f holds one value in every part: then it is returned
 * as that value; else the parts holding one value are filled in. */
static int one_value(Part *parts, int threads, int f) {
    const Column *seen = NULL;
    int same = 1;
    for (int t = 0; t < threads; t++) {
        const Column *col = &parts[t].cols[f];
        if (parts[t].rows == 0) continue;
        if (col->varied || (seen && (col->first_len != seen->first_len ||
                                     memcmp(col->first_bytes, seen->first_bytes,
                                            col->first_len) != 0)))
            same = 0;
        if (!col->varied) seen = col;
    }
    if (same) return 1;
    for (int t = 0; t < threads; t++)
        if (parts[t].rows && !parts[t].cols[f].varied)
            fill(&parts[t].cols[f], parts[t].rows);
    return 0;
}

static size_t value_size(char kind) {
    switch (kind) {
    case K_STR: return sizeof(View);
    case K_F64: return sizeof(double);
    case K_U32: return sizeof(uint32_t);
    case K_I32: return sizeof(int32_t);
    default: return 0;
    }
}

static int part_alloc(Part *part) {
    size_t length = (size_t)(part->end - part->begin);
    /* a data line has at least one byte and one separator per field */
    size_t max_rows = length / (size_t)(2 * part->n_fields - 1) + 1;
    for (int f = 0; f < part->n_fields; f++) {
        Column *col = &part->cols[f];
        col->kind = part->kinds[f];
        size_t size = value_size(col->kind);
        if (!size) continue;
        if (!map_bytes(&col->values, max_rows * size)) return 0;
        if (col->kind == K_STR && !map_bytes(&col->data, length)) return 0;
    }
    return 1;
}

static void column_free(Column *col) {
    unmap(&col->values);
    unmap(&col->data);
}

/* Tokenize one part; on anything but plain input set part->failed. */
static void *part_run(void *arg) {
    Part *part = (Part *)arg;
    const unsigned char *c = part->begin, *end = part->end;
    const unsigned char *start[MAX_FIELDS];
    size_t len[MAX_FIELDS];
    const int n_fields = part->n_fields;
    size_t row = 0;
    while (c < end) {
        int found = 0;
        int comment = 0;
        for (;;) {
            while (c < end && CLASS[*c] == 1) c++;
            if (c == end || *c == '\n') break;
            if (*c == '\r') {
                if (c + 1 < end && c[1] == '\n') {
                    c++;
                    break;
                }
                if (c + 1 == end) {
                    c++;
                    break;
                }
                part->failed = 1; /* a CR inside a line */
                return NULL;
            }
            if (found == 0 && *c == '#') comment = 1;
            const unsigned char *field = c;
            while (c < end && CLASS[*c] == 0) c++;
            if (c < end && CLASS[*c] == 4) {
                part->failed = 1;
                return NULL;
            }
            if (found < n_fields) {
                start[found] = field;
                len[found] = (size_t)(c - field);
            }
            found++;
        }
        if (c < end) c++; /* the newline */
        if (found == 0 || comment) continue;
        if (found < n_fields || (part->exact && found > n_fields)) {
            part->failed = 1;
            return NULL;
        }
        for (int f = 0; f < n_fields; f++) {
            Column *col = &part->cols[f];
            switch (col->kind) {
            case K_STR:
                put_string(col, row, start[f], len[f]);
                break;
            case K_F64:
                if (!parse_score(start[f], len[f], (double *)col->values.p + row,
                                 part->c_locale)) {
                    part->failed = 1;
                    return NULL;
                }
                break;
            case K_U32:
                if (!parse_u32(start[f], len[f], (uint32_t *)col->values.p + row)) {
                    part->failed = 1;
                    return NULL;
                }
                break;
            case K_I32:
                if (!parse_i32(start[f], len[f], (int32_t *)col->values.p + row)) {
                    part->failed = 1;
                    return NULL;
                }
                break;
            default:
                break;
            }
        }
        row++;
    }
    part->rows = row;
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* one exported column chunk: a Python object with __arrow_c_array__ */

typedef struct {
    PyObject_HEAD
    char kind;
    int64_t length;
    Mapping values;
    Mapping data;
    int64_t data_len;
} ChunkObject;

typedef struct {
    const void *buffers[4];
    Mapping values;
    Mapping data;
    int64_t sizes[1];
} ArrayPrivate;

static void release_array(struct ArrowArray *array) {
    ArrayPrivate *private_ = (ArrayPrivate *)array->private_data;
    unmap(&private_->values);
    unmap(&private_->data);
    free(private_);
    array->release = NULL;
}

static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }

static void schema_capsule_free(PyObject *capsule) {
    struct ArrowSchema *schema =
        (struct ArrowSchema *)PyCapsule_GetPointer(capsule, "arrow_schema");
    if (schema && schema->release) schema->release(schema);
    free(schema);
}

static void array_capsule_free(PyObject *capsule) {
    struct ArrowArray *array =
        (struct ArrowArray *)PyCapsule_GetPointer(capsule, "arrow_array");
    if (array && array->release) array->release(array);
    free(array);
}

static const char *format_of(char kind) {
    switch (kind) {
    case K_STR: return "vu";
    case K_F64: return "g";
    case K_U32: return "I";
    default: return "i";
    }
}

static PyObject *chunk_arrow_c_array(ChunkObject *self, PyObject *args,
                                     PyObject *kwargs) {
    static char *names[] = {"requested_schema", NULL};
    PyObject *requested = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", names, &requested))
        return NULL;
    if (!self->values.p) {
        PyErr_SetString(PyExc_RuntimeError, "this column chunk was already exported");
        return NULL;
    }
    struct ArrowSchema *schema = calloc(1, sizeof *schema);
    struct ArrowArray *array = calloc(1, sizeof *array);
    ArrayPrivate *private_ = calloc(1, sizeof *private_);
    if (!schema || !array || !private_) {
        free(schema);
        free(array);
        free(private_);
        return PyErr_NoMemory();
    }
    schema->format = format_of(self->kind);
    schema->name = "";
    schema->flags = 0;
    schema->release = release_schema;

    private_->values = self->values;
    private_->data = self->data;
    private_->buffers[0] = NULL; /* no nulls */
    private_->buffers[1] = self->values.p;
    array->n_buffers = 2;
    if (self->kind == K_STR) {
        if (self->data_len > 0) {
            private_->buffers[2] = self->data.p;
            private_->sizes[0] = self->data_len;
            private_->buffers[3] = private_->sizes;
            array->n_buffers = 4;
        } else {
            private_->buffers[2] = private_->sizes; /* no variadic buffers */
            array->n_buffers = 3;
        }
    }
    array->length = self->length;
    array->null_count = 0;
    array->offset = 0;
    array->buffers = private_->buffers;
    array->release = release_array;
    array->private_data = private_;
    /* the array owns the buffers now */
    self->values = (Mapping){NULL, 0};
    self->data = (Mapping){NULL, 0};

    PyObject *schema_capsule = PyCapsule_New(schema, "arrow_schema", schema_capsule_free);
    if (!schema_capsule) {
        free(schema);
        release_array(array);
        free(array);
        return NULL;
    }
    PyObject *array_capsule = PyCapsule_New(array, "arrow_array", array_capsule_free);
    if (!array_capsule) {
        Py_DECREF(schema_capsule);
        release_array(array);
        free(array);
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, schema_capsule, array_capsule);
    Py_DECREF(schema_capsule);
    Py_DECREF(array_capsule);
    return pair;
}

static void chunk_dealloc(ChunkObject *self) {
    unmap(&self->values);
    unmap(&self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef chunk_methods[] = {
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))chunk_arrow_c_array,
     METH_VARARGS | METH_KEYWORDS,
     "Export the chunk once as an Arrow (schema, array) PyCapsule pair."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ChunkType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ireval_df.io._ctrec.Chunk",
    .tp_basicsize = sizeof(ChunkObject),
    .tp_dealloc = (destructor)chunk_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One chunk of one column, exported once through __arrow_c_array__.",
    .tp_methods = chunk_methods,
};

static PyObject *chunk_new(Column *col, size_t rows) {
    ChunkObject *chunk = PyObject_New(ChunkObject, &ChunkType);
    if (!chunk) return NULL;
    chunk->kind = col->kind;
    chunk->length = (int64_t)rows;
    /* give back the untouched tail of the worst-case buffers */
    trim(&col->values, rows * value_size(col->kind));
    chunk->values = col->values;
    chunk->data = (Mapping){NULL, 0};
    chunk->data_len = 0;
    if (col->kind == K_STR && col->data_len > 0) {
        trim(&col->data, col->data_len);
        chunk->data = col->data;
        chunk->data_len = (int64_t)col->data_len;
    } else {
        unmap(&col->data);
    }
    col->values = (Mapping){NULL, 0};
    col->data = (Mapping){NULL, 0};
    return (PyObject *)chunk;
}

/* ---------------------------------------------------------------------- */

static locale_t C_LOCALE;

static PyObject *parse(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer view;
    const char *kinds;
    int exact, threads;
    if (!PyArg_ParseTuple(args, "y*spi", &view, &kinds, &exact, &threads)) return NULL;
    int n_fields = (int)strlen(kinds);
    if (n_fields < 1 || n_fields > MAX_FIELDS || threads < 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "1 to 8 field kinds and at least one thread");
        return NULL;
    }
    const unsigned char *data = (const unsigned char *)view.buf;
    size_t size = (size_t)view.len;
    if (size < ((size_t)1 << 20)) threads = 1;
    if (threads > 16) threads = 16;
    /* a part's string bytes must stay under 2 GiB (32-bit view offsets) */
    if (size >= ((size_t)1 << 31) * (size_t)threads) {
        threads = (int)(size >> 31) + 1;
        if (threads > 64) {
            PyBuffer_Release(&view);
            Py_RETURN_NONE;
        }
    }
    Part *parts = calloc((size_t)threads, sizeof(Part));
    if (!parts) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    const unsigned char *cut = data, *end = data + size;
    for (int t = 0; t < threads; t++) {
        const unsigned char *stop = end;
        if (t < threads - 1) {
            stop = data + size / (size_t)threads * (size_t)(t + 1);
            if (stop < cut) stop = cut;
            const unsigned char *nl = memchr(stop, '\n', (size_t)(end - stop));
            stop = nl ? nl + 1 : end;
        }
        parts[t].begin = cut;
        parts[t].end = stop;
        parts[t].kinds = kinds;
        parts[t].n_fields = n_fields;
        parts[t].exact = exact;
        parts[t].c_locale = C_LOCALE;
        /* offsets into a part's string bytes are 32-bit */
        if ((size_t)(stop - cut) >= ((size_t)1 << 31)) parts[t].failed = 1;
        cut = stop;
    }
    int ok = 1;
    for (int t = 0; t < threads; t++) ok = ok && !parts[t].failed;
    if (!ok) {
        free(parts);
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    for (int t = 0; t < threads; t++) ok = ok && part_alloc(&parts[t]);
    size_t rows = 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS;
        pthread_t ids[64];
        int started[64] = {0};
        for (int t = 1; t < threads; t++)
            started[t] = pthread_create(&ids[t], NULL, part_run, &parts[t]) == 0;
        part_run(&parts[0]);
        for (int t = 1; t < threads; t++) {
            if (started[t])
                pthread_join(ids[t], NULL);
            else
                part_run(&parts[t]);
        }
        Py_END_ALLOW_THREADS;
        for (int t = 0; t < threads; t++) {
            ok = ok && !parts[t].failed;
            rows += parts[t].rows;
        }
    } else {
        PyErr_NoMemory();
    }
    PyBuffer_Release(&view);
    PyObject *result = NULL;
    if (ok && rows > 0) {
        /* a list of columns (None for skipped fields), each a list of chunks */
        result = PyList_New(n_fields);
        for (int f = 0; result && f < n_fields; f++) {
            if (kinds[f] == K_SKIP) {
                Py_INCREF(Py_None);
                PyList_SET_ITEM(result, f, Py_None);
                continue;
            }
            if (kinds[f] == K_STR && one_value(parts, threads, f)) {
                const Column *col = NULL;
                for (int t = 0; !col; t++)
                    if (parts[t].rows) col = &parts[t].cols[f];
                PyObject *value = Py_BuildValue("(s#n)", (const char *)col->first_bytes,
                                                (Py_ssize_t)col->first_len,
                                                (Py_ssize_t)rows);
                if (!value) {
                    Py_CLEAR(result);
                    break;
                }
                PyList_SET_ITEM(result, f, value);
                continue;
            }
            PyObject *chunks = PyList_New(0);
            if (!chunks) {
                Py_CLEAR(result);
                break;
            }
            PyList_SET_ITEM(result, f, chunks);
            for (int t = 0; t < threads; t++) {
                if (parts[t].rows == 0) continue;
                PyObject *chunk = chunk_new(&parts[t].cols[f], parts[t].rows);
                if (!chunk || PyList_Append(chunks, chunk) < 0) {
                    Py_XDECREF(chunk);
                    Py_CLEAR(result);
                    break;
                }
                Py_DECREF(chunk);
            }
        }
    } else if (ok || !PyErr_Occurred()) {
        result = Py_None;
        Py_INCREF(result);
    }
    for (int t = 0; t < threads; t++)
        for (int f = 0; f < n_fields; f++) column_free(&parts[t].cols[f]);
    free(parts);
    return result;
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_VARARGS,
     "parse(data, kinds, exact, threads) -> list of columns or None\n\n"
     "Tokenize TREC text (any buffer). `kinds` has one letter per field:\n"
     "'s' string, 'f' score, 'u' rank, 'i' grade, 'x' required but not kept.\n"
     "`exact` refuses lines with more fields. Returns one list of column\n"
     "chunks (Arrow PyCapsule exporters) per field, None for 'x' fields and\n"
     "(value, rows) for a string field holding one value on every line;\n"
     "or None when the text is anything but plain, for the Python readers."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ctrec",
                                    "A TREC text tokenizer (see io/trec.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__ctrec(void) {
    init_classes();
    C_LOCALE = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!C_LOCALE) return PyErr_NoMemory();
    if (PyType_Ready(&ChunkType) < 0) return NULL;
    return PyModule_Create(&module);
}
