#!/bin/bash
# Unpack Debian bookworm-backports' QEMU (>= 8.0: NVMe Flexible Data Placement, the OCP SMART log)
# into DIR for the guests of tests/vm/test_vm_fdp.py.  No system install and no change to the
# machine's apt sources: a private apt configuration in DIR.apt lists bookworm-backports only,
# `apt-get download` fetches qemu-system-x86, -common and -data, and `dpkg -x` unpacks them into DIR.
# Its shared libraries are Debian 12's (checked with ldd); its firmware comes from DIR/usr/share/qemu
# plus Debian 12's seabios and ipxe-qemu (passed with -L by tests/vm/vm_guest.py).
# Exit 0 and DIR/usr/bin/qemu-system-x86_64 on success; exit 1 with a reason otherwise.
set -euo pipefail
dir=$(realpath -m "${1:?usage: fetch_qemu_backports.sh DIR}")
suite=bookworm-backports
pkgs="qemu-system-x86 qemu-system-common qemu-system-data"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || { echo "no apt-get/dpkg: not Debian" >&2; exit 1; }
grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null || { echo "not Debian 12 (bookworm)" >&2; exit 1; }
apt="$dir.apt"
rm -rf "$apt" "$dir.new"
mkdir -p "$apt"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d} "$dir.new"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
  >"$apt/etc/sources.list"
cat >"$apt/apt.conf" <<CONF
Dir::State "$apt";
Dir::State::Lists "$apt/lists";
Dir::State::status "/var/lib/dpkg/status";
Dir::Cache "$apt/cache";
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Preferences "$apt/etc/preferences";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
APT::Sandbox::User "$(id -un)";
Debug::NoLocking "1";
CONF
export APT_CONFIG="$apt/apt.conf"
apt-get update -qq
ver=$(apt-cache madison qemu-system-x86 | awk -v s="$suite" '$0 ~ s {print $3; exit}')
[ -n "$ver" ] || { echo "no qemu-system-x86 in $suite" >&2; exit 1; }
(cd "$apt" && apt-get download -qq $(for p in $pkgs; do echo "$p=$ver"; done))
for f in "$apt"/*.deb; do dpkg -x "$f" "$dir.new"; done
q="$dir.new/usr/bin/qemu-system-x86_64"
if ldd "$q" | grep -q 'not found'; then
  echo "$q: missing shared libraries: $(ldd "$q" | grep 'not found' | tr -s ' \t\n' ' ')" >&2
  exit 1
fi
"$q" --version | head -1
"$q" -device nvme-subsys,help | grep -q 'fdp=' || { echo "$q has no FDP (nvme-subsys fdp=)" >&2; exit 1; }
rm -rf "$dir" && mv "$dir.new" "$dir" && rm -rf "$apt"
echo "$ver" >"$dir/VERSION"
