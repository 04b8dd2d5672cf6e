# Shared by setup.sh and test.sh: installs the Debian packages Tessel needs,
# only those not installed yet, and says whether the CUDA toolkit is there.
# Usage: source scripts/lib/deps.sh; tessel_install_packages LIST...

TESSEL_BUILD_PACKAGES="cmake g++ ninja-build ccache llvm-19-dev libzstd-dev libxgboost-dev xgboost \
nlohmann-json3-dev libgtest-dev libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-numpy \
pybind11-dev python3-dev"
# Tests also export real models with Debian's torch, fuzz with clang, run ONNX Runtime in a venv, and
# pip-install the package into a venv without network (setuptools and wheel from Debian), and open the
# fusion report in headless Chromium.
TESSEL_TEST_PACKAGES="python3-torch python3-torchvision python3-venv python3-setuptools python3-wheel clang-14 \
libclang-rt-14-dev chromium"

tessel_install_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== Debian packages: all $# present"
    return 0
  fi
  echo "== installing ${#missing[@]} missing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}"
}

# The toolkit is optional: Tessel opens NVRTC at run time, so without it the
# CPU compiler builds and passes every test and the CUDA target says why it
# is unavailable.
tessel_check_cuda() {
  local cuda="${CUDA_HOME:-/usr/local/cuda}"
  if compgen -G "$cuda/lib64/libnvrtc.so*" >/dev/null; then
    echo "== CUDA toolkit: NVRTC at $cuda/lib64"
  else
    echo "== CUDA toolkit: not found at $cuda (optional: only the CUDA target needs it)"
  fi
}

# ccache keys on relative paths below the checkout, so a fresh clone in another
# folder (as CI makes) reuses what an earlier build compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$TESSEL_ROOT}"

tessel_build() {  # tessel_build BUILD_DIR [TARGET...]
  local dir="$1"; shift
  cmake -S "$TESSEL_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$dir" "$@"
}
