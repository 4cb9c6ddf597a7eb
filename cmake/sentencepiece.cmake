# Provides the target nmt::sentencepiece (processor + trainer) and NMT_SENTENCEPIECE_ORIGIN.
#
# Debian's libsentencepiece.so carries a private protobuf-lite 3.14 and exports its symbols, while
# Debian's LibTorch links the system protobuf 3.21: a process loading both dies before main().
# The root fix is to build sentencepiece from source against the system protobuf and link it
# statically (NMT_SENTENCEPIECE=source, what scripts/setup.sh arranges). `system` uses the
# installed library and is only accepted when a probe program linking both LibTorch and it runs.
set(NMT_SENTENCEPIECE "auto" CACHE STRING "sentencepiece to use: auto|source|system")
set_property(CACHE NMT_SENTENCEPIECE PROPERTY STRINGS auto source system)
set(NMT_SENTENCEPIECE_SOURCE_DIR "${PROJECT_SOURCE_DIR}/third_party/sentencepiece"
    CACHE PATH "sentencepiece source tree (scripts/fetch_sentencepiece.sh puts it here)")

set(_nmt_sp_mode "${NMT_SENTENCEPIECE}")
if(_nmt_sp_mode STREQUAL "auto")
  if(EXISTS "${NMT_SENTENCEPIECE_SOURCE_DIR}/CMakeLists.txt")
    set(_nmt_sp_mode source)
  else()
    set(_nmt_sp_mode system)
  endif()
endif()

if(_nmt_sp_mode STREQUAL "source")
  if(NOT EXISTS "${NMT_SENTENCEPIECE_SOURCE_DIR}/CMakeLists.txt")
    message(FATAL_ERROR "NMT_SENTENCEPIECE=source but ${NMT_SENTENCEPIECE_SOURCE_DIR} has no "
                        "sentencepiece source: run scripts/fetch_sentencepiece.sh")
  endif()
  find_package(Protobuf REQUIRED)
  set(SPM_USE_BUILTIN_PROTOBUF OFF CACHE BOOL "" FORCE)
  set(SPM_ENABLE_SHARED OFF CACHE BOOL "" FORCE)
  set(SPM_ENABLE_TCMALLOC OFF CACHE BOOL "" FORCE)
  set(SPM_BUILD_TEST OFF CACHE BOOL "" FORCE)
  # Third-party code: build it quietly and without our sanitizer/warning flags.
  set(_nmt_saved_flags "${CMAKE_CXX_FLAGS}")
  set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -w")
  add_subdirectory("${NMT_SENTENCEPIECE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/_deps/sentencepiece"
                   EXCLUDE_FROM_ALL SYSTEM)
  set(CMAKE_CXX_FLAGS "${_nmt_saved_flags}")
  add_library(nmt_sentencepiece INTERFACE)
  target_link_libraries(nmt_sentencepiece INTERFACE sentencepiece_train-static
                        sentencepiece-static protobuf::libprotobuf-lite)
  target_include_directories(nmt_sentencepiece SYSTEM INTERFACE
                             "${NMT_SENTENCEPIECE_SOURCE_DIR}/src")
  file(READ "${NMT_SENTENCEPIECE_SOURCE_DIR}/VERSION.txt" _nmt_sp_version)
  string(STRIP "${_nmt_sp_version}" _nmt_sp_version)
  set(NMT_SENTENCEPIECE_ORIGIN "${_nmt_sp_version} (source, static, system protobuf)")
elseif(_nmt_sp_mode STREQUAL "system")
  # pkg-config where it is there; otherwise the header and libraries on CMAKE_PREFIX_PATH.
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(SENTENCEPIECE QUIET IMPORTED_TARGET sentencepiece)
  endif()
  if(NOT SENTENCEPIECE_FOUND)
    find_path(NMT_SP_INCLUDE_DIR sentencepiece_processor.h REQUIRED)
    find_library(NMT_SP_LIB sentencepiece REQUIRED)
    add_library(PkgConfig::SENTENCEPIECE UNKNOWN IMPORTED)
    set_target_properties(PkgConfig::SENTENCEPIECE PROPERTIES IMPORTED_LOCATION "${NMT_SP_LIB}"
                          INTERFACE_INCLUDE_DIRECTORIES "${NMT_SP_INCLUDE_DIR}")
    set(SENTENCEPIECE_INCLUDE_DIRS "${NMT_SP_INCLUDE_DIR}")
    set(SENTENCEPIECE_VERSION "unknown version")
  endif()
  find_library(NMT_SP_TRAIN_LIB sentencepiece_train REQUIRED)
  # Probe: does a process holding LibTorch and this sentencepiece survive start-up?
  # It links LibTorch's library files, not its imported targets: a try_run project would need
  # their whole link interface (CUDA, protobuf, ...) defined again.
  set(_nmt_probe_libs)
  foreach(_nmt_lib torch_cpu c10)
    if(NOT TARGET ${_nmt_lib})
      set(_nmt_probe_libs ${TORCH_LIBRARIES})
      break()
    endif()
    get_target_property(_nmt_location ${_nmt_lib} LOCATION)
    list(APPEND _nmt_probe_libs "${_nmt_location}")
  endforeach()
  try_run(_nmt_sp_run _nmt_sp_compile
          SOURCES "${PROJECT_SOURCE_DIR}/cmake/sentencepiece_probe.cpp"
          LINK_LIBRARIES ${_nmt_probe_libs} PkgConfig::SENTENCEPIECE ${NMT_SP_TRAIN_LIB}
          CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${TORCH_INCLUDE_DIRS};${SENTENCEPIECE_INCLUDE_DIRS}"
          COMPILE_DEFINITIONS ${TORCH_CXX_FLAGS}
          CXX_STANDARD 17
          COMPILE_OUTPUT_VARIABLE _nmt_sp_compile_out)
  if(NOT _nmt_sp_compile OR NOT _nmt_sp_run EQUAL 0)
    message(FATAL_ERROR "The system sentencepiece cannot share a process with this LibTorch "
                        "(probe compile=${_nmt_sp_compile} exit=${_nmt_sp_run}). Run "
                        "scripts/fetch_sentencepiece.sh and configure with NMT_SENTENCEPIECE=source.")
  endif()
  add_library(nmt_sentencepiece INTERFACE)
  target_link_libraries(nmt_sentencepiece INTERFACE ${NMT_SP_TRAIN_LIB} PkgConfig::SENTENCEPIECE)
  set(NMT_SENTENCEPIECE_ORIGIN "${SENTENCEPIECE_VERSION} (system, probed)")
else()
  message(FATAL_ERROR "NMT_SENTENCEPIECE='${NMT_SENTENCEPIECE}': valid values are auto, source, system")
endif()
add_library(nmt::sentencepiece ALIAS nmt_sentencepiece)
message(STATUS "nmt: sentencepiece ${NMT_SENTENCEPIECE_ORIGIN}")
