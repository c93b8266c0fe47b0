# shellcheck shell=bash
# Sourced by the bench scripts (bench/lib/common.sh, bench/payments.sh); needs `log` and `die`.
# Installs Debian packages that are missing (the load generator and friends): bench scripts
# need them, serving and the tests do not, so scripts/setup.sh leaves them out.
apt_install_missing() {
  local missing=()
  for cmd_pkg in "$@"; do
    command -v "${cmd_pkg%%:*}" >/dev/null 2>&1 || missing+=("${cmd_pkg#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} (apt)"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" \
    || die "could not install ${missing[*]}: install them (apt-get install ${missing[*]}) and run again"
}
