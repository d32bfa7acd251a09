"""A repair of clspv's loops after LLVM's runtime unrolling: phis that differ only by undef.

LLVM's -unroll-runtime leaves, after the unrolled loop, a remainder loop and a merge. clspv's
structurised output gives the merge two phis per loop value: one that takes the value from the
unrolled loop or the initial value, and one that takes it from the unrolled loop or OpUndef (the
path that skips the unrolled loop never reads it). LLVM would fold the second into the first;
NVIDIA's driver (580) does not, and keeps both alive across the remainder loop: twice the
registers of NVIDIA's own OpenCL compiler (H200, a loop of 8 double multiply-add chains: 44
registers against 26; 8 float4 chains: 73 against 40), fewer resident work-groups, and 0.92 of
its throughput.

merge_undef_phis replaces such a phi P with a phi Q of the same block and type that has P's
value on every edge where P's is not OpUndef: P is undefined on the other edges, so Q is a
valid value for it there. Uses are renamed only in operand positions known to hold ids; a phi
with any other use is left alone.

fill_undef_phi_inputs handles the OpUndef that stays: a loop that exits in the middle
(`for (;;) { ...; if (done) break; ...; }`) becomes, in clspv's structured form, a header, a
conditional second half and a continue block whose phis take OpUndef on the edge from the
header (the exit path, which never reads them). NVIDIA keeps those undefined values apart from
the live ones. An OpUndef input may be replaced by any value of its type available on its
edge; the repair takes, from the phi's defined input, the nearest value its chain of operands
starts from in the edge's source block (the header's copy of the same variable), which is live
there anyway. H200, 8 float multiply-add chains in such a loop: 41.6 -> 45.2 TFLOP/s.
"""
from __future__ import annotations

from vkcl.compiler import spirv

OP_UNDEF, OP_NAME, OP_LABEL, OP_PHI = 1, 5, 248, 245
OP_EXT_INST, OP_STORE, OP_COMPOSITE_EXTRACT, OP_BRANCH_CONDITIONAL, OP_RETURN_VALUE = 12, 62, 81, 250, 254

# Opcodes whose operands after the result id are all ids: arithmetic, conversions, composites,
# comparisons, logic and bit operations, OpSelect, OpDot, OpPhi (labels never equal a value id).
_ALL_IDS_FROM_3 = frozenset([80, 127, 126, 142, 148, 169, 245] + list(range(109, 125)) + list(range(128, 142))
                            + list(range(164, 192)) + list(range(194, 201)))


def _id_positions(op: int, n: int) -> range | tuple:
    """Word offsets (within an instruction of `n` words) that hold ids being used."""
    if op in _ALL_IDS_FROM_3:
        return range(3, n)
    if op == OP_EXT_INST:
        return range(5, n)
    if op == OP_STORE:
        return (1, 2)
    if op == OP_COMPOSITE_EXTRACT:
        return (3,)
    if op in (OP_BRANCH_CONDITIONAL, OP_RETURN_VALUE):
        return (1,)
    return ()


def _find_merges(words, undef: set) -> dict[int, int]:
    """{replaced phi id: the phi id that stands for it}, block by block."""
    merges: dict[int, int] = {}
    targets: set[int] = set()
    block_phis: list[tuple[int, int, dict]] = []

    def settle() -> None:
        for p_type, p_id, p_in in block_phis:
            if p_id in targets or not any(v in undef for v in p_in.values()):
                continue
            for q_type, q_id, q_in in block_phis:
                if q_id == p_id or q_type != p_type or q_id in merges or q_in.keys() != p_in.keys():
                    continue
                if all(v in undef or v == q_in[parent] for parent, v in p_in.items()):
                    merges[p_id] = q_id
                    targets.add(q_id)
                    break
        block_phis.clear()

    for pos, op, n in spirv.instructions(words):
        if op == OP_LABEL:
            settle()
        elif op == OP_PHI:
            block_phis.append((words[pos + 1], words[pos + 2],
                               {words[pos + i + 1]: words[pos + i] for i in range(3, n - 1, 2)}))
    settle()
    return merges


