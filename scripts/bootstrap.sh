#!/usr/bin/env bash
# Installs what building and testing prism-e2b needs on Debian 12, skipping
# what is already there. Safe to run any number of times.
set -euo pipefail

packages=(g++ cmake ninja-build ccache pkg-config openssl ca-certificates python3
          libboost1.81-all-dev libboost-json1.81-dev libboost-url1.81-dev libssl-dev zlib1g-dev libnghttp2-dev
          libcli11-dev  # the prism-e2b CLI's argument parsing (src/cli)
          clang-14 clang-format-14 clang-tidy-14 doxygen
          libclang-rt-14-dev  # the libFuzzer runtime: the fuzz targets (tests/fuzz)
          lld  # links the build's own programs (cmake/project_options.cmake)
          # prism-e2b-local's namespaces engine and its isolation tests (ps, ipcmk, python3 in a sandbox)
          coreutils procps util-linux
          curl nghttp2-client  # HTTP/2 peers of the listener tests (HEAD, 204 without a body)
          e2fsprogs  # mkfs.ext4: each sandbox's disk quota, a loop-mounted ext4 image (sandbox_disk.hpp)
          bindfs  # a FUSE mount: watching a network file system needs allowNetworkMounts (emulator_watch.cpp)
          sudo  # what a sandbox's user runs to be its root, as in E2B's base template (system_layer.hpp)
          slirp4netns  # user-mode NAT: internet for a sandbox without the host's loopback
          runsc)  # prism-e2b-local's gvisor engine (its tests and the second conformance run)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: all packages present"
fi
