"""vkcl's program binary (clGetProgramInfo(CL_PROGRAM_BINARIES), clCreateProgramWithBinary).

Layout, little-endian:
  magic     8 bytes  b"VKCLBIN\\0"
  format    u32      FORMAT_VERSION
  meta_len  u32      length of the metadata JSON
  data_len  u64      length of the payload
  meta      JSON     binary_type, options, caps_key, compiler_version, log, reflection
  payload            SPIR-V (executable) or LLVM bitcode (object, library)
  checksum  32 bytes SHA-256 of everything before it
The on-disk cache stores its entries in this same format.
"""
from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass

from vkcl.compiler import argument_layout, spirv
from vkcl.compiler.caps import DeviceCaps
from vkcl.compiler.errors import InvalidBinaryError
from vkcl.compiler.reflection import ProgramReflection, ReflectionError

MAGIC = b"VKCLBIN\0"
FORMAT_VERSION = 1
BINARY_TYPES = ("executable", "object", "library")
_HEAD = struct.Struct("<8sIIQ")
_DIGEST = 32


@dataclass
class ProgramBinary:
    binary_type: str  # "executable", "object" or "library"
    payload: bytes
    options: str = ""
    caps_key: str = ""
    compiler_version: str = ""
    reflection: ProgramReflection | None = None
    log: str = ""
    # OpenCL C version and -cl-uniform-work-group-size of the sources (a link needs them).
    cl_std: str = ""
    uniform_work_group_size: bool = False

    @property
    def spirv(self) -> bytes | None:
        return self.payload if self.binary_type == "executable" else None

    @property
    def bitcode(self) -> bytes | None:
        return None if self.binary_type == "executable" else self.payload

    def incompatibility(self, caps: DeviceCaps, compiler_version: str) -> str | None:
        """Why this binary cannot be used on a device with `caps` (None: it can).

        Both kinds need the same compiler (LLVM reads only bitcode of its own or older
        versions; older SPIR-V may lack repairs); SPIR-V was made for one set of caps,
        bitcode for one address width.
        """
        if self.compiler_version != compiler_version:
            # SPIR-V too: an older vkcl compiler may have produced code a newer one repairs.
            return f"the binary was made by another compiler ({self.compiler_version})"
        if self.binary_type == "executable":
            if self.caps_key != caps.key():
                return "the binary was built for a device with different capabilities"
            return None
        try:
            made_for = DeviceCaps.from_dict(json.loads(self.caps_key.split(":", 1)[1]))
        except (ValueError, IndexError, TypeError):
            return "the binary does not say which device it was made for"
        if made_for.address_bits != caps.address_bits:
            return f"the binary uses {made_for.address_bits}-bit addresses, the device {caps.address_bits}-bit"
        return None


def pack(binary: ProgramBinary) -> bytes:
    if binary.binary_type not in BINARY_TYPES:
        raise ValueError(f"binary_type must be one of {BINARY_TYPES}")
    meta = json.dumps({
        "binary_type": binary.binary_type,
        "options": binary.options,
        "caps_key": binary.caps_key,
        "compiler_version": binary.compiler_version,
        "log": binary.log,
        "cl_std": binary.cl_std,
        "uniform_work_group_size": binary.uniform_work_group_size,
        "reflection": binary.reflection.to_dict() if binary.reflection is not None else None,
    }, separators=(",", ":")).encode()
    body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(meta), len(binary.payload)) + meta + bytes(binary.payload)
    return body + hashlib.sha256(body).digest()


def is_vkcl_binary(data: bytes) -> bool:
    return bytes(data[:len(MAGIC)]) == MAGIC


def unpack(data: bytes) -> ProgramBinary:
    """Read a binary made by pack(); raise InvalidBinaryError for anything else."""
    data = bytes(data)
    if len(data) < _HEAD.size + _DIGEST:
        raise InvalidBinaryError(f"not a vkcl program binary ({len(data)} bytes is too short)")
    magic, fmt, meta_len, data_len = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise InvalidBinaryError("not a vkcl program binary (bad magic)")
    if fmt != FORMAT_VERSION:
        raise InvalidBinaryError(f"vkcl binary format {fmt} is not supported (this vkcl reads {FORMAT_VERSION})")
    end = _HEAD.size + meta_len + data_len
    if end + _DIGEST != len(data):
        raise InvalidBinaryError(f"truncated or padded vkcl binary ({len(data)} bytes, expected {end + _DIGEST})")
    if hashlib.sha256(data[:end]).digest() != data[end:]:
        raise InvalidBinaryError("corrupt vkcl binary (checksum mismatch)")
    try:
        meta = json.loads(data[_HEAD.size:_HEAD.size + meta_len])
        reflection = meta["reflection"]
        binary = ProgramBinary(
            binary_type=meta["binary_type"],
            payload=data[_HEAD.size + meta_len:end],
            options=str(meta["options"]),
            caps_key=str(meta["caps_key"]),
            compiler_version=str(meta["compiler_version"]),
            reflection=ProgramReflection.from_dict(reflection) if reflection is not None else None,
            log=str(meta.get("log", "")),
            cl_std=str(meta.get("cl_std", "")),
            uniform_work_group_size=bool(meta.get("uniform_work_group_size", False)),
        )
    except (ValueError, KeyError, TypeError, ReflectionError) as e:
        raise InvalidBinaryError(f"corrupt vkcl binary metadata: {e}") from None
    if binary.binary_type not in BINARY_TYPES:
        raise InvalidBinaryError(f"unknown binary type {binary.binary_type!r}")
    if binary.binary_type == "executable" and binary.reflection is not None:
        # A binary made before vkcl derived arguments' places from the SPIR-V holds clspv's
        # offsets (an application's own cache, pyopencl's): derived again, which is cheap.
        try:
            refused = argument_layout.reconcile(binary.payload, binary.reflection)
        except spirv.SpirvFormatError as e:
            raise InvalidBinaryError(f"corrupt vkcl binary: {e}") from None
        binary.log += "".join(line + "\n" for line in refused if line not in binary.log)
    return binary
