#!/bin/sh
# QEMU for the guests of tests/vm/ (vng --qemu): runs $OPSIM_VM_QEMU with the arguments given, and
# when the process that booted the guest ($OPSIM_VM_OWNER) is gone -- even killed by SIGKILL, which
# no clean-up code sees -- kills QEMU and removes the guest's work directory ($OPSIM_VM_WORKDIR).
"$OPSIM_VM_QEMU" "$@" &
q=$!
trap 'kill -9 $q 2>/dev/null' TERM INT HUP
while kill -0 $q 2>/dev/null; do
  if ! kill -0 "$OPSIM_VM_OWNER" 2>/dev/null; then
    kill -9 $q 2>/dev/null
    wait $q
    case "$OPSIM_VM_WORKDIR" in */opsimvm-*) rm -rf "$OPSIM_VM_WORKDIR" ;; esac
    exit 137
  fi
  sleep 1
done
wait $q
