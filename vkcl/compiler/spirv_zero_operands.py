"""Repair 21: float arithmetic with a constant +0.0 operand, for llvmpipe (lavapipe), whose code
generator (Mesa 22.3's gallivm) simplifies it as if IEEE had no infinities, NaNs or signed zeros.

gallivm builds each float add, multiply and divide through helpers that return early when an
operand is its constant zero (the null vector, which +0.0 is and -0.0 is not; a conversion of a
zero constant, such as a half 0.0 widened to float, is folded to one first): `x * 0.0` is 0
(for x = inf or NaN too, and +0 for negative x), `0.0 / x` is 0 (for x = 0 or NaN too), `x / 0.0`
is undefined (seen: 0 for every x, or NaN), `x + 0.0` and `0.0 + x` are x (-0 for x = -0), and
`0.0 - x` is -x (-0 for x = +0). lavapipe runs a vector operation one component at a time, so a
constant vector with a +0.0 component is hit in that component.

Multiplications, divisions and remainders are rewritten with the constant negated, through
identities that hold for every IEEE value (negation is exact, round-to-nearest symmetric):
    x * C = -(x * -C)      x / C = -(x / -C)      C / x = -(-C / x)      x rem C = x rem -C
(vector * scalar too). An addition `x + C` (and `C - x`, as `(-x) + C`) adds C with its +0.0
components made -0.0, which changes nothing but the sum of -0 and +0, and then, in those
components, turns a -0 result into +0 by a select on its bits (`x - (-0.0)` does not do: the
driver's compiler makes it `x + 0.0` again). `x - C` needs nothing: gallivm's `x - 0.0 = x` is
right. A constant with both +0.0 and -0.0 components is left alone (none seen). Intermediate
results keep the NoContraction of the operation they come from.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import Module, instruction

OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR = 20, 21, 22, 23
OP_CONSTANT, OP_CONSTANT_COMPOSITE, OP_CONSTANT_NULL = 43, 44, 46
OP_BITCAST, OP_IEQUAL, OP_LOGICAL_AND, OP_SELECT = 124, 170, 167, 169
OP_EXT_INST_IMPORT, OP_EXT_INST, GLSL_FMA = 11, 12, 50
OP_FCONVERT = 115
OP_FUNCTION, OP_DECORATE, OP_MEMBER_DECORATE = 54, 71, 72
OP_FNEGATE, OP_FADD, OP_FSUB, OP_FMUL, OP_FDIV, OP_FREM = 127, 129, 131, 133, 136, 140
OP_VECTOR_TIMES_SCALAR = 142
DECORATION_NO_CONTRACTION = 42
CAPABILITY_INT16 = 22


def fix_zero_operands(data: bytes) -> bytes:
    """The module with float operations on a constant holding +0.0 rewritten (see above);
    unchanged when it has none."""
    module = Module(data)
    fixer = _Fixer(module)
    changed = module.rewrite(fixer.each)
    if not changed:
        return data
    if fixer.decorations:
        last = max((i for i, inst in enumerate(module.insts)
                    if Module.opcode(inst) in (OP_DECORATE, OP_MEMBER_DECORATE)), default=None)
        if last is None:  # no annotations yet: they go before the first type or constant
            last = next(i for i, inst in enumerate(module.insts) if 19 <= Module.opcode(inst) <= 52) - 1
        module.insts[last + 1:last + 1] = fixer.decorations
    return module.to_bytes()


class _Fixer:
    def __init__(self, module: Module):
        self.m = module
        self.decorations: list[array] = []
        self.no_contraction: set[int] = set()
        self.composites: dict[int, tuple[int, tuple[int, ...]]] = {}  # id -> (type, lane ids)
        self.nulls: dict[int, int] = {}                                # OpConstantNull id -> type
        self.negated: dict[int, int] = {}
        self.converts: dict[int, tuple[int, int]] = {}                 # OpFConvert id -> (type, operand)
        self.glsl = None
        for inst in module.insts:
            op = Module.opcode(inst)
            if op == OP_EXT_INST_IMPORT and spirv.literal_string(inst, 2, len(inst))[0] == "GLSL.std.450":
                self.glsl = inst[1]
            elif op == OP_DECORATE and len(inst) == 3 and inst[2] == DECORATION_NO_CONTRACTION:
                self.no_contraction.add(inst[1])
            elif op == OP_CONSTANT_COMPOSITE:
                self.composites[inst[2]] = (inst[1], tuple(inst[3:]))
            elif op == OP_CONSTANT_NULL:
                self.nulls[inst[2]] = inst[1]
            elif op == OP_FCONVERT and len(inst) == 4:
                self.converts[inst[2]] = (inst[1], inst[3])

    # -- constants --------------------------------------------------------------------------
    def _float_type(self, type_id: int) -> int | None:
        """The float type of a float scalar or vector type, else None."""
        inst = self.m.types.get(type_id)
        if inst is None:
            return None
        if Module.opcode(inst) == OP_TYPE_VECTOR:
            inst = self.m.types.get(inst[2])
        return inst[1] if inst is not None and Module.opcode(inst) == OP_TYPE_FLOAT else None

    def _lanes(self, value: int) -> list[tuple[int, tuple[int, ...]]] | None:
        """(float type, value words) of each component of a float constant, else None."""
        if value in self.nulls:
            type_id = self.nulls[value]
            scalar = self._float_type(type_id)
            if scalar is None:
                return None
            count = self.m.types[type_id][3] if Module.opcode(self.m.types[type_id]) == OP_TYPE_VECTOR else 1
            return [(scalar, self._zero_words(self.m.types[scalar][2], False))] * count
        if value in self.converts:  # a conversion of zeros (the driver folds it): zeros
            type_id, operand = self.converts[value]
            scalar, source = self._float_type(type_id), self._lanes(operand)
            if scalar is None or source is None or not all(any(self._sign_words(t, w)) for t, w in source):
                return None
            width = self.m.types[scalar][2]
            return [(scalar, self._zero_words(width, self._sign_words(t, w)[1])) for t, w in source]
        if value in self.composites:
            lanes = [self._lanes(lane) for lane in self.composites[value][1]]
            if any(lane is None or len(lane) != 1 for lane in lanes):
                return None
            return [lane[0] for lane in lanes]
        found = self.m.constants.get(value)
        if found is None or self._float_type(found[0]) != found[0]:
            return None
        return [found]

    @staticmethod
    def _zero_words(width: int, negative: bool) -> tuple[int, ...]:
        sign = (1 << ((width - 1) % 32)) if negative else 0
        return (0, sign) if width == 64 else (sign,)

    def _sign_words(self, type_id: int, words: tuple[int, ...]) -> tuple[bool, bool]:
        """(is +0.0, is -0.0) of a float constant's words."""
        width = self.m.types[type_id][2]
        sign = 1 << ((width - 1) % 32)
        magnitude = [w for w in words]
        magnitude[-1] &= ~sign & 0xFFFFFFFF
        if width == 16:
            magnitude[-1] &= 0xFFFF
        zero = not any(magnitude)
        negative = bool(words[-1] & sign)
        return zero and not negative, zero and negative

    def has_positive_zero(self, value: int) -> bool:
        lanes = self._lanes(value)
        if lanes is None:
            return False
        signs = [self._sign_words(t, w) for t, w in lanes]
        return any(p for p, _ in signs) and not any(n for _, n in signs)

    def _float_constant(self, type_id: int, words: tuple[int, ...]) -> int:
        for cid, (tid, have) in self.m.constants.items():
            if tid == type_id and have == words:
                return cid
        rid = self.m.new_id()
        self.m.declare(instruction(OP_CONSTANT, type_id, rid, *words))
        self.m.type_of[rid], self.m.constants[rid] = type_id, (type_id, words)
        return rid

    def _composite(self, type_id: int, ids: list[int]) -> int:
        if Module.opcode(self.m.types[type_id]) != OP_TYPE_VECTOR:
            return ids[0]
        for cid, (tid, lanes) in self.composites.items():
            if tid == type_id and list(lanes) == ids:
                return cid
        rid = self.m.new_id()
        self.m.declare(instruction(OP_CONSTANT_COMPOSITE, type_id, rid, *ids))
        self.m.type_of[rid], self.composites[rid] = type_id, (type_id, tuple(ids))
        return rid

    def _flipped(self, value: int, type_id: int, only_zeros: bool) -> int:
        ids = []
        for lane_type, words in self._lanes(value):
            flipped = list(words)
            if not only_zeros or self._sign_words(lane_type, words)[0]:
                flipped[-1] ^= 1 << ((self.m.types[lane_type][2] - 1) % 32)
            ids.append(self._float_constant(lane_type, tuple(flipped)))
        return self._composite(type_id, ids)

    def negate(self, value: int, type_id: int) -> int:
        """A constant equal to -value (every component's sign flipped)."""
        if value not in self.negated:
            self.negated[value] = self._flipped(value, type_id, only_zeros=False)
        return self.negated[value]

    def _add(self, type_id: int, rid: int, x: int | None, c: int, fma_of: tuple | None = None) -> list[array]:
        """`rid = x + c` (or `fma(*fma_of, c)`) for a constant c with +0.0 components, as
        described above."""
        lanes = self._lanes(c)
        scalar = lanes[0][0]
        width = self.m.types[scalar][2]
        count = len(lanes) if Module.opcode(self.m.types[type_id]) == OP_TYPE_VECTOR else 1
        uint = self.m.int_type(width)
        if width == 16:
            self.m.capabilities.add(CAPABILITY_INT16)
        bool_type = self.m.bool_type()
        bits_type = self.m.find_type(OP_TYPE_VECTOR, uint, count) if count > 1 else uint
        cond_type = self.m.find_type(OP_TYPE_VECTOR, bool_type, count) if count > 1 else bool_type
        sign = self.m.constant(uint, 1 << (width - 1))
        signs = self._composite(bits_type, [sign] * count)
        total, bits, negative_zero = self._temp(rid), self.m.new_id(), self.m.new_id()
        addend = self._flipped(c, type_id, only_zeros=True)
        out = [instruction(OP_FADD, type_id, total, x, addend) if fma_of is None
               else self._glsl_fma(type_id, total, *fma_of, addend),
               instruction(OP_BITCAST, bits_type, bits, total),
               instruction(OP_IEQUAL, cond_type, negative_zero, bits, signs)]
        zero_lanes = [self._sign_words(t, w)[0] for t, w in lanes]
        if not all(zero_lanes):
            mask, where = self.m.new_id(), self._bools(cond_type, zero_lanes)
            out.append(instruction(OP_LOGICAL_AND, cond_type, mask, negative_zero, where))
            negative_zero = mask
        out.append(instruction(OP_SELECT, type_id, rid, negative_zero, c, total))
        return out

    def _bools(self, vector_type: int, values: list[bool]) -> int:
        return self._composite(vector_type, [self.m.bool_constant(value) for value in values])

    # -- operations -------------------------------------------------------------------------
    def _temp(self, original: int) -> int:
        rid = self.m.new_id()
        if original in self.no_contraction:
            self.decorations.append(instruction(OP_DECORATE, rid, DECORATION_NO_CONTRACTION))
        return rid

    def _fma(self, type_id: int, rid: int, a: int, b: int, c: int) -> list[array] | None:
        """`rid = fma(a, b, c)` with constant +0.0 components in a factor or the addend. A factor
        of zeros makes the product exact (+-0 or NaN): x * C as above, then + c; an addend C is
        added as in _add. (-fma(x, -C, -y) would not do: the sum of opposite zeros is +0 either
        way.) A factor with zero and other components is left alone (none seen)."""
        for x, factor in ((a, b), (b, a)):
            if self._all_positive_zero(factor):
                product, temp = self._temp(rid), self._temp(rid)
                out = [instruction(OP_FMUL, type_id, temp, x, self.negate(factor, type_id)),
                       instruction(OP_FNEGATE, type_id, product, temp)]
                if self.has_positive_zero(c):
                    return out + self._add(type_id, rid, product, c)
                return out + [instruction(OP_FADD, type_id, rid, product, c)]
        if self.has_positive_zero(a) or self.has_positive_zero(b) or not self.has_positive_zero(c):
            return None
        return self._add(type_id, rid, None, c, fma_of=(a, b))

    def _all_positive_zero(self, value: int) -> bool:
        lanes = self._lanes(value)
        return lanes is not None and all(self._sign_words(t, w)[0] for t, w in lanes)

    def _glsl_fma(self, type_id: int, rid: int, a: int, b: int, c: int) -> array:
        return instruction(OP_EXT_INST, type_id, rid, self.glsl, GLSL_FMA, a, b, c)

    def each(self, inst: array) -> list[array] | None:
        op = Module.opcode(inst)
        if (op == OP_EXT_INST and len(inst) == 8 and inst[3] == self.glsl and inst[4] == GLSL_FMA
                and self._float_type(inst[1]) is not None):
            return self._fma(inst[1], inst[2], inst[5], inst[6], inst[7])
        if op not in (OP_FADD, OP_FSUB, OP_FMUL, OP_FDIV, OP_FREM, OP_VECTOR_TIMES_SCALAR) or len(inst) != 5:
            return None
        type_id, rid, a, b = inst[1], inst[2], inst[3], inst[4]
        if self._float_type(type_id) is None:
            return None
        a_zero, b_zero = self.has_positive_zero(a), self.has_positive_zero(b)
        if not (a_zero or b_zero):
            return None
        if op == OP_VECTOR_TIMES_SCALAR:  # vector * scalar: either may be the constant
            operands = (a, self.negate(b, self.m.type_of[b])) if b_zero else (self.negate(a, type_id), b)
            temp = self._temp(rid)
            return [instruction(op, type_id, temp, *operands), instruction(OP_FNEGATE, type_id, rid, temp)]
        if op == OP_FREM:  # the remainder's sign and size do not depend on the divisor's sign
            return [instruction(OP_FREM, type_id, rid, a, self.negate(b, type_id))] if b_zero else None
        if op == OP_FSUB:
            if not a_zero:
                return None  # x - C: right as gallivm does it
            negated = self._temp(rid)
            return [instruction(OP_FNEGATE, type_id, negated, b), *self._add(type_id, rid, negated, a)]
        if op == OP_FADD:
            return self._add(type_id, rid, a, b) if b_zero else self._add(type_id, rid, b, a)
        # multiply, divide: the product or quotient with the constant negated, negated back
        if op == OP_FMUL:
            x, c = (a, b) if b_zero else (b, a)
            operands = (x, self.negate(c, type_id))
        elif b_zero:
            operands = (a, self.negate(b, type_id))
        else:
            operands = (self.negate(a, type_id), b)
        temp = self._temp(rid)
        return [instruction(op, type_id, temp, *operands), instruction(OP_FNEGATE, type_id, rid, temp)]
