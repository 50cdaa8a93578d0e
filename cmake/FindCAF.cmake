# Debian's libcaf-dev ships no CMake config: find CAF 0.17's headers and libraries
# ourselves and expose them as imported targets CAF::core, CAF::io, CAF::openssl.
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIBRARY caf_core)
find_library(CAF_IO_LIBRARY caf_io)
find_library(CAF_OPENSSL_LIBRARY caf_openssl)

# The version from caf/config.hpp (CAF_VERSION 1706 is 0.17.6): jp-actors is built
# on CAF 0.17, whose API and ABI later versions do not keep.
# Later CAFs define it in caf/detail/build_config.hpp; a CAF whose version cannot be
# read is not taken (CAF_VERSION is one of the required variables below).
unset(CAF_VERSION)
foreach(header caf/config.hpp caf/detail/build_config.hpp)
  if(CAF_INCLUDE_DIR AND NOT CAF_VERSION AND EXISTS "${CAF_INCLUDE_DIR}/${header}")
    file(STRINGS "${CAF_INCLUDE_DIR}/${header}" caf_version_line REGEX "^#define CAF_VERSION [0-9]+")
    string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" caf_version_number "${caf_version_line}")
    if(caf_version_number)
      math(EXPR caf_major "${caf_version_number} / 10000")
      math(EXPR caf_minor "${caf_version_number} / 100 % 100")
      math(EXPR caf_patch "${caf_version_number} % 100")
      set(CAF_VERSION "${caf_major}.${caf_minor}.${caf_patch}")
    endif()
  endif()
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY CAF_VERSION
  VERSION_VAR CAF_VERSION HANDLE_VERSION_RANGE)

if(CAF_FOUND)
  foreach(part CORE IO OPENSSL)
    string(TOLOWER ${part} name)
    if(CAF_${part}_LIBRARY AND NOT TARGET CAF::${name})
      add_library(CAF::${name} UNKNOWN IMPORTED)
      set_target_properties(CAF::${name} PROPERTIES
        IMPORTED_LOCATION "${CAF_${part}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}")
    endif()
  endforeach()
  set_property(TARGET CAF::io APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::core)
  set_property(TARGET CAF::openssl APPEND PROPERTY INTERFACE_LINK_LIBRARIES CAF::io)
endif()
