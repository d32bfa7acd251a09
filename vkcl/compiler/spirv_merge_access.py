"""Adjacent narrow loads and stores of global memory merged into 64-bit ones, for llvmpipe
(`DeviceCaps.merge_narrow_accesses`).

llvmpipe (Mesa 22.3) turns every load and store through a physical-storage-buffer pointer into a
loop over the 8 work-items of its batch, one loop per vector component, and LLVM's time to
compile a kernel grows with the square of their number. clspv lowers a vector of 8 or 16
elements (`-long-vector`) to one access per element, so a `char16` store is 16 loops: the CTS's
basic/vector_creation kernels (32 KB of `result[k] = (char16)(vload8(0, src), ...)`, ~8,800
byte accesses) took minutes each to compile on lavapipe (measured: 100 such char16 copies, 10.6 s
of CPU at the first launch, 50 of them 2.5 s; the same bytes as 100 ulong2 copies 0.18 s).

Here a run of loads (or stores) of consecutive elements of one array in one block, 8, 16 or 32
bits wide, becomes one 64-bit access per 8 bytes, its elements taken apart (put together) with
bitcasts, which move bits unchanged: NaN payloads, -0 and denormals included. Only what cannot
change a result is merged:
- the same base pointer and leading indices, the last index the same value plus constants
  1 apart, into an array (or through a pointer) whose stride is the element's size;
- accesses whose only memory operand is Aligned (no Volatile, Nontemporal or availability);
- loads with no store to global memory, atomic, barrier, call or other instruction with side
  effects between them (the merged load takes the first one's place, reading bytes the program
  reads anyway); stores with no global load or store of another address, and no instruction
  with side effects, between them (the merged store takes the last one's place, writing the same
  bytes). Loads and stores of private, local, push-constant or input memory cannot alias global
  memory and are allowed between.
The merged access keeps the first element's alignment: llvmpipe runs on the host CPU, where a
misaligned 64-bit access is allowed, and no other driver gets this rewrite. clspv's SPIR-V
keeps no Volatile memory operand of a `volatile` object, so a program that says `volatile`
(its headers or -D values included: may_be_volatile) is left as it is, as are IL and linked
programs, whose source vkcl does not see.
"""
from __future__ import annotations

import re
from array import array

from vkcl.compiler import spirv
from vkcl.compiler.prelude import includes
from vkcl.compiler.spirv_edit import Module, instruction

OP_EXT_INST, OP_LINE, OP_NO_LINE = 12, 8, 317
OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_ARRAY, OP_TYPE_POINTER = 21, 22, 23, 28, 32
OP_FUNCTION, OP_FUNCTION_END, OP_LABEL = 54, 56, 248
OP_LOAD, OP_STORE, OP_PTR_ACCESS_CHAIN, OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 61, 62, 67, 70
OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN = 65, 66
OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT = 80, 81
OP_CONVERT_PTR_TO_U, OP_CONVERT_U_TO_PTR, OP_BITCAST, OP_IADD = 117, 120, 124, 128
OP_DECORATE, DECORATION_ARRAY_STRIDE = 71, 6
SC_PHYSICAL_STORAGE_BUFFER = spirv.SC_PHYSICAL_STORAGE_BUFFER
MEMORY_ALIGNED = 0x2
# Instructions without side effects that may sit between merged accesses: access chains,
# composites, conversions, arithmetic, bit, relational and logical operations, debug lines.
_PURE = ({65, 66, 67, 70, OP_LINE, OP_NO_LINE} | set(range(77, 85)) | set(range(109, 125))
         | set(range(126, 153)) | set(range(154, 206)))


_VOLATILE = re.compile(rb"\bvolatile\b")


def may_be_volatile(source: bytes, include_dirs=(), headers: dict | None = None, defines: str = "") -> bool:
    """Whether the program (its headers and -D values too) says `volatile`."""
    return includes.mentions(_VOLATILE, source, include_dirs, headers, defines)


