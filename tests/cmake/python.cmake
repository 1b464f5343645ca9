# The Python package (python/, issue 23): pytest under mpirun, on the shared
# library of this build tree and the package's source (nothing installed).
# Label python; exit 77 (SKIP) without numpy / mpi4py / pytest (installed by
# jobs/install-deps.sh --with-test-deps), for sanitizer and static builds.

find_program(GR_PYTHON NAMES python3 python)
if(GR_PYTHON AND NOT GR_BUILD_STATIC)
  set(GR_PY_ENV "GR_PYTHON=${GR_PYTHON};GPUREDUCE_LIBRARY=$<TARGET_FILE:gpureduce>")
  # adversarial .npy files and the gpureduce command's exact results on them
  gr_add_script_test(python_data ${GR_TEST_DIR}/python/python_data.sh LABELS python TIMEOUT 300 ENV ${GR_PY_ENV})
  set_tests_properties(python_data PROPERTIES FIXTURES_SETUP gr_python_data)
  foreach(np 1 2 3)
    gr_add_script_test(python_np${np} ${GR_TEST_DIR}/python/python_test.sh ARGS ${np} cpu LABELS python
      TIMEOUT 300 ENV ${GR_PY_ENV})
    set_tests_properties(python_np${np} PROPERTIES FIXTURES_REQUIRED gr_python_data)
  endforeach()
  # cmake --install + pip install ./python + docs/PYTHON.md's example, library found by pkg-config
  gr_add_script_test(python_install ${GR_TEST_DIR}/python/python_install.sh LABELS python TIMEOUT 300
    ENV GR_PYTHON=${GR_PYTHON})
  if(GR_WITH_CUDA)
    # cuda results == cpu exact bits, through a __cuda_array_interface__ object over
    # memory from libcudart (ctypes; no CuPy needed). Label gpu: 77 without a GPU.
    foreach(np 1 2)
      gr_add_script_test(gpu_python_np${np} ${GR_TEST_DIR}/python/python_test.sh ARGS ${np} gpu LABELS gpu
        TIMEOUT 300 ENV ${GR_PY_ENV})
    endforeach()
  endif()
endif()
