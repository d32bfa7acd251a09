#!/usr/bin/env bash
# IL programs (cl_khr_il_program) on the lent GPU machine, which has no SPIRV-LLVM-Translator:
# Debian 12's llvm-spirv-15 with its libraries, LLVM 15's opt (il.demote_phis), and SPIRV-Tools (spirv-as, spirv-dis, spirv-val:
# tests/icd's IL tests assemble their modules), unpacked from the .debs carried in `.il`
# (bench/device/README.md) into /tmp/vkcl-stage/il. Its bin/ holds a wrapper named
# llvm-spirv-15 (and one named opt-15) that finds those libraries, so vkcl and the tests find it on PATH as they do on
# the development machine; bench/device/setup.sh puts bin/ on PATH whenever it exists.
# .il (47 MB) and .whl (44 MB) exceed one command's carry (64 MiB): carry .il alone in a first
# command that runs only this script, then the rest while the machine is still warm (the
# unpacked tools stay in /tmp).
set -e
IL=/tmp/vkcl-stage/il
mkdir -p $IL/bin
for f in .il/*.deb; do dpkg -x "$f" $IL; done
cat > $IL/bin/llvm-spirv-15 <<WRAP
#!/bin/sh
LD_LIBRARY_PATH=$IL/usr/lib/x86_64-linux-gnu exec $IL/usr/bin/llvm-spirv-15 "\$@"
WRAP
cat > $IL/bin/opt-15 <<WRAP
#!/bin/sh
LD_LIBRARY_PATH=$IL/usr/lib/x86_64-linux-gnu:$IL/usr/lib/llvm-15/lib exec $IL/usr/lib/llvm-15/bin/opt "\$@"
WRAP
chmod +x $IL/bin/llvm-spirv-15 $IL/bin/opt-15
for t in spirv-as spirv-dis spirv-val; do ln -sf $IL/usr/bin/$t $IL/bin/$t; done
$IL/bin/llvm-spirv-15 --version | head -1
$IL/bin/spirv-as --version | head -1
$IL/bin/opt-15 --version | grep -m1 version