class _Access:
    """One mergeable load or store: its place, the array it reaches into, the element."""
    __slots__ = ("index", "key", "offset", "elem", "align", "value", "pointer")

    def __init__(self, index, key, offset, elem, align, value, pointer):
        self.index, self.key, self.offset, self.elem = index, key, offset, elem
        self.align, self.value, self.pointer = align, value, pointer


def merge_narrow_accesses(data: bytes) -> bytes:
    """The module with runs of adjacent 8-, 16- and 32-bit global loads and stores merged into
    64-bit ones (see the module's docstring); unchanged when there are none."""
    module = Module(data)
    if not any(Module.opcode(i) in (OP_LOAD, OP_STORE) for i in module.insts):
        return data
    plan = _Plan(module)
    runs = plan.find_runs()
    if not runs:
        return data
    replace: dict[int, list[array]] = {}
    for kind, run in runs:
        width = plan.width(run[0].elem)
        per_chunk = 64 // width
        for start in range(0, len(run) - per_chunk + 1, per_chunk):
            chunk = run[start:start + per_chunk]
            if kind == OP_LOAD:
                replace[chunk[0].index] = plan.merged_load(chunk)
                for access in chunk[1:]:
                    replace[access.index] = []
            else:
                replace[chunk[-1].index] = plan.merged_store(chunk)
                for access in chunk[:-1]:
                    replace[access.index] = []
    if not replace:
        return data
    module.insts = [new for i, inst in enumerate(module.insts)
                    for new in replace.get(i, (inst,))]
    return module.to_bytes()


