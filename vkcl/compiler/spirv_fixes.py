"""Repairs of known miscompilations in the clspv vkcl uses, applied to its SPIR-V output.

1. Negative constant offsets (fix_negative_pointer_offsets, below).
2. 64-bit indices into composites (narrow_access_chain_indices): clspv indexes arrays such
   as `local float t[16][16]` with indices widened to 64 bits (OpSConvert of an int).
   NVIDIA's driver (580) computes wrong addresses for a multi-level OpAccessChain with
   such indices (seen: a tiled SGEMM and a local-memory transpose gave wrong results on an
   H100; lavapipe was right). An array index is signed and any valid one fits the 32-bit
   value it was widened from, so the chain takes that value instead.
3. An unneeded VariablePointers capability (drop_unused_variable_pointers): clspv declares
   it whether or not the module has a variable pointer. With it, NVIDIA's driver (580)
   computes wrong addresses into multi-dimensional __local arrays (seen on an H100: a
   16x16 local tile read back transposed wrong; the same SPIR-V without the capability was
   right). Pointers into physical storage buffers never need it, so it is removed when no
   instruction makes a Workgroup or StorageBuffer pointer the way only it allows.
4. Foreign push-constant blocks in an entry point's interface (prune_push_constant_interfaces):
   clspv can list another kernel's push-constant variable in a kernel's OpEntryPoint (seen:
   two kernels of one program, one taking a padded struct by value). An entry point may have
   one push-constant block, so its pipeline failed (VK_ERROR_UNKNOWN); each entry point keeps
   only the push-constant variables its function uses.
5. Exactness (allow_contraction, fuse_multiply_adds): clspv decorates every float operation
   it must not contract NoContraction; without it a Vulkan driver may reassociate (seen on
   lavapipe and NVIDIA with every NoContraction stripped: `10 - (10 - x)` became x, `inf * 0`
   became 0). So the decorations stay, unless the build options allow the change:
   -cl-mad-enable, -cl-unsafe-math-optimizations or -cl-fast-relaxed-math let each multiply-add
   pair become GLSL.std.450 Fma (fuse_multiply_adds); the last two also let the driver
   reassociate (allow_contraction strips the decorations). mad() needs neither: the prelude
   makes it a contracted expression, which clspv writes as Fma (prelude/mad.py).
6. Ordered atomics (relax_atomics): clspv gives the OpenCL 1.x atomic functions AcquireRelease
   semantics, and NVIDIA fences around each (seen: a histogram at 0.11x). They are relaxed
   functions, so in a program whose OpenCL C version has no other atomics (1.0-1.2, the default)
   the ordering bits are dropped; the storage-class bits stay. In OpenCL C 2.0 and 3.0 programs
   they stay: there C11 atomics keep the order the source gave them. Fences and barriers are
   separate instructions and keep their semantics.
7. (Retired: mad() as Fma is the prelude's work now, prelude/mad.py.)
8. Phis that differ only by OpUndef after a runtime-unrolled loop (spirv_phis.py): merged, so
   that NVIDIA's driver does not keep each loop value twice.
9. The OpUndef inputs left in phis (spirv_phis.fill_undef_phi_inputs), such as those of the
   continue block of a loop that exits in the middle: each takes the value its phi's chain
   starts from in the edge's source block, which NVIDIA can then share a register with.
10. 8-bit dot products of 4-vectors (spirv_dot.py): in SPIR-V's packed form, the only one
   NVIDIA's driver makes its dot-product instruction of (4.4x on an H200).
11. Scalar arguments converted to double (spirv_args.py): converted by the runtime into new
   push constants, which NVIDIA's driver reads from its constant bank (MAD double on an
   H200: 0.92 -> 1.00 of NVIDIA's OpenCL). It needs the arguments' true places
   (argument_layout.py), so the compiler driver applies it after the repairs here.
12. printf's return value (spirv_printf.py): 0 on success, not clspv's 1. It needs the
   reflection, so the compiler driver applies it after parsing it.
13. Float execution modes (spirv_float_modes.py): signed zeros, infinities, NaNs and, where
   the device can, denormals preserved, and rounding to nearest even, on every entry point.
14. Pointers whose types disagree (spirv_pointers.py): an OpPtrAccessChain or OpSelect of
   PhysicalStorageBuffer pointers gets its operands reinterpreted as its result's type
   (clspv gave `cond ? p[i] : p[255]` an access chain whose result and base types differ:
   invalid SPIR-V, which lavapipe refused).
15. Memory scopes on llvmpipe (spirv_scopes.py): Workgroup and wider scopes of fences and
   atomics become Subgroup, as llvmpipe makes those fences work-group barriers (in divergent
   code, work-items were never finished: CTS atomic_flag, atomic_cmpxchg).
16. The work-group count (spirv_num_groups.py): each load of NumWorkgroups can be replaced by
   specialization constants, which the runtime sets where it splits a launch into several
   dispatches (get_global_size() was the part's, not the launch's).
17. Bitcasts of 64-bit scalars to vectors of 8- or 16-bit elements (spirv_bitcasts.py): through
   two 32-bit integers, as lavapipe lost the upper bytes of a value it knew (CTS spirv_new
   op_constant_ulong_simple).
18. Composite instructions on scalars (spirv_scalars.py): clspv's one-element OpCompositeConstruct
   and OpCompositeExtract of a scalar (invalid SPIR-V; NVIDIA's driver crashed compiling it)
   become OpCopyObject.
19. Access chains into private byte arrays (spirv_private_chains.py): a private array of padded
   structs indexed at run time, which clspv makes a byte array and indexes past a byte and with
   OpPtrAccessChain (invalid in Vulkan; lavapipe crashed the process), gets valid chains, or the
   build fails.
20. Vectors of more than four elements (spirv_wide_vectors.py): InstCombine's bitcasts of a
   ulong3/ulong4 to <24 x i8>/<32 x i8> (from `(uchar)(v.s1 >> 8)`), which clspv leaves in
   its SPIR-V (invalid; lavapipe failed the pipeline), become shifts of the wide element.
21. Float operations on a constant +0.0 on llvmpipe (spirv_zero_operands.py): lavapipe's code
   generator folds `x * 0.0` to 0, `0.0 / x` to 0, `x / 0.0` to undefined, `x + 0.0` to x and
   `0.0 - x` to -x, whatever x is (inf, NaN, -0); the constant is negated through exact
   identities (`x * 0.0 = -(x * -0.0)`, `x + 0.0 = x - (-0.0)`, ...).
22. RoundEven and Trunc of doubles on llvmpipe (spirv_round_even.py): on some CPUs lavapipe
   rounds a double's halves toward zero (rint(1.5) = 1.0, and every
   convert_<integer>_rte(double)) and truncates (-1, -0] to +0.0; computed exactly from Floor.

Negative constant offsets in 64-bit pointer arithmetic. With -arch=spir64, clspv (pyclspv
0.0.1) zero-extends a negative 32-bit constant that becomes part of a pointer index:
`p[i - 1]` comes out as `p[sext(i) + 4294967295]`, and `p - 1` as `p[4294967295]`, so the
access lands 16 GiB past the buffer (seen crashing lavapipe). The repair: a 64-bit constant
in [2^31, 2^32) that is a pointer index, or an operand of a 64-bit add or subtract whose
result is one, gets the sign-extended value. A real index that large (over 2^31 elements
past a pointer, 8 GiB of floats) does not occur in OpenCL programs; masks such as
`x & 0xFFFFFFFF` are untouched because only indices and index additions are rewritten.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv, spirv_extra_lanes, spirv_loop_cuts, spirv_resume
from vkcl.compiler.spirv_bitcasts import split_wide_bitcasts
from vkcl.compiler.spirv_dot import pack_dot_products
from vkcl.compiler.spirv_float_modes import add_float_modes
from vkcl.compiler.spirv_num_groups import num_groups_from_spec_constants
from vkcl.compiler.spirv_phis import fill_undef_phi_inputs, merge_undef_phis
from vkcl.compiler.spirv_pointers import fix_mistyped_pointers
from vkcl.compiler.spirv_private_chains import fix_private_byte_chains
from vkcl.compiler.spirv_scalars import fix_scalar_composites
from vkcl.compiler.spirv_barrier_loops import unroll_barrier_loops
from vkcl.compiler.spirv_merge_access import merge_narrow_accesses
from vkcl.compiler.spirv_copy_loops import roll_copies as copy_loops
from vkcl.compiler.spirv_scopes import narrow_memory_scopes
from vkcl.compiler.spirv_round_even import exact_round_even
from vkcl.compiler.spirv_zero_operands import fix_zero_operands
from vkcl.compiler.spirv_odd_widths import widen_odd_integers
from vkcl.compiler.spirv_wide_vectors import split_wide_vectors
from vkcl.compiler.spirv_volatile import volatile_workgroup_accesses
from vkcl.compiler.spirv_ptr_diffs import physical_pointer_diffs

# Part of the program cache's key: bump it whenever a repair changes what it outputs, or one of
# the rewrites before clspv (struct_copies, packed_locals, pointer_units, vector_inserts, loop_exits,
# il_lowering) changes what it gives clspv.
VERSION = 51

OP_TYPE_INT, OP_CONSTANT, OP_PTR_ACCESS_CHAIN = 21, 43, 67
OP_IADD, OP_ISUB = 128, 130
OP_FUNCTION = 54
OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN = 65, 66
OP_UCONVERT, OP_SCONVERT = 113, 114


OP_CAPABILITY, OP_TYPE_POINTER = 17, 32
CAP_VARIABLE_POINTERS = 4442
SC_WORKGROUP, SC_STORAGE_BUFFER = 4, 12
# Instructions whose pointer results (in Workgroup or StorageBuffer) need VariablePointers.
_VARIABLE_POINTER_OPS = {169: "OpSelect", 245: "OpPhi", 67: "OpPtrAccessChain", 57: "OpFunctionCall",
                         83: "OpCopyObject", 46: "OpConstantNull", 61: "OpLoad", 55: "OpFunctionParameter"}


def repair(data: bytes, *, mad_enable: bool = False, unsafe_math: bool = False, relaxed_atomics: bool = False,
           float_modes: tuple = ((), (), ()), narrow_scopes: bool = False, zero_operands: bool = False,
           merge_accesses: bool = False, roll_copies: bool = False,
           barrier_loops: tuple[int, int] = (0, 0), loop_cuts: bool = False, resume_limit: int = 0,
           round_even: bool = False, volatile_local: bool = False) -> bytes:
    """Every repair below but 11 and 12 (the driver's, after the reflection is read);
    `mad_enable`: the options allow a * b + c to fuse (-cl-mad-enable or unsafe math);
    `unsafe_math`: they allow reassociation (-cl-unsafe-math-optimizations,
    -cl-fast-relaxed-math); `relaxed_atomics`: the program's OpenCL C version has only the 1.x
    atomic functions; `float_modes`: the float widths whose (signed zeros, infinities and NaNs),
    (denormals) the device preserves, and those it rounds to nearest even on request;
    `narrow_scopes`: memory scopes made Subgroup (llvmpipe, repair 15); `zero_operands`: float
    operations on a constant +0.0 rewritten (llvmpipe, repair 21); `merge_accesses`:
    adjacent narrow global accesses merged (llvmpipe's compile time, spirv_merge_access.py);
    `roll_copies`: copies of a run of global loads by a run of stores made loops, first
    (llvmpipe's compile time, spirv_copy_loops.py);
    `barrier_loops`: (copies, size) for one-block loops with a barrier unrolled (llvmpipe's
    loop limit, spirv_barrier_loops.py; (0, 0): none); `resume_limit`: outermost loops suspend
    past this many back-edges of a work-item and resume in a later dispatch (llvmpipe's loop
    limit, spirv_resume.py; 0: never); `round_even`: RoundEven and Trunc of doubles computed from Floor
    (llvmpipe, repair 22, spirv_round_even.py); `volatile_local`: the program says `volatile`, its
    Workgroup loads and stores are made Volatile (spirv_volatile.py)."""
    data = widen_odd_integers(data)
    data = physical_pointer_diffs(data)
    if volatile_local:
        data = volatile_workgroup_accesses(data)
    data = fix_mistyped_pointers(data)
    data = split_wide_vectors(data)
    data = fix_scalar_composites(data)
    data = fix_private_byte_chains(data)
    data = fix_negative_pointer_offsets(data)
    data = narrow_access_chain_indices(data)
    data = drop_unused_variable_pointers(data)
    data = prune_push_constant_interfaces(data)
    data = merge_undef_phis(data)
    data = fill_undef_phi_inputs(data)
    data = pack_dot_products(data)
    if mad_enable or unsafe_math:
        data = fuse_multiply_adds(data)
    if unsafe_math:
        data = allow_contraction(data)
    data = add_float_modes(data, *float_modes)
    data = num_groups_from_spec_constants(data)
    data = split_wide_bitcasts(data)
    if narrow_scopes:
        data = narrow_memory_scopes(data)
    if zero_operands:
        data = fix_zero_operands(data)
    if round_even:
        data = exact_round_even(data)
    if roll_copies:
        data = copy_loops(data)
    if merge_accesses:
        data = merge_narrow_accesses(data)
    if barrier_loops[0]:
        data = unroll_barrier_loops(data, *barrier_loops)
    if resume_limit:  # llvmpipe: long loops resumed in later dispatches (spirv_resume.py)
        resumable = spirv_resume.make_resumable(data, resume_limit)
        data = resumable if spirv_resume.affordable(data, resumable) else data
    if loop_cuts:  # llvmpipe: its partial batches' extra lanes return at once, its cuts detected
        data = spirv_extra_lanes.return_extra_lanes(data)
        data = spirv_loop_cuts.instrument(data)
    return relax_atomics(data) if relaxed_atomics else data


DECORATION_NO_CONTRACTION = 42


def allow_contraction(data: bytes) -> bytes:
    words = spirv.to_words(data)
    out, changed = words[:spirv.HEADER_WORDS], False
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_DECORATE and n == 3 and words[pos + 2] == DECORATION_NO_CONTRACTION:
            changed = True
            continue
        out.extend(words[pos:pos + n])
    return spirv.to_bytes(out) if changed else data


OP_FADD, OP_FMUL, OP_NAME = 129, 133, 5
GLSL_STD_450, GLSL_FMA = "GLSL.std.450", 50


def fuse_multiply_adds(data: bytes) -> bytes:
    """OpFAdd(OpFMul(a, b), c) becomes Fma(a, b, c): only where the build options allow it (clspv
    decorates such a pair NoContraction, or, under -cl-mad-enable, leaves the fusing to the
    driver: Fma is faster on NVIDIA). A multiply no other instruction uses goes, with its
    decorations (NVIDIA's driver did not drop it: a double multiply-add loop stayed at the
    pair's speed with it)."""
    words = spirv.to_words(data)
    muls, glsl, memory_model = {}, None, None
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_EXT_INST_IMPORT and spirv.literal_string(words, pos + 2, pos + n)[0] == GLSL_STD_450:
            glsl = words[pos + 1]
        elif op == spirv.OP_MEMORY_MODEL and memory_model is None:
            memory_model = pos
        elif op == OP_FMUL and n == 5:
            muls[words[pos + 2]] = (words[pos + 1], words[pos + 3], words[pos + 4])
    fusable = set(muls)
    if not fusable:
        return data
    import_words = []
    if glsl is None:  # import GLSL.std.450 under a new id, before OpMemoryModel
        glsl = words[3]
        name = spirv.string_words(GLSL_STD_450)
        import_words = [((2 + len(name)) << 16) | spirv.OP_EXT_INST_IMPORT, glsl, *name]
    # Which adds become Fma, and how often each multiply is named elsewhere. A multiply's result
    # can only be used inside a function, so only words there count, but any such word equal to
    # its id does, literals included: a multiply may be kept by mistake, never dropped. (Counting
    # the whole module kept multiplies whose id equalled a word of a string, such as the "n\0\0\0"
    # ending "mad_chain"; NVIDIA's 580 driver happened to drop those itself.)
    fma_of, uses = {}, dict.fromkeys(fusable, 0)
    for pos, op, n, in_function in spirv.instructions_scoped(words):
        if not in_function or op == spirv.OP_LINE:
            continue
        if op == OP_FADD and n == 5:
            t, r, x, y = words[pos + 1:pos + 5]
            m, c = (x, y) if x in fusable else (y, x) if y in fusable else (None, None)
            if m is not None and muls[m][0] == t:
                fma_of[pos] = (m, c)
                uses[m] -= 1
        for w in words[pos + 1:pos + n]:
            if w in uses:
                uses[w] += 1
    if not fma_of:
        return data
    dead = {m for m, count in uses.items() if count == 1}  # its own definition only
    out = array("I", words[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(words):
        if pos == memory_model:
            out.extend(import_words)
        if pos in fma_of:
            (m, c), t, r = fma_of[pos], words[pos + 1], words[pos + 2]
            _, a, b = muls[m]
            out.extend([(8 << 16) | spirv.OP_EXT_INST, t, r, glsl, GLSL_FMA, a, b, c])
            continue
        if (op == OP_FMUL and n == 5 and words[pos + 2] in dead) or \
                (op in (spirv.OP_DECORATE, OP_NAME) and words[pos + 1] in dead):
            continue
        out.extend(words[pos:pos + n])
    if import_words:
        out[3] = glsl + 1
    return spirv.to_bytes(out)


ORDERING_BITS = 0x2 | 0x4 | 0x8 | 0x10  # Acquire, Release, AcquireRelease, SequentiallyConsistent
# Atomic opcodes -> word offsets of their memory-semantics operands.
_ATOMIC_SEMANTICS = {227: (5,), 228: (3,), 229: (5,), 230: (5, 6), 232: (5,), 233: (5,), 234: (5,),
                     235: (5,), 236: (5,), 237: (5,), 238: (5,), 239: (5,), 240: (5,), 241: (5,), 242: (5,),
                     318: (5,), 319: (3,), 6035: (5,), 5614: (5,), 5615: (5,)}


def relax_atomics(data: bytes) -> bytes:
    words = spirv.to_words(data)
    _, constants = spirv.int32_constants(words)
    uses = []
    first_function = None
    for pos, op, n in spirv.instructions(words):
        if op == OP_FUNCTION and first_function is None:
            first_function = pos
        elif op in _ATOMIC_SEMANTICS:
            uses.extend(pos + k for k in _ATOMIC_SEMANTICS[op] if k < n)
    relaxed: dict[int, int] = {}
    bound = words[3]
    new_constants = array("I")
    changed = False
    for at in uses:
        const = constants.get(words[at])
        if const is None or not const[1] & ORDERING_BITS:
            continue
        type_id, value = const
        value &= ~ORDERING_BITS
        if value not in relaxed:
            relaxed[value] = bound
            new_constants.extend([(4 << 16) | OP_CONSTANT, type_id, bound, value])
            bound += 1
        words[at] = relaxed[value]
        changed = True
    if not changed:
        return data
    return spirv.with_declarations(words, first_function, new_constants, bound)


SC_PUSH_CONSTANT = 9


def prune_push_constant_interfaces(data: bytes) -> bytes:
    words = spirv.to_words(data)
    variables = spirv.global_variables(words)
    push = {v for v, (sc, _) in variables.items() if sc == SC_PUSH_CONSTANT}
    if len(push) < 2:
        return data
    used = spirv.variables_used(words, variables)
    out, changed = words[:spirv.HEADER_WORDS], False
    for pos, op, n in spirv.instructions(words):
        inst = words[pos:pos + n]
        if op == spirv.OP_ENTRY_POINT:
            _, nxt = spirv.literal_string(words, pos + 3, pos + n)
            mine = used.get(words[pos + 2], set())
            keep = [v for v in words[nxt:pos + n] if v not in push or v in mine]
            if len(keep) != pos + n - nxt:
                changed = True
                inst = words[pos:nxt]
                inst.extend(keep)
                inst[0] = (len(inst) << 16) | op
        out.extend(inst)
    return spirv.to_bytes(out) if changed else data


def drop_unused_variable_pointers(data: bytes) -> bytes:
    words = spirv.to_words(data)
    logical = set()  # pointer types into Workgroup or StorageBuffer
    cap_at = None
    for pos, op, n in spirv.instructions(words):
        if op == OP_CAPABILITY and words[pos + 1] == CAP_VARIABLE_POINTERS:
            cap_at = pos
        elif op == OP_TYPE_POINTER and words[pos + 2] in (SC_WORKGROUP, SC_STORAGE_BUFFER):
            logical.add(words[pos + 1])
        elif op in _VARIABLE_POINTER_OPS and n > 2 and words[pos + 1] in logical:
            return data  # a real variable pointer: keep the capability
    if cap_at is None:
        return data
    return spirv.to_bytes(words[:cap_at] + words[cap_at + 2:])


def narrow_access_chain_indices(data: bytes) -> bytes:
    words = spirv.to_words(data)
    wide = set()
    widened = {}  # result id of a conversion to 64 bits -> the narrower value it converts
    chains = []
    for pos, op, n in spirv.instructions(words):
        if op == OP_TYPE_INT and words[pos + 2] == 64:
            wide.add(words[pos + 1])
        elif op in (OP_SCONVERT, OP_UCONVERT) and words[pos + 1] in wide:
            widened[words[pos + 2]] = words[pos + 3]
        elif op in (OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN) and n > 5:
            chains.append((pos, n))
    changed = False
    for pos, n in chains:
        for at in range(pos + 4, pos + n):  # the indices after result type, result and base
            src = widened.get(words[at])
            if src is not None:
                words[at] = src
                changed = True
    return spirv.to_bytes(words) if changed else data


def fix_negative_pointer_offsets(data: bytes) -> bytes:
    words = spirv.to_words(data)
    u64 = set()
    suspect = {}  # constant id -> (type id, low word)
    adds = {}  # result id -> operand ids (64-bit adds and subtracts)
    index_uses = []  # (word position, id) of PtrAccessChain element operands
    first_function = None
    for pos, op, n in spirv.instructions(words):
        if op == OP_TYPE_INT and words[pos + 2] == 64:
            u64.add(words[pos + 1])
        elif op == OP_CONSTANT and n == 5 and words[pos + 1] in u64:
            low, high = words[pos + 3], words[pos + 4]
            if high == 0 and low >= 0x80000000:
                suspect[words[pos + 2]] = (words[pos + 1], low)
        elif op == OP_FUNCTION and first_function is None:
            first_function = pos
        elif op in (OP_IADD, OP_ISUB) and words[pos + 1] in u64:
            adds[words[pos + 2]] = (pos, op)
        elif op == OP_PTR_ACCESS_CHAIN:
            index_uses.append(pos + 4)
    if not suspect or first_function is None:
        return data
    # Operand positions to rewrite: the element index itself, or an add feeding it (one level).
    rewrite = []
    for at in index_uses:
        ident = words[at]
        if ident in suspect:
            rewrite.append(at)
        elif ident in adds:
            pos, op = adds[ident]
            for k in ((3, 4) if op == OP_IADD else (4,)):
                if words[pos + k] in suspect:
                    rewrite.append(pos + k)
    if not rewrite:
        return data
    bound = words[3]
    fixed: dict[int, int] = {}
    new_constants = array("I")
    for at in rewrite:
        old = words[at]
        if old not in fixed:
            type_id, low = suspect[old]
            fixed[old] = bound
            new_constants.extend([(5 << 16) | OP_CONSTANT, type_id, bound, low, 0xFFFFFFFF])
            bound += 1
        words[at] = fixed[old]
    out = words[:first_function] + new_constants + words[first_function:]
    out[3] = bound
    return spirv.to_bytes(out)
