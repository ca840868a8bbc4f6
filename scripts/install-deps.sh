#!/usr/bin/env bash
# Installs the Debian packages Granary needs to build, test and run. Idempotent: packages that are
# already installed are left alone and apt is not touched when nothing is missing.
# Usage: scripts/install-deps.sh [build|test|all|fuzz]   (default: all; fuzz: `make fuzz`)
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev
  libsimgrid-dev libboost-graph-dev libeigen3-dev libisal-dev libssl-dev liburing-dev
  # real mode (realmode/): libfabric's RDM endpoints (tcp;ofi_rxm here, verbs;ofi_rxm on RDMA NICs)
  # and iproute2 for the network-namespace hosts.
  libfabric-dev iproute2
  # `mpirun -np N granary plan capacity`: Open MPI splits a plan's simulations over ranks.
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  # granary-gui (gui/): Qt 6 (Qt Charts needs the OpenGL module's CMake files), its SQLite
  # driver, and a font (without one, offscreen labels render as boxes).
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libqt6sql6-sqlite libsqlite3-dev
  fonts-dejavu-core
)
# Test-time only: Ceph's crushtool/osdmaptool produce the reference placements that the
# bit-identity tests compare against; time(1) for the benchmark's peak-memory figure;
# python3-jsonschema checks every report against docs/report.schema.json; poppler's
# pdftoppm/pdftotext to check rendered reports; fio, the reference of the drive benchmark
# (tests/bench/uring_device_bench.sh); libfabric-bin's fi_pingpong, the reference of
# the transport benchmark; openssh-server, whose sshd (one per network namespace, started by
# the test) stands for the lab hosts `granary real` reaches over ssh.
test_pkgs=(ceph-base time python3-jsonschema poppler-utils fio libfabric-bin openssh-server)
# `make fuzz` only: clang and its runtime (libFuzzer, ASan, UBSan) for the fuzz/ targets.
fuzz_pkgs=(clang-14 libclang-rt-14-dev)

case "${1:-all}" in
  build) want=("${build_pkgs[@]}") ;;
  test | all) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  fuzz) want=("${build_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
  *) echo "install-deps.sh: unknown set '$1' (expected build, test, all or fuzz)" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps.sh: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
