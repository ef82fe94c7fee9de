#!/bin/bash
# Install Debian packages with apt-get, waiting for apt's locks instead of failing when another
# apt-get, dpkg or unattended-upgrades holds them: `apt-get install` waits by itself
# (DPkg::Lock::Timeout), `apt-get update` does not (apt 2.6 refuses at once on the lists lock), so
# it is retried while its error is the lock.  APT_LOCK_WAIT seconds in all (default 900).
# Usage: apt_install.sh [--no-sudo-prompt] PACKAGE...   (root, or sudo; -n: never ask a password)
set -euo pipefail
sudo_opts=""
if [ "${1:-}" = "--no-sudo-prompt" ]; then sudo_opts="-n"; shift; fi
[ $# -gt 0 ] || { echo "usage: apt_install.sh [--no-sudo-prompt] PACKAGE..." >&2; exit 2; }
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo $sudo_opts"
wait=${APT_LOCK_WAIT:-900}
deadline=$((SECONDS + wait))
said=""
until out=$($SUDO apt-get -o DPkg::Lock::Timeout="$wait" update -qq 2>&1); do
  if grep -q 'Could not get lock' <<<"$out" && [ $SECONDS -lt $deadline ]; then
    [ -n "$said" ] || echo "waiting up to ${wait} s for apt's lock: $(grep -m1 'Could not get lock' <<<"$out")"
    said=1
    sleep 3
    continue
  fi
  echo "$out" >&2
  exit 1
done
left=$((deadline - SECONDS)); [ $left -gt 0 ] || left=1
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout="$left" install -y -qq "$@" >/dev/null
