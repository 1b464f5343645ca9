# docs (label mpi): the library program printed in README.md ("The library") is
# cut out of README.md at configure time, built against libgpureduce like an
# application (the library's public include directory only, -Werror) and run
# on 2 ranks with backend auto (the cpu backend where no GPU is visible), so the
# front page's example cannot stop compiling or give another answer unnoticed.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/README.md)
file(READ ${PROJECT_SOURCE_DIR}/README.md gr_readme)
string(REGEX MATCH "<!-- readme_example.c: built and run by tests/cmake/docs.cmake -->\n```c\n([^`]*)```"
  gr_readme_match "${gr_readme}")
if(NOT gr_readme_match)
  message(FATAL_ERROR "README.md: no C block after '<!-- readme_example.c: built and run by tests/cmake/docs.cmake -->'")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/readme_example.c "${CMAKE_MATCH_1}")
add_executable(readme_example ${CMAKE_CURRENT_BINARY_DIR}/readme_example.c)
target_link_libraries(readme_example PRIVATE gpureduce)
target_compile_options(readme_example PRIVATE ${GR_C_WARNINGS} ${GR_SAN_FLAGS})
if(GR_WITH_CUDA)
  set_target_properties(readme_example PROPERTIES LINKER_LANGUAGE CUDA CUDA_RUNTIME_LIBRARY Shared)
endif()
gr_add_script_test(docs_readme_example ${GR_TEST_DIR}/docs/run_readme_example.sh
  ARGS $<TARGET_FILE:readme_example> LABELS mpi TIMEOUT 60 ENV "ASAN_OPTIONS=detect_leaks=0")
