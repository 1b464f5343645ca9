# Fault injection for every file path (tests/fault): an LD_PRELOAD shim makes
# writes, reads, open and fsync fail on a chosen rank after N bytes. Not in
# sanitizer builds: an ASan binary refuses a preloaded library ahead of its
# runtime.
if(NOT GR_SANITIZE)
  add_library(gr_fault SHARED ${GR_TEST_DIR}/fault/gr_fault.c)
  target_compile_options(gr_fault PRIVATE ${GR_C_WARNINGS})
  target_link_libraries(gr_fault PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  gr_add_script_test(fault_io ${GR_TEST_DIR}/fault/run_faults.sh LABELS "io;fault" TIMEOUT 600
    ARGS $<TARGET_FILE:gr_fault>)
  gr_add_script_test(gpu_fault_io ${GR_TEST_DIR}/fault/run_faults.sh LABELS "gpu;io;fault" TIMEOUT 300
    ARGS $<TARGET_FILE:gr_fault> --gpu)
endif()
