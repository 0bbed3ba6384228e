# ctest driver: install the built library into a scratch prefix, then configure, build and
# run tests/consumer against it with find_package(tscan).
set(prefix ${BUILD_DIR}/consumer-check/prefix)
set(consumer_build ${BUILD_DIR}/consumer-check/build)
file(REMOVE_RECURSE ${BUILD_DIR}/consumer-check)
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD_DIR};--prefix;${prefix}"
    "${CMAKE_COMMAND};-S;${SOURCE_DIR}/tests/consumer;-B;${consumer_build};-DCMAKE_PREFIX_PATH=${prefix}"
    "${CMAKE_COMMAND};--build;${consumer_build}"
    "${consumer_build}/tscan_consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${step}")
  endif()
endforeach()
