/* The compiled attribute check of the decoder: _convert._python_members_as_laid_out in C.
 *
 * Decoding a writer's stream spends most of its time past orjson in checking that every
 * attribute holds exactly one member of the type its name calls for. In Python that takes four
 * passes over the attributes (member lookup, member types, member counts, integer range); here
 * it is one loop. The package works without this module (a build without a compiler, or
 * DRA_METADATA_PURE_PYTHON=1): both give the same answers, which
 * tests/decoding/test_compiled_check.py checks.
 *
 * Safety: no Python code runs inside the loop, so nothing can change or free what it reads.
 * The loop runs only on what orjson gives the decoder (a _Layout of exact lists; values in an
 * exact list, tuple or dict view; exact dicts with exact str keys; exact str names); the layout
 * and the values are copied into tuples first, every object read is held by one of them or by
 * the result, and the result is a list appended to, never one with empty slots. Anything else
 * (any object whose comparison, hashing or iteration could run Python code) is handed to the
 * Python twin, whose answer (or exception) is returned as it is.
 *
 * Built against the limited API of CPython 3.10, so that one abi3 module serves 3.10 and later.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define CONVERT_MODULE "dra_metadata._decoding._convert"

/* _convert._Layout, looked up again when a layout of another type comes (a reloaded module). */
static PyObject *layout_type = NULL;

/* Whether layout is a _convert._Layout (an exact one): 1, 0, or -1 with an exception set. */
static int
is_layout(PyObject *layout)
{
    if (layout_type != NULL && (PyObject *)Py_TYPE(layout) == layout_type) {
        return 1;
    }
    PyObject *convert = PyImport_ImportModule(CONVERT_MODULE);
    if (convert == NULL) {
        return -1;
    }
    PyObject *found = PyObject_GetAttrString(convert, "_Layout");
    Py_DECREF(convert);
    if (found == NULL) {
        return -1;
    }
    PyObject *old = layout_type;
    layout_type = found;
    Py_XDECREF(old);
    return (PyObject *)Py_TYPE(layout) == layout_type;
}

