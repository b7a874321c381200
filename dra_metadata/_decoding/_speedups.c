/* The compiled attribute check of the decoder: _convert._python_members_as_laid_out in C.
 *
 * Decoding a writer's stream spends most of its time past orjson in checking that every
 * attribute holds exactly one member of the type its name calls for. In Python that takes four
 * passes over the attributes (member lookup, member types, member counts, integer range); here
 * it is one loop. The package works without this module (a build without a compiler, or
 * DRA_METADATA_PURE_PYTHON=1): both give the same answers, which tests/test_speedups.py checks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* members_as_laid_out(values, layout) -> list | None
 *
 * values: the attribute objects, in order (any iterable); layout: a tuple whose first two items
 * are the member name and the member type of each attribute (lists of one length). Returns the
 * member of each attribute when every value is a dict with exactly one member, named as the
 * layout says, of exactly the type it says, integers at most INT64_MAX (orjson gives none below
 * INT64_MIN); None otherwise.
 */
static PyObject *
members_as_laid_out(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "members_as_laid_out() takes values and a layout");
        return NULL;
    }
    PyObject *layout = args[1];
    if (!PyTuple_Check(layout) || PyTuple_GET_SIZE(layout) < 2) {
        PyErr_SetString(PyExc_TypeError, "members_as_laid_out(): the layout must be a tuple");
        return NULL;
    }
    PyObject *names = PyTuple_GET_ITEM(layout, 0);
    PyObject *types = PyTuple_GET_ITEM(layout, 1);
    if (!PyList_CheckExact(names) || !PyList_CheckExact(types)
        || PyList_GET_SIZE(names) != PyList_GET_SIZE(types)) {
        PyErr_SetString(PyExc_TypeError,
                        "members_as_laid_out(): names and types must be lists of one length");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(names);
    PyObject *members = PyList_New(count); /* items stay NULL until set, which dealloc allows */
    if (members == NULL) {
        return NULL;
    }
    PyObject *iterator = PyObject_GetIter(args[0]);
    if (iterator == NULL) {
        Py_DECREF(members);
        return NULL;
    }
    Py_ssize_t index = 0;
    PyObject *value;
    int failed = 0; /* 0: laid out so far, 1: not laid out, -1: an exception is set */
    while ((value = PyIter_Next(iterator)) != NULL) {
        if (index == count || !PyDict_Check(value) || PyDict_GET_SIZE(value) != 1) {
            failed = 1;
        }
        else {
            Py_ssize_t position = 0;
            PyObject *key, *member; /* borrowed from value, which we hold */
            PyDict_Next(value, &position, &key, &member);
            PyObject *name = PyList_GET_ITEM(names, index);
            int same = key == name ? 1 : PyObject_RichCompareBool(key, name, Py_EQ);
            if (same < 0) {
                failed = -1;
            }
            else if (!same || (PyObject *)Py_TYPE(member) != PyList_GET_ITEM(types, index)) {
                failed = 1;
            }
            else {
                if (PyLong_CheckExact(member)) {
                    int overflow;
                    long long number = PyLong_AsLongLongAndOverflow(member, &overflow);
                    if (number == -1 && PyErr_Occurred()) {
                        failed = -1;
                    }
                    else if (overflow > 0) { /* orjson gives no integer below INT64_MIN */
                        failed = 1;
                    }
                }
                if (!failed) {
                    Py_INCREF(member);
                    PyList_SET_ITEM(members, index, member);
                    index++;
                }
            }
        }
        Py_DECREF(value);
        if (failed) {
            break;
        }
    }
    Py_DECREF(iterator);
    if (failed < 0 || (failed == 0 && PyErr_Occurred())) {
        Py_DECREF(members);
        return NULL;
    }
    if (failed || index != count) {
        Py_DECREF(members);
        Py_RETURN_NONE;
    }
    return members;
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
