#!/usr/bin/env bash
# Set vkcl up on the lent GPU machine (Ubuntu 24.04, Python 3.12, no package registry).
# What it needs is carried from the development machine (see bench/device/README.md):
#   .whl/  wheels: cffi, pycparser, vulkan, pyclspv (cp311: only its clspv library is used),
#          pytest & co, pyopencl & co
#   .gl/   Debian .debs: libvulkan1 and GLVND (libglvnd0 libglx0 libgl1 libegl1 libopengl0 libgles2:
#          NVIDIA's Vulkan driver is libGLX_nvidia, which needs them), ocl-icd-libopencl1,
#          ocl-icd-opencl-dev, opencl-c-headers, clinfo; zstd (for vk_sass.py)
#   .il/   (optional) Debian .debs of llvm-spirv-15 and SPIRV-Tools, for IL programs (setup_il.sh)
# Run from the repository root: `source bench/device/setup.sh`. It exports the variables the
# other bench/device scripts and the tests need, and builds build/libvkcl.so for python3.
# Sourced again in the same shell or a child of it (scripts run side by side from one command),
# it does nothing: reinstalling the wheels under a running process broke its imports.
if [ "${VKCL_SETUP_DONE:-}" = "$(pwd)" ]; then return 0 2>/dev/null || exit 0; fi
set -e
ROOT=$(pwd)
STAGE=/tmp/vkcl-stage
mkdir -p $STAGE/site $STAGE/root $STAGE/clspv
# The Vulkan loader goes to / only when the machine has none (the device README's advice);
# the OpenCL loader, headers and clinfo go beside, so NVIDIA's own OpenCL stays as it is.
if ! ldconfig -p | grep -q libvulkan.so.1; then
    dpkg -x .gl/libvulkan1_*.deb /
fi
if ! ldconfig -p | grep -q libGLdispatch.so.0; then
    for f in .gl/libglvnd0_*.deb .gl/libglx0_*.deb .gl/libgl1_*.deb .gl/libegl1_*.deb .gl/libopengl0_*.deb \
             .gl/libgles2_*.deb; do dpkg -x "$f" /; done
fi
ldconfig
for f in .gl/ocl-icd-*.deb .gl/opencl-c-headers_*.deb .gl/clinfo_*.deb; do dpkg -x "$f" $STAGE/root; done
# zstd, for vk_sass.py (NVIDIA's pipeline cache compresses each pipeline's code)
for f in .gl/zstd_*.deb; do [ -f "$f" ] && dpkg -x "$f" $STAGE/root; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $STAGE/site \
    $(ls .whl/*.whl | grep -v pyclspv)
(cd $STAGE/clspv && python3 -m zipfile -e $ROOT/.whl/pyclspv-*.whl . >/dev/null)
export PYTHONPATH=$STAGE/site${PYTHONPATH:+:$PYTHONPATH}
export VKCL_CLSPV_LIBRARY=$(ls $STAGE/clspv/pyclspv*.so)
export CPATH=$STAGE/root/usr/include${CPATH:+:$CPATH}
export LIBRARY_PATH=$STAGE/root/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
export LD_LIBRARY_PATH=$STAGE/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$STAGE/root/usr/bin:$PATH
# llvm-spirv-15 and SPIRV-Tools for IL programs, where a command carried `.il` (setup_il.sh)
if ls .il/*.deb > /dev/null 2>&1 && [ ! -x $STAGE/il/bin/llvm-spirv-15 ]; then bash bench/device/setup_il.sh; fi
if [ -x $STAGE/il/bin/llvm-spirv-15 ]; then export PATH=$STAGE/il/bin:$PATH; fi
if [ -z "$VK_DRIVER_FILES" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
python3 icd/build.py
# Bytecode for vkcl's modules and the unpacked wheels, as pip leaves installed packages: this
# machine's environment sets PYTHONDONTWRITEBYTECODE, so every process would otherwise compile
# them from source (the `vulkan` package alone: ~270 ms of each vkcl start-up).
python3 -m compileall -q -j 0 vkcl $STAGE/site > /dev/null
# A vendors directory with every ICD of the machine plus vkcl, for runs that compare them.
mkdir -p $STAGE/vendors
cp /etc/OpenCL/vendors/*.icd $STAGE/vendors/ 2>/dev/null || true
# NVIDIA's OpenCL is found by its own loader, not through /etc/OpenCL/vendors: name it.
if ldconfig -p | grep -q libnvidia-opencl.so.1; then
    echo libnvidia-opencl.so.1 > $STAGE/vendors/nvidia.icd
fi
cp build/vendors/vkcl.icd $STAGE/vendors/
export VKCL_ALL_VENDORS=$STAGE/vendors
export VKCL_SETUP_DONE=$ROOT
set +e
