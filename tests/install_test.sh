#!/usr/bin/env bash
# CTest (install_test): jp-actors as an embedder gets it. Installs the build into a
# temporary prefix, builds examples/embed out of tree against it with find_package
# alone, and runs it; then checks that a project adding jp-actors with
# add_subdirectory gets no test or benchmark targets.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { # what went wrong, then the log that says why
  echo "install_test: $1" >&2
  [ -n "${2:-}" ] && cat "$2" >&2
  exit 1
}

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || fail "cmake --install failed" "$tmp/install.log"
[ -f "$prefix/include/jp/jp.hpp" ] || fail "no include/jp/jp.hpp" "$tmp/install.log"
[ -f "$prefix/include/jp/messages/json.hpp" ] || fail "no headers under include/jp/" "$tmp/install.log"
[ -e "$prefix/include/jp/runtime/embedding" ] && fail "the API's insides were installed" "$tmp/install.log"
[ -x "$prefix/bin/jp-actors" ] || fail "no bin/jp-actors" "$tmp/install.log"
config=$(find "$prefix" -name jp_actorsConfigVersion.cmake)
[ -n "$config" ] || fail "no jp_actorsConfigVersion.cmake" "$tmp/install.log"

# Each installed header finds what it includes beside it, by a path relative to
# itself, never through the include path, where a program's own config/config.hpp or
# messages/json.hpp would come first.
find "$prefix/include/jp" -name '*.hpp' | sort >"$tmp/headers"
while read -r header; do
  while read -r included; do
    [ -f "$(dirname "$header")/$included" ] ||
      fail "${header#"$prefix"/} includes \"$included\", which is not beside it (include it by a relative path)"
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$header")
done <"$tmp/headers"

# find_package alone: nothing of the source tree is on any path. Built with the
# flags the library was (a sanitized library needs its runtime in the program too).
cache_value() { sed -n "s/^$1:STRING=//p" "$build/CMakeCache.txt"; }
cmake -S "$src/examples/embed" -B "$tmp/embed" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="$(cache_value CMAKE_CXX_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$(cache_value CMAKE_EXE_LINKER_FLAGS)" \
  >"$tmp/configure.log" 2>&1 ||
  fail "configuring examples/embed against the install failed" "$tmp/configure.log"
cmake --build "$tmp/embed" -j2 >"$tmp/build.log" 2>&1 || fail "building examples/embed failed" "$tmp/build.log"
(cd "$tmp" && "$tmp/embed/embed") >"$tmp/run.log" 2>&1 || fail "examples/embed failed" "$tmp/run.log"
# The function tool's and the process tool's results, awaited together; then the turn.
grep -q '"id":"sq","state":"stopped","result":"49.0"' "$tmp/run.log" || fail "examples/embed: no result of the function tool" "$tmp/run.log"
grep -q '"id":"seq","state":"stopped","result":"1\\n2\\n3\\n"' "$tmp/run.log" || fail "examples/embed: no result of the process tool" "$tmp/run.log"
grep -q '^turn completed: 12 squared is 144.$' "$tmp/run.log" || fail "examples/embed: the turn did not complete" "$tmp/run.log"

# pkg-config alone, as a Makefile would: the same program, built and run.
pc=$(find "$prefix" -name jp_actors.pc)
[ -n "$pc" ] || fail "no jp_actors.pc" "$tmp/install.log"
pc_version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion jp_actors)
[ "$pc_version" = "$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")" ] ||
  fail "jp_actors.pc says version $pc_version"
# shellcheck disable=SC2046 # pkg-config's flags are words
c++ $(cache_value CMAKE_CXX_FLAGS) "$src/examples/embed/main.cpp" -o "$tmp/embed-pc" \
  $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs jp_actors) $(cache_value CMAKE_EXE_LINKER_FLAGS) \
  >"$tmp/pc.log" 2>&1 || fail "building examples/embed with pkg-config's flags failed" "$tmp/pc.log"
(cd "$tmp" && "$tmp/embed-pc") >"$tmp/pc-run.log" 2>&1 || fail "examples/embed built with pkg-config failed" "$tmp/pc-run.log"
grep -q '^turn completed: 12 squared is 144.$' "$tmp/pc-run.log" ||
  fail "examples/embed built with pkg-config: the turn did not complete" "$tmp/pc-run.log"