def merge_undef_phis(data: bytes) -> bytes:
    words = spirv.to_words(data)
    undef = {words[pos + 2] for pos, op, n in spirv.instructions(words) if op == OP_UNDEF and n == 3}
    if not undef:
        return data
    merges = _find_merges(words, undef)
    if not merges:
        return data
    # A replaced id anywhere but a known id operand (or its own definition, name, decoration):
    # keep that phi (a literal that happens to equal the id only makes this more careful).
    for pos, op, n in spirv.instructions(words):
        if op == OP_PHI and words[pos + 2] in merges:
            continue
        if op in (OP_NAME, spirv.OP_DECORATE) and words[pos + 1] in merges:
            continue
        ids = _id_positions(op, n)
        for i in range(1, n):
            w = words[pos + i]
            if w in merges and i not in ids:
                del merges[w]
    if not merges:
        return data
    out = words[:spirv.HEADER_WORDS]
    for pos, op, n in spirv.instructions(words):
        if (op == OP_PHI and words[pos + 2] in merges) or \
                (op in (OP_NAME, spirv.OP_DECORATE) and words[pos + 1] in merges):
            continue
        inst = words[pos:pos + n]
        for i in _id_positions(op, n):
            target = merges.get(inst[i])
            if target is not None:
                inst[i] = target
        out.extend(inst)
    return spirv.to_bytes(out)


def fill_undef_phi_inputs(data: bytes) -> bytes:
    words = spirv.to_words(data)
    undef = {words[pos + 2] for pos, op, n in spirv.instructions(words) if op == OP_UNDEF and n == 3}
    if not undef:
        return data
    # Every result id of a function: (its block, its type, the ids its operands use).
    defs: dict[int, tuple[int, int, tuple]] = {}
    phis = []  # positions of the phis with an OpUndef input
    block = None
    for pos, op, n in spirv.instructions(words):
        if op == OP_LABEL:
            block = words[pos + 1]
        elif block is not None and n >= 3 and (op in _ALL_IDS_FROM_3 or op == OP_EXT_INST):
            uses = tuple(words[pos + i] for i in _id_positions(op, n))
            defs[words[pos + 2]] = (block, words[pos + 1], uses)
            if op == OP_PHI and any(words[pos + i] in undef for i in range(3, n - 1, 2)):
                phis.append(pos)
        if op == spirv.OP_FUNCTION_END:
            block = None
    if not phis:
        return data
    out = words[:]
    changed = False
    for pos in phis:
        n = words[pos] >> 16
        p_type = words[pos + 1]
        inputs = [(words[pos + i], words[pos + i + 1]) for i in range(3, n - 1, 2)]
        defined = [v for v, _ in inputs if v not in undef]
        if not defined:
            continue
        for k, (v, parent) in enumerate(inputs):
            if v not in undef:
                continue
            found = _chain_start(defined[0], parent, p_type, defs)
            if found is not None:
                out[pos + 3 + 2 * k] = found
                changed = True
    return spirv.to_bytes(out) if changed else data


def _chain_start(value: int, block: int, type_id: int, defs: dict, depth: int = 4) -> int | None:
    """The nearest id in `value`'s operand chain (breadth first, `depth` levels) that is defined
    in `block` with type `type_id`: available at the end of `block`. None if there is none."""
    level = [value]
    seen = {value}
    for _ in range(depth):
        nxt = []
        for v in level:
            d = defs.get(v)
            if d is None:
                continue
            for u in d[2]:
                if u in seen:
                    continue
                seen.add(u)
                du = defs.get(u)
                if du is not None and du[0] == block and du[1] == type_id:
                    return u
                nxt.append(u)
        level = nxt
    return None
