# Sourced by the scripts that install their own tools (bench/run,
# tools/build-pgo). need COMMAND PACKAGE: installs PACKAGE with apt when
# COMMAND is missing (with sudo unless root), updating the index once if the
# first try fails.
need() {
  command -v "$1" >/dev/null 2>&1 && return
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get install -y "$2" || { $sudo apt-get update && $sudo apt-get install -y "$2"; }
}
