"""Another way of building a program where clspv's first build cannot be used: the driver's
cascade of builds (docs/architecture.md, "Builds made another way"). Each way changes one
choice of the last build (`shape`: loops unrolled, calls inlined, loops rotated, closed forms,
exits routed by loop_exits) and is taken where its build can be used; the reasons are beside
each."""
from __future__ import annotations

import re
from typing import Callable

from vkcl import log
from vkcl.compiler import spirv_odd_widths, spirv_resume_plan, spirv_single_pass_loops
from vkcl.compiler.caps import DeviceCaps
from vkcl.compiler.worker import CompileOutput

_log = log.get("compiler")

UNROLLED_GROWTH_LIMIT = 8
# Work-group barriers, and the builtins that wait at one (async copies, work-group collectives).
_BARRIER = re.compile(rb"barrier\b|\bwork_group_\w|\bwait_group_events\b|\basync_work_group")
_LOOP = re.compile(rb"\b(?:for|while)\b")  # (a do-while ends in `while`)


def settle(build: Callable, first: tuple, caps: DeviceCaps, *, input_kind: str, output_kind: str, optional: bool,
           routable: bool, mentions: Callable[[re.Pattern], bool]) -> tuple[tuple, dict]:
    """The build to use, (clspv's output, names renamed, its arguments), and its shape.
    `build(**shape)` makes a build; `first` is build()'s; `optional`: inlining may be left out;
    `routable`: build(exits=True) can route exits (OpenCL C, or one IL program's bitcode);
    `mentions(pattern)`: whether the program's own sources match."""
    out, renamed, args = first
    # LLVM's forced unrolling (llvmpipe) can leave what clspv cannot lower (indices of
    # `& 15` into a 16-element private array became i4 zexts, and clspv crashed): such a
    # program is built again with its loops rolled, which llvmpipe's long-loop passes
    # (spirv_resume) and loop-cut probe still cover.
    # How the program was built last: build(**shape) makes it again, one choice changed.
    shape = dict(unroll_loops=True, inline=True, rotate=True, closed_forms=True, exits=False, pointer_ints=False)
    if out.status == "crashed" and caps.loop_unroll_count and output_kind == "spirv":
        rolled_build = build(False)
        if rolled_build[0].ok:
            (out, renamed, args), shape["unroll_loops"] = rolled_build, False
    # Inlining every call can also leave what clspv's passes crash on: three double `pow`s of
    # constant exponents (Rodinia's particlefilter's kind) left a pointer phi with a poison input
    # that SimplifyPointerBitcastPass crashed on (SIGSEGV); with the prelude's calls kept, it
    # builds. Where inlining is optional, a program that crashed clspv is built so again.
    # clspv crashed on some valid programs the front end's route rewrites (order comparisons of
    # pointers: pointer_compares): a program that crashed it goes that way (exits=True, which
    # routes exits out of several loops only where there are some), and then with its private
    # variables of global pointers kept as integers (pointer_ints: the poison pointer of a
    # structurized if/else, Rodinia's heartwall; pointer_variables).
    if out.status == "crashed" and routable and input_kind == "cl" and output_kind == "spirv":
        ways = [dict(exits=True), dict(exits=True, unroll_loops=False)] if caps.loop_unroll_count else [dict(exits=True)]
        for way in ways + [{**way, "pointer_ints": True} for way in ways]:
            routed = build(**{**shape, **way})
            if routed[0].ok:
                (out, renamed, args) = routed
                shape.update(way)
                break
    if out.status in ("timeout", "crashed") and optional:
        uninlined = build(**{**shape, "inline": False})
        if uninlined[0].ok:
            (out, renamed, args), shape["inline"] = uninlined, False
    # llvmpipe compiles a kernel that waits at a barrier as a coroutine, and splitting one
    # of much unrolled code took minutes (pyopencl's segmented scan: 35 times the SPIR-V,
    # 0.7 s -> 643 s): such a program keeps its loops rolled where unrolling (the forced
    # unrolling of caps.loop_unroll_count) grows it more than UNROLLED_GROWTH_LIMIT times.
    rolled = None  # (made once for both checks below: nothing else changes between them)
    if (out.ok and caps.loop_unroll_count and input_kind == "cl" and output_kind == "spirv"
            and mentions(_BARRIER)):
        rolled = build(**{**shape, "unroll_loops": False})
        if rolled[0].ok and len(out.binary) > UNROLLED_GROWTH_LIMIT * len(rolled[0].binary):
            (out, renamed, args), shape["unroll_loops"] = rolled, False
    # llvmpipe suspends long loops (spirv_resume) but at most MAX_LOOPS outermost ones, or
    # MAX_WITH_INNER with those inside them, and LLVM's forced unrolling multiplies loops (an
    # outer loop of three trips holding a `for` holding two loops, unrolled: nine or more,
    # whose long inner loops were then cut short): such a program is built again with its
    # loops rolled, and that build taken where all its loops may suspend.
    # (Only where the program's own source has loops: the builtins' loops, one a lane of a
    # vector `remquo`, are the same rolled.)
    if (out.ok and caps.resume_limit and caps.loop_unroll_count and output_kind == "spirv"
            and shape["unroll_loops"] and spirv_resume_plan.outnumbered(out.binary)
            and mentions(_LOOP)):
        rolled = rolled or build(**{**shape, "unroll_loops": False})
        if rolled[0].ok and not spirv_resume_plan.outnumbered(rolled[0].binary):
            (out, renamed, args), shape["unroll_loops"] = rolled, False
    # clspv's SPIR-V writer crashed on valid programs whose rotated loops the structurizer
    # left in some shapes (a do-while around a `for` left by a `break`, a loop after them
    # left by a `return`); without loop rotation they built: such a program is built again so.
    if out.status == "crashed" and output_kind == "spirv":
        unrotated = build(**{**shape, "rotate": False})
        if unrotated[0].ok:
            (out, renamed, args), shape["rotate"] = unrotated, False
    # LLVM's StructurizeCFG can leave a loop that never takes its back-edge (the body runs
    # once; spirv_single_pass_loops): such a program is built again without loop rotation,
    # and refused if a loop is still cut short.
    # Where an exit leaves several loops at once (a `return` out of nested loops), neither
    # helps, and the program is built once more with those exits taken through the loops'
    # headers (loop_exits; OpenCL C, and IL programs with their phis demoted), with loop
    # rotation, then without.
    if out.ok and output_kind == "spirv" and spirv_single_pass_loops.single_pass_loops(out.binary):
        _log.info("a loop of clspv's output never repeats; building it other ways")
        ways = [dict(rotate=False)] if shape["rotate"] else []
        if routable:
            ways += [dict(rotate=True, exits=True), dict(rotate=False, exits=True)]
        missing = ""  # (a tool the routed build needs, not installed: the log says which)
        for way in ways:
            again = build(**{**shape, **way})
            if again[0].ok and not spirv_single_pass_loops.single_pass_loops(again[0].binary):
                (out, renamed, args) = again
                shape.update(way)
                break
            if again[0].status == "unavailable":
                missing = again[0].log
        else:
            out = CompileOutput("error", log=out.log + spirv_single_pass_loops.REFUSAL + missing)
    # A loop's final value in closed form takes an integer of a width Vulkan lacks; past 64
    # bits (a ulong sum) or in uses spirv_odd_widths does not take, nothing carries it: such
    # a program is built again with those values left to the loops.
    if out.ok and output_kind == "spirv" and spirv_odd_widths.uncarried(out.binary):
        _log.info("clspv's output holds an integer no Vulkan type carries; building again without closed forms")
        rebuilt = build(**{**shape, "closed_forms": False})
        if rebuilt[0].ok and not spirv_odd_widths.uncarried(rebuilt[0].binary):
            (out, renamed, args), shape["closed_forms"] = rebuilt, False
    return (out, renamed, args), shape
