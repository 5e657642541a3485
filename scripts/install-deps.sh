#!/usr/bin/env bash
# Installs the build and test dependencies on a Debian 12 machine. Idempotent: does nothing when
# everything is already there. Called by `make deps`, which the build and CI run first.
set -euo pipefail

packages=(
  cmake ninja-build g++ make python3
  llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev clang-format-19
  re2c doctest-dev nlohmann-json3-dev neovim
  libopenmpi-dev openmpi-bin
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  python3-dev pybind11-dev python3-numpy python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda/bin/ptxas" ]; then
  echo "install-deps: WARNING: the CUDA 13 toolkit was not found at $cuda (set CUDA_HOME)."
  echo "install-deps: the compiler builds, but cubin/fatbin output and the GPU runtime need it."
fi