class _Plan:
    WIDTHS = (8, 16, 32)  # the element widths whose accesses are planned

    def __init__(self, module: Module):
        self.m = module
        self.strides: dict[int, int] = {}
        self.decorated: set[int] = set()
        self.defs: dict[int, array] = {}
        self.same: dict[int, int] = {}
        for inst in module.insts:
            op = Module.opcode(inst)
            if op == OP_DECORATE:
                self.decorated.add(inst[1])
                if len(inst) == 4 and inst[2] == DECORATION_ARRAY_STRIDE:
                    self.strides[inst[1]] = inst[3]
            elif op in (OP_PTR_ACCESS_CHAIN, OP_IN_BOUNDS_PTR_ACCESS_CHAIN, OP_IADD) and len(inst) >= 5:
                self.defs[inst[2]] = inst
            elif op in (OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN) and len(inst) == 4:
                self.same[inst[2]] = inst[3]  # no indices: the base pointer itself

    # -- what an access reaches ---------------------------------------------------------------
    def width(self, type_id: int) -> int:
        return self.m.types[type_id][2]

    def _element(self, type_id: int) -> int | None:
        """The type if it is an integer or float of one of WIDTHS, else None."""
        inst = self.m.types.get(type_id)
        if inst is not None and Module.opcode(inst) in (OP_TYPE_INT, OP_TYPE_FLOAT) and inst[2] in self.WIDTHS:
            return type_id
        return None

    def _global_pointee(self, pointer: int) -> int | None:
        found = self.m.pointee(self.m.type_of.get(pointer, 0))
        return found[1] if found is not None and found[0] == SC_PHYSICAL_STORAGE_BUFFER else None

    def is_global(self, pointer: int) -> bool:
        return self._global_pointee(pointer) is not None

    def _constant(self, value_id: int) -> int | None:
        found = self.m.constants.get(value_id)
        if found is None:
            return None
        words = found[1]
        value = words[0] | (words[1] << 32 if len(words) > 1 else 0)
        return value if value < 1 << 20 else None

    def _split(self, index: int) -> tuple[int | None, int] | None:
        """An index as (a value or None, a constant added to it)."""
        const = self._constant(index)
        if const is not None:
            return None, const
        inst = self.defs.get(index)
        if inst is not None and Module.opcode(inst) == OP_IADD:
            for a, b in ((inst[3], inst[4]), (inst[4], inst[3])):
                const = self._constant(b)
                if const is not None:
                    return a, const
        return index, 0

    def address(self, pointer: int) -> tuple[tuple, int, int] | None:
        """(key, element offset, element type) of a global pointer to a scalar: accesses with
        equal keys reach one array, whose consecutive elements are 1 apart."""
        elem = self._element(self._global_pointee(pointer) or 0)
        if elem is None:
            return None
        size = self.width(elem) // 8
        while pointer in self.same:
            pointer = self.same[pointer]
        chain = self.defs.get(pointer)
        if chain is None or Module.opcode(chain) == OP_IADD:
            return (pointer, (), None), 0, elem
        base, indices = chain[3], list(chain[4:])
        base_pointee = self._global_pointee(base)
        if base_pointee is None:
            return None
        if len(indices) == 1:
            container_stride = self.strides.get(self.m.type_of.get(base, 0))
        else:
            container = base_pointee
            for index in indices[1:-1]:  # walk to the type the last index selects from
                inst = self.m.types.get(container)
                if inst is None or Module.opcode(inst) not in (OP_TYPE_ARRAY, OP_TYPE_VECTOR):
                    return None
                container = inst[2]
            inst = self.m.types.get(container)
            if inst is None:
                return None
            if Module.opcode(inst) == OP_TYPE_VECTOR:
                container_stride = size if inst[2] == elem else None
            elif Module.opcode(inst) == OP_TYPE_ARRAY and inst[2] == elem:
                container_stride = self.strides.get(container)
            else:
                return None
        if container_stride != size:
            return None
        split = self._split(indices[-1])
        if split is None:
            return None
        return (base, tuple(indices[:-1]), split[0]), split[1], elem

    def _access(self, index: int, inst: array) -> _Access | None:
        op = Module.opcode(inst)
        pointer, operands = (inst[3], inst[4:]) if op == OP_LOAD else (inst[1], inst[3:])
        if len(operands) != 2 or operands[0] != MEMORY_ALIGNED:
            return None
        if op == OP_LOAD and inst[2] in self.decorated:
            return None
        found = self.address(pointer)
        if found is None:
            return None
        key, offset, elem = found
        if op == OP_LOAD and inst[1] != elem:
            return None
        # inst[2]: a load's result, a store's object
        return _Access(index, key, offset, elem, operands[1], inst[2], pointer)

    # -- runs ---------------------------------------------------------------------------------
    def find_runs(self) -> list[tuple[int, list[_Access]]]:
        """Runs of loads and of stores that may merge, each of consecutive elements of one
        array, in the order they appear; only runs of 2 or more."""
        done: list[tuple[int, list[_Access]]] = []
        loads: dict[tuple, list[_Access]] = {}
        stores: list[_Access] = []

        def close_loads():
            done.extend((OP_LOAD, run) for run in loads.values())
            loads.clear()

        def close_stores():
            done.append((OP_STORE, list(stores)))
            stores.clear()

        in_function = False
        for index, inst in enumerate(self.m.insts):
            op = Module.opcode(inst)
            if op == OP_FUNCTION:
                in_function = True
            if not in_function:
                continue
            if op == OP_FUNCTION_END:
                in_function = False
            if op in _PURE:
                continue
            if op == OP_LOAD:
                access = self._access(index, inst)
                if self.is_global(inst[3]) and stores:
                    close_stores()
                if access is None:
                    continue
                run = loads.get(access.key)
                if run is not None and (run[-1].offset + 1 != access.offset or run[-1].elem != access.elem):
                    done.append((OP_LOAD, loads.pop(access.key)))
                    run = None
                if run is None:
                    loads[access.key] = [access]
                else:
                    run.append(access)
                continue
            if op == OP_STORE:
                if not self.is_global(inst[1]):
                    continue  # private, local: cannot alias global memory
                close_loads()
                access = self._access(index, inst)
                if stores and (access is None or access.key != stores[-1].key
                               or access.offset != stores[-1].offset + 1 or access.elem != stores[-1].elem):
                    close_stores()
                if access is not None:
                    stores.append(access)
                continue
            close_loads()  # a label, call, atomic, barrier or anything else unknown
            if stores:
                close_stores()
        close_loads()
        if stores:
            close_stores()
        return [(kind, run) for kind, run in done if len(run) * self.width(run[0].elem) >= 64]

    # -- the merged accesses ------------------------------------------------------------------
    def _wide_pointer(self, pointer: int, out: list[array]) -> int:
        ulong = self.m.int_type(64)
        address, wide = self.m.new_id(), self.m.new_id()
        out.append(instruction(OP_CONVERT_PTR_TO_U, ulong, address, pointer))
        out.append(instruction(OP_CONVERT_U_TO_PTR, self.m.pointer_type(SC_PHYSICAL_STORAGE_BUFFER, ulong),
                               wide, address))
        return wide

    def _words_of(self, elem: int) -> tuple[int, int]:
        """The vector type that one 32-bit word of `elem`s makes (8- and 16-bit elements), or
        that 64 bits make (32-bit ones), and its length."""
        width = self.width(elem)
        count = 32 // width if width < 32 else 2
        return self.m.find_type(OP_TYPE_VECTOR, elem, count), count

    def merged_load(self, chunk: list[_Access]) -> list[array]:
        out: list[array] = []
        ulong, uint = self.m.int_type(64), self.m.int_type(32)
        elem = chunk[0].elem
        wide = self.m.new_id()
        out.append(instruction(OP_LOAD, ulong, wide, self._wide_pointer(chunk[0].pointer, out),
                               MEMORY_ALIGNED, chunk[0].align))
        vector, count = self._words_of(elem)
        if self.width(elem) == 32:
            parts = self.m.new_id()
            out.append(instruction(OP_BITCAST, vector, parts, wide))
            for i, access in enumerate(chunk):
                out.append(instruction(OP_COMPOSITE_EXTRACT, elem, access.value, parts, i))
            return out
        pair = self.m.new_id()
        out.append(instruction(OP_BITCAST, self.m.find_type(OP_TYPE_VECTOR, uint, 2), pair, wide))
        for half in range(2):
            word, parts = self.m.new_id(), self.m.new_id()
            out.append(instruction(OP_COMPOSITE_EXTRACT, uint, word, pair, half))
            out.append(instruction(OP_BITCAST, vector, parts, word))
            for i, access in enumerate(chunk[half * count:(half + 1) * count]):
                out.append(instruction(OP_COMPOSITE_EXTRACT, elem, access.value, parts, i))
        return out

    def merged_store(self, chunk: list[_Access]) -> list[array]:
        out: list[array] = []
        ulong, uint = self.m.int_type(64), self.m.int_type(32)
        elem = chunk[0].elem
        vector, count = self._words_of(elem)
        wide = self.m.new_id()
        if self.width(elem) == 32:
            parts = self.m.new_id()
            out.append(instruction(OP_COMPOSITE_CONSTRUCT, vector, parts, *(a.value for a in chunk)))
            out.append(instruction(OP_BITCAST, ulong, wide, parts))
        else:
            words = []
            for half in range(2):
                parts, word = self.m.new_id(), self.m.new_id()
                values = (a.value for a in chunk[half * count:(half + 1) * count])
                out.append(instruction(OP_COMPOSITE_CONSTRUCT, vector, parts, *values))
                out.append(instruction(OP_BITCAST, uint, word, parts))
                words.append(word)
            pair = self.m.new_id()
            out.append(instruction(OP_COMPOSITE_CONSTRUCT, self.m.find_type(OP_TYPE_VECTOR, uint, 2), pair, *words))
            out.append(instruction(OP_BITCAST, ulong, wide, pair))
        out.append(instruction(OP_STORE, self._wide_pointer(chunk[0].pointer, out), wide,
                               MEMORY_ALIGNED, chunk[0].align))
        return out