/* The answer of _convert._python_members_as_laid_out(values, layout), as it gives it. */
static PyObject *
twin(PyObject *values, PyObject *layout)
{
    PyObject *convert = PyImport_ImportModule(CONVERT_MODULE);
    if (convert == NULL) {
        return NULL;
    }
    PyObject *function = PyObject_GetAttrString(convert, "_python_members_as_laid_out");
    Py_DECREF(convert);
    if (function == NULL) {
        return NULL;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(function, values, layout, NULL);
    Py_DECREF(function);
    return result;
}

/* Whether max(picked) > INT64_MAX, as Python says it: 1, 0, or -1 with an exception set. */
static int
past_int64(PyObject *picked)
{
    if (PyTuple_CheckExact(picked) && PyTuple_Size(picked) > 0) {
        Py_ssize_t size = PyTuple_Size(picked);
        Py_ssize_t index;
        int past = 0;
        for (index = 0; index < size; index++) {
            PyObject *number = PyTuple_GetItem(picked, index);
            if (!PyLong_CheckExact(number)) {
                break;
            }
            int overflow;
            long long value = PyLong_AsLongLongAndOverflow(number, &overflow);
            if (value == -1 && PyErr_Occurred()) {
                return -1;
            }
            past |= overflow > 0;
        }
        if (index == size) {
            return past;
        }
    }
    /* Anything but a tuple of ints (a hand-made layout): what Python's max and > say. */
    PyObject *builtins = PyImport_ImportModule("builtins");
    if (builtins == NULL) {
        return -1;
    }
    PyObject *largest = PyObject_CallMethod(builtins, "max", "(O)", picked);
    Py_DECREF(builtins);
    if (largest == NULL) {
        return -1;
    }
    PyObject *limit = PyLong_FromLongLong(9223372036854775807LL);
    if (limit == NULL) {
        Py_DECREF(largest);
        return -1;
    }
    int past = PyObject_RichCompareBool(largest, limit, Py_GT);
    Py_DECREF(largest);
    Py_DECREF(limit);
    return past;
}

enum outcome { LAID_OUT, NOT_LAID_OUT, ASK_TWIN, FAILED };

/* The loop: the member of each value, appended to members. Reads only objects that the tuples
 * hold (and the members, which the values hold), and runs no Python code. */
static enum outcome
look_up(PyObject *items, PyObject *names, PyObject *types, PyObject *members)
{
    Py_ssize_t count = PyTuple_Size(items);
    int types_compared = PyTuple_Size(types) == count;
    Py_ssize_t other_type = -1; /* the first member whose type is not the layout's */
    Py_ssize_t sizes = 0;
    for (Py_ssize_t index = 0; index < count; index++) {
        PyObject *value = PyTuple_GetItem(items, index);
        if (!PyDict_Check(value)) {
            return NOT_LAID_OUT; /* dict.__getitem__ refuses it: TypeError */
        }
        PyObject *name = PyTuple_GetItem(names, index);
        if (!PyDict_CheckExact(value) || !PyUnicode_CheckExact(name)) {
            return ASK_TWIN; /* __missing__, __hash__ or __eq__ could run */
        }
        Py_ssize_t position = 0;
        PyObject *key, *member, *found = NULL; /* borrowed from value, which items holds */
        while (PyDict_Next(value, &position, &key, &member)) {
            if (!PyUnicode_CheckExact(key)) {
                return ASK_TWIN; /* its __eq__ could run */
            }
            if (found == NULL && (key == name || PyUnicode_Compare(key, name) == 0)) {
                found = member;
            }
        }
        if (found == NULL) {
            return NOT_LAID_OUT; /* KeyError */
        }
        sizes += PyDict_Size(value);
        if (types_compared && other_type < 0
            && (PyObject *)Py_TYPE(found) != PyTuple_GetItem(types, index)) {
            other_type = index;
        }
        if (PyList_Append(members, found) < 0) {
            return FAILED;
        }
    }
    if (!types_compared) {
        return NOT_LAID_OUT; /* lists of other lengths differ */
    }
    if (other_type >= 0) {
        /* Two types compare by identity unless a metaclass says otherwise. */
        PyObject *found_type = (PyObject *)Py_TYPE(PyList_GetItem(members, other_type));
        PyObject *wanted = PyTuple_GetItem(types, other_type);
        if (Py_TYPE(found_type) == &PyType_Type && Py_TYPE(wanted) == &PyType_Type) {
            return NOT_LAID_OUT;
        }
        return ASK_TWIN;
    }
    return sizes == count ? LAID_OUT : NOT_LAID_OUT; /* one member each */
}

/* members_as_laid_out(values, layout) -> list | None
 *
 * values: the attribute objects, in order; layout: a _convert._Layout. Returns the member of
 * each attribute when every value is a dict with exactly one member, named as the layout says,
 * of exactly the type it says, the integers that layout.ints picks at most INT64_MAX (orjson
 * gives none below INT64_MIN); None otherwise. Exactly what _python_members_as_laid_out
 * answers, errors included.
 */
static PyObject *
members_as_laid_out(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "members_as_laid_out() takes values and a layout");
        return NULL;
    }
    PyObject *values = args[0];
    PyObject *layout = args[1];
    int laid = is_layout(layout);
    if (laid <= 0) {
        return laid < 0 ? NULL : twin(values, layout);
    }
    PyObject *names_list = PyTuple_GetItem(layout, 0); /* the tuple holds them */
    PyObject *types_list = PyTuple_GetItem(layout, 1);
    PyObject *ints = PyTuple_GetItem(layout, 2);
    if (names_list == NULL || types_list == NULL || ints == NULL) {
        return NULL;
    }
    if (!PyList_CheckExact(names_list) || !PyList_CheckExact(types_list)
        || !(PyList_CheckExact(values) || PyTuple_CheckExact(values)
             || Py_TYPE(values) == &PyDictValues_Type)) {
        return twin(values, layout); /* len() or iter() could run Python code */
    }
    PyObject *names = PyList_AsTuple(names_list);
    PyObject *types = PyList_AsTuple(types_list);
    PyObject *items = PySequence_Tuple(values);
    PyObject *members = PyList_New(0);
    PyObject *result = NULL;
    enum outcome outcome = FAILED;
    if (names != NULL && types != NULL && items != NULL && members != NULL) {
        outcome = PyTuple_Size(items) == PyTuple_Size(names)
                      ? look_up(items, names, types, members)
                      : NOT_LAID_OUT;
    }
    if (outcome == LAID_OUT && ints != Py_None) {
        PyObject *picked = PyObject_CallFunctionObjArgs(ints, members, NULL);
        int past = picked == NULL ? -1 : past_int64(picked);
        Py_XDECREF(picked);
        outcome = past < 0 ? FAILED : past ? NOT_LAID_OUT : LAID_OUT;
    }
    if (outcome == LAID_OUT) {
        result = members;
        members = NULL;
    }
    else if (outcome == NOT_LAID_OUT) {
        result = Py_None;
        Py_INCREF(result);
    }
    Py_XDECREF(names);
    Py_XDECREF(types);
    Py_XDECREF(items);
    Py_XDECREF(members);
    if (outcome == ASK_TWIN) {
        result = twin(values, layout);
    }
    return result;
}

static PyMethodDef speedups_methods[] = {
    {"members_as_laid_out", (PyCFunction)(void (*)(void))members_as_laid_out, METH_FASTCALL,
     "The member of each attribute if the attributes have the layout, else None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "dra_metadata._decoding._speedups",
    "The compiled attribute check of the decoder (see _convert).",
    0,
    speedups_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

#ifndef SOURCE_SHA256
#define SOURCE_SHA256 "" /* hatch_build.py defines it: the SHA-256 of this file when compiled */
#endif

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module = PyModule_Create(&speedups_module);
    if (module != NULL && PyModule_AddStringConstant(module, "SOURCE_SHA256", SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
