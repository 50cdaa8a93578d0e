#include "config/code_variable.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace jp {

std::string_view code_variable_reader(std::string_view name) {
  using entry = std::pair<std::string_view, std::string_view>;
  // Prefixes: every LD_* the loader reads (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH);
  // bash imports BASH_FUNC_name%% as a function; git reads GIT_CONFIG_KEY_n/VALUE_n
  // as config (core.sshCommand, core.fsmonitor run commands).
  static constexpr std::array prefixes{
    entry{"LD_", "the dynamic loader"},
    entry{"BASH_FUNC_", "bash"},
    entry{"GIT_CONFIG_KEY_", "git"},
    entry{"GIT_CONFIG_VALUE_", "git"},
    entry{"LUA_INIT", "Lua"},
    entry{"DYLD_", "the dynamic loader"},
  };
  for (auto& [prefix, reader] : prefixes)
    if (name.starts_with(prefix))
      return reader;
  // npm reads its config from npm_config_* in any case (script-shell runs scripts).
  if (name.size() > 11) {
    std::string head(name.substr(0, 11));
    for (auto& c : head)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head == "npm_config_")
      return "npm";
  }
  // CARGO_TARGET_<triple>_RUNNER and _LINKER (not CARGO_TARGET_DIR, a path).
  if (name.starts_with("CARGO_TARGET_") && (name.ends_with("_RUNNER") || name.ends_with("_LINKER")))
    return "cargo";
  // CMAKE_<LANG>_COMPILER_LAUNCHER and _LINKER_LAUNCHER: a program CMake runs first.
  if (name.starts_with("CMAKE_") && (name.ends_with("_COMPILER_LAUNCHER") || name.ends_with("_LINKER_LAUNCHER")))
    return "CMake";
  static constexpr std::array names{
    entry{"GCONV_PATH", "glibc"},
    entry{"GLIBC_TUNABLES", "glibc"},
    entry{"PATH", "every program that looks a command up"},
    entry{"HOME", "programs that run what their dotfiles say (git, bash, ssh)"},
    entry{"XDG_CONFIG_HOME", "programs that run what their config says (git)"},
    entry{"SHELL", "programs that start a shell (make, editors)"},
    entry{"BASH_ENV", "bash"},
    entry{"ENV", "sh"},
    entry{"ZDOTDIR", "zsh"},
    entry{"PS0", "bash"},
    entry{"PS1", "bash"},
    entry{"PS2", "bash"},
    entry{"PS3", "bash"},
    entry{"PS4", "bash"},
    entry{"PROMPT_COMMAND", "bash"},
    entry{"SHELLOPTS", "bash"},
    entry{"BASHOPTS", "bash"},
    entry{"BASH_LOADABLES_PATH", "bash"},
    entry{"CDPATH", "bash"},
    entry{"EDITOR", "programs that open an editor"},
    entry{"VISUAL", "programs that open an editor"},
    entry{"PAGER", "programs that page their output"},
    entry{"MANPAGER", "man"},
    entry{"LESSOPEN", "less"},
    entry{"LESSCLOSE", "less"},
    entry{"BROWSER", "programs that open a browser"},
    entry{"SSH_ASKPASS", "ssh"},
    entry{"SUDO_ASKPASS", "sudo"},
    entry{"GIT_SSH", "git"},
    entry{"GIT_SSH_COMMAND", "git"},
    entry{"GIT_EXTERNAL_DIFF", "git"},
    entry{"GIT_PAGER", "git"},
    entry{"GIT_EDITOR", "git"},
    entry{"GIT_SEQUENCE_EDITOR", "git"},
    entry{"GIT_ASKPASS", "git"},
    entry{"GIT_EXEC_PATH", "git"},
    entry{"GIT_PROXY_COMMAND", "git"},
    entry{"GIT_CONFIG", "git"},
    entry{"GIT_CONFIG_GLOBAL", "git"},
    entry{"GIT_CONFIG_SYSTEM", "git"},
    entry{"GIT_CONFIG_PARAMETERS", "git"},
    entry{"GIT_DIR", "git (the repository's config and hooks)"},
    entry{"GIT_TEMPLATE_DIR", "git (its hooks)"},
    entry{"PYTHONPATH", "Python"},
    entry{"PYTHONHOME", "Python"},
    entry{"PYTHONSTARTUP", "Python"},
    entry{"PYTHONUSERBASE", "Python"},
    entry{"PYTHONBREAKPOINT", "Python"},
    entry{"PYTHONWARNINGS", "Python"},
    entry{"NODE_OPTIONS", "Node.js"},
    entry{"NODE_PATH", "Node.js"},
    entry{"NODE_REPL_EXTERNAL_MODULE", "Node.js"},
    entry{"PERL5OPT", "Perl"},
    entry{"PERL5LIB", "Perl"},
    entry{"PERLLIB", "Perl"},
    entry{"PERL5DB", "Perl"},
    entry{"RUBYOPT", "Ruby"},
    entry{"RUBYLIB", "Ruby"},
    entry{"JAVA_TOOL_OPTIONS", "Java"},
    entry{"_JAVA_OPTIONS", "Java"},
    entry{"JDK_JAVA_OPTIONS", "Java"},
    entry{"CLASSPATH", "Java"},
    entry{"LUA_PATH", "Lua"},
    entry{"LUA_CPATH", "Lua"},
    entry{"TCLLIBPATH", "Tcl"},
    entry{"PHPRC", "PHP"},
    entry{"PHP_INI_SCAN_DIR", "PHP"},
    entry{"OPENSSL_CONF", "OpenSSL"},
    entry{"OPENSSL_ENGINES", "OpenSSL"},
    entry{"OPENSSL_MODULES", "OpenSSL"},
    entry{"MAKEFLAGS", "make"},
    entry{"GNUMAKEFLAGS", "make"},
    entry{"MFLAGS", "make"},
    entry{"MAKEFILES", "make (makefiles it reads first)"},
    entry{"CC", "build systems"},
    entry{"CXX", "build systems"},
    entry{"CPP", "build systems"},
    entry{"FC", "build systems"},
    entry{"LD", "build systems"},
    entry{"AR", "build systems"},
    entry{"AS", "build systems"},
    entry{"NM", "build systems"},
    entry{"RANLIB", "build systems"},
    entry{"STRIP", "build systems"},
    entry{"OBJCOPY", "build systems"},
    entry{"PKG_CONFIG", "build systems"},
    entry{"CMAKE_TOOLCHAIN_FILE", "CMake (a script it runs)"},
    entry{"CFLAGS", "compilers (-fplugin, -wrapper)"},
    entry{"CXXFLAGS", "compilers (-fplugin, -wrapper)"},
    entry{"CPPFLAGS", "compilers (-fplugin, -wrapper)"},
    entry{"LDFLAGS", "linkers (-wrapper)"},
    entry{"CGO_CFLAGS", "go (cgo's compiler: -wrapper)"},
    entry{"CGO_CPPFLAGS", "go (cgo's compiler: -wrapper)"},
    entry{"CGO_CXXFLAGS", "go (cgo's compiler: -wrapper)"},
    entry{"CGO_LDFLAGS", "go (cgo's linker: -wrapper)"},
    entry{"CCACHE_PREFIX", "ccache (a command it runs)"},
    entry{"RSYNC_RSH", "rsync (the command it connects with)"},
    entry{"RSYNC_CONNECT_PROG", "rsync (the command it connects with)"},
    entry{"SVN_SSH", "svn (the command it connects with)"},
    entry{"CVS_RSH", "cvs (the command it connects with)"},
    entry{"FCEDIT", "bash's fc (the editor it runs)"},
    entry{"DOTNET_STARTUP_HOOKS", ".NET (assemblies it loads)"},
    entry{"CORECLR_PROFILER_PATH", ".NET (a library it loads)"},
    entry{"JULIA_LOAD_PATH", "Julia"},
    entry{"GST_PLUGIN_PATH", "GStreamer (plugins it loads)"},
    entry{"QT_PLUGIN_PATH", "Qt (plugins it loads)"},
    entry{"GTK_MODULES", "GTK (modules it loads)"},
    entry{"VK_LAYER_PATH", "Vulkan (layers it loads)"},
    entry{"CMAKE_PREFIX_PATH", "CMake (package scripts it runs)"},
    entry{"GIT_ALLOW_PROTOCOL", "git (ext:: runs a command)"},
    entry{"DOCKER_HOST", "docker (the daemon it drives, ssh:// a command)"},
    entry{"GIT_COMMON_DIR", "git (the repository's config and hooks)"},
    entry{"GIT_CONFIG_COUNT", "git"},
    entry{"GOFLAGS", "go (-toolexec)"},
    entry{"GOENV", "go (its config file: GOFLAGS, GOTOOLCHAIN)"},
    entry{"GOTOOLCHAIN", "go (the toolchain it runs)"},
    entry{"RUSTC", "cargo"},
    entry{"RUSTC_WRAPPER", "cargo"},
    entry{"RUSTFLAGS", "rustc (-C linker)"},
    entry{"CARGO_BUILD_RUSTC", "cargo"},
    entry{"CARGO_BUILD_RUSTC_WRAPPER", "cargo"},
    entry{"CARGO_HOME", "cargo (its config: runners, linkers)"},
    entry{"RUSTUP_TOOLCHAIN", "rustup (the toolchain it runs)"},
    entry{"RUSTUP_HOME", "rustup (the toolchains it runs)"},
    entry{"MAVEN_OPTS", "Maven"},
    entry{"GRADLE_OPTS", "Gradle"},
    entry{"JAVA_HOME", "programs that run Java from it"},
    entry{"PIP_INDEX_URL", "pip (the packages it installs)"},
    entry{"PIP_EXTRA_INDEX_URL", "pip (the packages it installs)"},
    entry{"UV_INDEX_URL", "uv (the packages it installs)"},
    entry{"UV_EXTRA_INDEX_URL", "uv (the packages it installs)"},
    entry{"UV_DEFAULT_INDEX", "uv (the packages it installs)"},
    entry{"SBT_OPTS", "sbt (Java options)"},
    entry{"PIP_CONFIG_FILE", "pip"},
    entry{"BUNDLE_GEMFILE", "Bundler"},
    entry{"GEM_HOME", "Ruby"},
    entry{"GEM_PATH", "Ruby"},
    entry{"IRBRC", "irb"},
    entry{"VIMINIT", "vim"},
    entry{"EXINIT", "vi"},
    entry{"MYVIMRC", "vim"},
    entry{"R_PROFILE_USER", "R"},
    entry{"R_ENVIRON_USER", "R"},
    entry{"KUBECONFIG", "kubectl (its credential plugins)"},
    entry{"AWS_CONFIG_FILE", "the AWS CLI (its credential_process)"},
    entry{"DOCKER_CONFIG", "docker (its credential helpers)"},
  };
  for (auto& [n, reader] : names)
    if (name == n)
      return reader;
  return {};
}

} // namespace jp