# The public headers as a program with warnings on sees them (pkg-config's -I, no
# -isystem): not one warning. Only <prefix>/include is on the path.
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags jp_actors)
case " $cflags " in *"/include/jp "*) fail "pkg-config puts include/jp on the include path: $cflags" ;; esac
printf '#include <jp/jp.hpp>\n#include <jp/executor.hpp>\n#include <jp/runtime/actor_config.hpp>\n' >"$tmp/headers.cpp"
# shellcheck disable=SC2086 # pkg-config's flags are words
c++ $cflags -Wall -Wextra -Werror -fsyntax-only "$tmp/headers.cpp" >"$tmp/warnings.log" 2>&1 ||
  fail "the public headers are not warning-free under -Wall -Wextra" "$tmp/warnings.log"
# So is the example, the docs' code (designated initializers leave members out).
# shellcheck disable=SC2086
c++ $cflags -Wall -Wextra -Werror -fsyntax-only "$src/examples/embed/main.cpp" >"$tmp/warnings.log" 2>&1 ||
  fail "examples/embed is not warning-free under -Wall -Wextra" "$tmp/warnings.log"

# A version this install is not: refused.
mkdir -p "$tmp/newer"
cat >"$tmp/newer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(newer LANGUAGES CXX)
find_package(jp_actors 0.3 REQUIRED)
CMAKE
if cmake -S "$tmp/newer" -B "$tmp/newer/b" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/newer.log" 2>&1; then
  fail "find_package(jp_actors 0.3) accepted a 0.2 install" "$tmp/newer.log"
fi
grep -q 'compatible with requested version "0.3"' "$tmp/newer.log" ||
  fail "find_package(jp_actors 0.3) failed, but not for its version" "$tmp/newer.log"

# A CAF that is not 0.17 (a fake 0.18's headers), in a project that has a CAF::core
# target of its own: not found, saying why, and the caller's module path left as it
# was.
mkdir -p "$tmp/caf18/caf" "$tmp/oldcaf"
touch "$tmp/caf18/caf/all.hpp"
echo '#define CAF_VERSION 1800' >"$tmp/caf18/caf/config.hpp"
cat >"$tmp/oldcaf/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(oldcaf LANGUAGES CXX)
add_library(CAF::core INTERFACE IMPORTED) # the project's own CAF
find_package(jp_actors 0.2 QUIET)
if(jp_actors_FOUND)
  message(FATAL_ERROR "jp_actors was found with CAF 0.18")
endif()
message(STATUS "why: ${jp_actors_NOT_FOUND_MESSAGE}")
message(STATUS "module path: [${CMAKE_MODULE_PATH}]")
CMAKE
cmake -S "$tmp/oldcaf" -B "$tmp/oldcaf/b" -DCMAKE_PREFIX_PATH="$prefix" -DCAF_INCLUDE_DIR="$tmp/caf18" \
  >"$tmp/oldcaf.log" 2>&1 || fail "find_package(jp_actors) with CAF 0.18 failed the configure" "$tmp/oldcaf.log"
grep -q 'why: jp_actors needs CAF 0.17.x' "$tmp/oldcaf.log" || fail "no reason given for CAF 0.18" "$tmp/oldcaf.log"
grep -q 'module path: \[\]' "$tmp/oldcaf.log" || fail "a failed find_package(jp_actors) changed CMAKE_MODULE_PATH" "$tmp/oldcaf.log"

# add_subdirectory: the library and the CLI, no tests, no benchmark.
mkdir -p "$tmp/sub"
cat >"$tmp/sub/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES C CXX)
add_subdirectory("$src" jp)
CMAKE
cmake -S "$tmp/sub" -B "$tmp/sub/b" >"$tmp/sub.log" 2>&1 || fail "add_subdirectory of jp-actors failed" "$tmp/sub.log"
[ -e "$tmp/sub/b/jp/tests" ] && fail "add_subdirectory built jp-actors' tests" "$tmp/sub.log"
[ -e "$tmp/sub/b/jp/bench" ] && fail "add_subdirectory built jp-actors' benchmark" "$tmp/sub.log"
grep -q 'jp_actorsConfig' "$tmp/sub/b/jp/cmake_install.cmake" && fail "add_subdirectory installs jp-actors' files" "$tmp/sub.log"
echo "install_test: installed, found, built and ran examples/embed (CMake and pkg-config); add_subdirectory adds no tests and installs nothing of ours"
