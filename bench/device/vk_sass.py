"""The machine code (SASS) of vkcl's pipelines on an NVIDIA GPU, read from the Vulkan pipeline cache.

NVIDIA's Vulkan driver stores each compiled pipeline in its VkPipelineCache data as one zstd
frame; inside is a record that starts with b"NVDANVVM" and whose bytes from offset 8 on are a
container that nvdisasm reads in raw mode (`nvdisasm -b SM90`). vkcl writes its pipeline cache
to $VKCL_CACHE_DIR/pipelines-*.bin after every pipeline it creates, so on the device machine:

    VKCL_CACHE_DIR=/tmp/vkc ./any-opencl-program          # through the ICD loader, on vkcl
    python3 bench/device/vk_sass.py /tmp/vkc --out $OUT/sass

writes one .sass file per pipeline and prints, for each, its register count, its instruction
count and every loop (a backward branch): its length and what other than FMAs it issues. That
is how the MAD float loop's extra instructions were found (docs/performance.md).

Needs `zstd` (setup.sh unpacks Debian's from .gl/) and nvdisasm (the CUDA toolkit's, looked
for in $CUDA_HOME/bin, /usr/local/cuda/bin and PATH). Standard library only.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ZSTD_MAGIC = bytes.fromhex("28b52ffd")
RECORD_MAGIC = b"NVDANVVM"
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;")
BACKWARD_BRANCH = re.compile(r"BRA (0x[0-9a-f]+)")


def tool(name: str, env: str | None = None) -> str:
    candidates = [os.environ.get(env or "", "")]
    candidates += [str(Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / name), shutil.which(name) or ""]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit(f"vk_sass: {name} not found")


def pipeline_records(blob: bytes, zstd: str) -> list[bytes]:
    """The NVDANVVM records of a pipeline cache blob (one zstd frame each)."""
    records = []
    for m in re.finditer(re.escape(ZSTD_MAGIC), blob):
        # zstd -d stops at the end of the first frame's data and ignores what follows it
        raw = subprocess.run([zstd, "-d", "-c", "-q"], input=blob[m.start():], capture_output=True).stdout
        if raw.startswith(RECORD_MAGIC):
            records.append(raw)
    return records


def disassemble(record: bytes, nvdisasm: str, arch: str, scratch: Path) -> str:
    code = record[len(RECORD_MAGIC):]
    scratch.write_bytes(code[:len(code) // 16 * 16])
    return subprocess.run([nvdisasm, "-b", arch, str(scratch)], capture_output=True, text=True).stdout


def summary(sass: str) -> list[str]:
    ins = [(int(m.group(1), 16), m.group(2)) for m in map(INSTRUCTION.match, sass.splitlines()) if m]
    regs = re.search(r"Register count=(\d+)", sass)
    lines = [f"{len(ins)} instructions, {regs.group(1) if regs else '?'} registers"]
    for addr, text in ins:
        m = BACKWARD_BRANCH.search(text)
        if not m or int(m.group(1), 16) >= addr:
            continue
        body = [t.split()[0] if not t.startswith("@") else t.split()[1] for a, t in ins
                if int(m.group(1), 16) <= a <= addr]
        fma = [op for op in body if op.split(".")[0] in ("FFMA", "DFMA", "HFMA2", "IMAD") and "MOV" not in op]
        other = [op for op in body if op not in fma]
        lines.append(f"  loop {m.group(1)}..{addr:#x}: {len(body)} instructions, {len(fma)} FMA, "
                     f"other: {' '.join(other)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cache_dir", help="the VKCL_CACHE_DIR the program ran with")
    ap.add_argument("--out", help="directory for one <n>.sass per pipeline")
    ap.add_argument("--arch", default="SM90", help="nvdisasm -b architecture (default SM90: H100, H200)")
    args = ap.parse_args()
    blobs = sorted(Path(args.cache_dir).glob("pipelines-*.bin"))
    if not blobs:
        sys.exit(f"vk_sass: no pipelines-*.bin in {args.cache_dir}")
    zstd, nvdisasm = tool("zstd", "ZSTD"), tool("nvdisasm")
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / f"vk_sass-{os.getpid()}.bin"
    try:
        for blob in blobs:
            for n, record in enumerate(pipeline_records(blob.read_bytes(), zstd)):
                sass = disassemble(record, nvdisasm, args.arch, scratch)
                if out:
                    (out / f"{n}.sass").write_text(sass)
                print(f"pipeline {n}: " + "\n".join(summary(sass)))
    finally:
        scratch.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
