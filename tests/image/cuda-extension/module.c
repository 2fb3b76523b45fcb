/* The extension's Python side: gpuenv_test_ext.runtime_version() and
 * gpuenv_test_ext.add_one() -> (CUDA error name, all values added). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

int gpuenv_ext_runtime_version(void);
const char* gpuenv_ext_add_one(int* ok);

static PyObject* runtime_version(PyObject* self, PyObject* args) {
  (void)self, (void)args;
  return PyLong_FromLong(gpuenv_ext_runtime_version());
}

static PyObject* add_one(PyObject* self, PyObject* args) {
  (void)self, (void)args;
  int ok = 0;
  const char* error = gpuenv_ext_add_one(&ok);
  return Py_BuildValue("(sO)", error, ok ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "The CUDA runtime's version (13000 for 13.0)."},
    {"add_one", add_one, METH_NOARGS, "Runs the kernel: (CUDA error name, all values added)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gpuenv_test_ext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_gpuenv_test_ext(void) { return PyModule_Create(&module); }
