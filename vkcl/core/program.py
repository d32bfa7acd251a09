"""Programs: sources, IL or binaries, built per device by vkcl.compiler (clspv in a worker)."""
from __future__ import annotations

import threading
from typing import Callable

from vkcl import compiler, log
from vkcl._gen import cl
from vkcl.core.object import CLObject
from vkcl.errors import CLError

_log = log.get("compiler")

BINARY_TYPE = {"object": cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
               "library": cl.CL_PROGRAM_BINARY_TYPE_LIBRARY,
               "executable": cl.CL_PROGRAM_BINARY_TYPE_EXECUTABLE}


def _il_object(il: bytes, caps, spec: dict) -> compiler.CompileResult:
    """clCompileProgram of an IL program: its LLVM bitcode is the compiled object."""
    from vkcl import config
    from vkcl.compiler import il as il_mod
    bitcode, text = il_mod.to_bitcode(il, float(config.get("compile_timeout")), spec)
    if bitcode is None:
        return compiler.CompileResult(ok=False, log=text, status="error")
    return compiler.CompileResult(ok=True, log=text, bitcode=bitcode, binary_type="object", cl_std="CL3.0",
                                  caps_key=caps.key(), compiler_version=compiler.compiler_version())


class DeviceBuild:
    """One device's build of a program: status, options, log and the compiler's result."""

    __slots__ = ("status", "options", "log", "result", "arg_info")

    def __init__(self, result: compiler.CompileResult | None = None):
        self.status = cl.CL_BUILD_NONE
        self.options = ""
        self.log = ""
        self.result = result
        # Whether clGetKernelArgInfo may answer: built or compiled with -cl-kernel-arg-info (a
        # loaded binary says so in its options), or linked from an object that was.
        self.arg_info = result is not None and "-cl-kernel-arg-info" in result.options.split()

    @property
    def binary_type(self) -> int:
        if self.result is None or not self.result.ok:
            return cl.CL_PROGRAM_BINARY_TYPE_NONE
        return BINARY_TYPE[self.result.binary_type]

    @property
    def executable(self) -> compiler.CompileResult | None:
        # None while a rebuild runs: a kernel made now would outlive the result it was made from.
        r = self.result
        if r is None or not r.ok or r.binary_type != "executable" or self.status == cl.CL_BUILD_IN_PROGRESS:
            return None
        return r


class Program(CLObject):
    def __init__(self, context, devices: list, source: str | None = None, il: bytes | None = None,
                 binaries: dict | None = None):
        super().__init__()
        self.context = context
        self.devices = devices
        self.source = source
        self.spec_values: dict[int, tuple[str, bytes]] = {}  # clSetProgramSpecializationConstant
        self.il = il
        self.builds = {d: DeviceBuild((binaries or {}).get(d)) for d in devices}
        self.kernels = 0  # kernel objects attached (a rebuild is then CL_INVALID_OPERATION)
        self.lock = threading.Lock()
        self.images = {}  # device -> core.ndrange.ProgramImage, made on the first dispatch

    @property
    def building(self) -> bool:
        return any(b.status == cl.CL_BUILD_IN_PROGRESS for b in self.builds.values())

    # --- building ----------------------------------------------------------------------------

    def start(self, devices: list, options: str, work: Callable, notify: Callable | None,
              arg_info: Callable) -> bool:
        """Run `work(device, build)` for each device: now, or on a vkcl thread when `notify`.
        `arg_info(device)`: whether the result will have argument information."""
        with self.lock:
            # The api layer checked this already; checked again under the lock that kernel
            # creation takes, so that a kernel and a rebuild cannot both start.
            if self.kernels or self.building:
                raise CLError(cl.CL_INVALID_OPERATION, "kernels are attached or a build is in progress")
            for d in devices:
                b = self.builds[d]
                b.arg_info = arg_info(d)
                b.status, b.options, b.log = cl.CL_BUILD_IN_PROGRESS, options, ""
                # A rebuild replaces the executable: the old one's shader module must not be
                # dispatched again (commands already enqueued hold their own reference).
                self.images.pop(d, None)

        def run() -> bool:
            ok = True
            for d in devices:
                b = self.builds[d]
                try:
                    result = work(d, b)
                except Exception as e:  # never leave a build IN_PROGRESS
                    _log.exception("build failed")
                    result = compiler.CompileResult(ok=False, log=f"vkcl: internal error: {e}\n", status="error")
                b.result = result
                b.log = result.log
                b.status = cl.CL_BUILD_SUCCESS if result.ok else cl.CL_BUILD_ERROR
                ok &= result.ok
            if notify is not None:
                notify()
            return ok

        if notify is None:
            return run()
        threading.Thread(target=run, name="vkcl-build", daemon=True).start()
        return True

    def build(self, devices: list, options: compiler.BuildOptions, notify=None) -> bool:
        def work(device, b: DeviceBuild) -> compiler.CompileResult:
            caps = device.compiler_caps
            if self.source is not None:
                return compiler.compile_source(self.source, options, caps)
            if self.il is not None:
                return compiler.compile_il(self.il, options, caps, self.spec_values)
            r = b.result  # from clCreateProgramWithBinary
            if r is None:
                return compiler.CompileResult(ok=False, log="the program has no source, IL or binary\n")
            if r.binary_type == "executable":
                return r
            link_opts = compiler.parse_options(None, "link")
            return compiler.link([r], link_opts, caps)

        def arg_info(d) -> bool:
            loaded = self.source is None and self.il is None and self.builds[d].arg_info
            return options.kernel_arg_info or loaded
        return self.start(devices, options.text or "", work, notify, arg_info)

    def compile(self, devices: list, options: compiler.BuildOptions, headers: dict[str, str], notify=None) -> bool:
        def work(device, b: DeviceBuild) -> compiler.CompileResult:
            if self.source is None:  # an IL program: its bitcode is the object
                return _il_object(self.il, device.compiler_caps, self.spec_values)
            return compiler.compile_object(self.source, options, device.compiler_caps, headers)
        return self.start(devices, options.text or "", work, notify, lambda d: options.kernel_arg_info)

    def link_from(self, devices: list, options: compiler.BuildOptions, inputs: list["Program"], notify=None) -> bool:
        def work(device, b: DeviceBuild) -> compiler.CompileResult:
            objects = [p.builds[device].result for p in inputs]
            return compiler.link(objects, options, device.compiler_caps)
        # Spec: argument information comes with -cl-kernel-arg-info at clBuildProgram or clCompileProgram.
        return self.start(devices, options.text or "", work, notify,
                          lambda d: any(p.builds[d].arg_info for p in inputs))

    # --- queries -------------------------------------------------------------------------------

    def executable(self, device) -> compiler.CompileResult | None:
        return self.builds[device].executable

    @property
    def has_executable(self) -> bool:
        return any(b.executable is not None for b in self.builds.values())

    @property
    def kernel_names(self) -> list[str]:
        for b in self.builds.values():
            if b.executable is not None:
                return sorted(b.executable.reflection.kernels)
        return []

    def kernel_reflection(self, name: str) -> dict:
        """device -> KernelReflection for every device with an executable that has `name`."""
        out = {}
        for d, b in self.builds.items():
            ex = b.executable
            if ex is not None and name in ex.reflection.kernels:
                out[d] = ex.reflection.kernels[name]
        return out

    def binary(self, device) -> bytes:
        r = self.builds[device].result
        return compiler.pack(r.to_binary()) if r is not None and r.ok else b""
