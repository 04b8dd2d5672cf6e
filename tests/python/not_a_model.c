/* A shared library that is not a Tessel model (no tessel_abi_version): the
 * Python package and the C example must refuse it with a clear error. */
int tessel_python_not_a_model_answer(void);

int tessel_python_not_a_model_answer(void) {
  return 42;
}
