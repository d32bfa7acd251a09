"""vkcl.compiler.loop_exits: exits out of several loops at once taken through the loops' headers,
in the front end's IR (tests/icd/test_structurized_loops.py: what the programs compute)."""
from vkcl.compiler import loop_exits

# for (r < m) for (i < n) if (hit) return;  as clang writes it at -O0 (trimmed)
NESTED_RETURN = """define spir_kernel void @k(ptr addrspace(1) %o, i32 %n, i32 %m) {
entry:
  %r = alloca i32, align 4
  %i = alloca i32, align 4
  store i32 0, ptr %r, align 4
  br label %for.cond

for.cond:                                         ; preds = %for.inc, %entry
  %0 = load i32, ptr %r, align 4
  %cmp = icmp ult i32 %0, %m
  br i1 %cmp, label %for.body, label %for.end

for.body:
  store i32 0, ptr %i, align 4
  br label %for.cond1

for.cond1:
  %1 = load i32, ptr %i, align 4
  %cmp2 = icmp ult i32 %1, %n
  br i1 %cmp2, label %for.body3, label %for.inc

for.body3:
  %hit = icmp eq i32 %1, 7
  br i1 %hit, label %if.then, label %for.inc1

if.then:
  store i32 %1, ptr addrspace(1) %o, align 4
  br label %return

for.inc1:
  %inc = add i32 %1, 1
  store i32 %inc, ptr %i, align 4
  br label %for.cond1

for.inc:
  %2 = load i32, ptr %r, align 4
  %inc2 = add i32 %2, 1
  store i32 %inc2, ptr %r, align 4
  br label %for.cond

for.end:
  br label %return

return:
  ret void
}
"""


def test_an_exit_out_of_two_loops_goes_through_both_headers():
    out = loop_exits.rewrite(NESTED_RETURN)
    assert out is not None
    # the hit stores its number and goes back to the inner header, which now also tests it
    assert "br i1 %hit, label %vkcl.exit.1, label %for.inc1" in out
    assert "store i32 1, ptr %vkcl.loop.exit" in out
    assert out.count("icmp eq i32 %vkcl.h") == 2  # both headers
    # the inner loop's exit block passes it on to the outer header; the outer's sends it on,
    # clearing the number first
    assert "i32 1, label %for.cond ]" in out
    to = out[out.index("vkcl.e1.to1:"):]
    assert to.split("\n")[1:3] == ["  store i32 0, ptr %vkcl.loop.exit, align 4", "  br label %if.then"]
    # the latch (the increment) is not on the exit's way
    assert "vkcl.e0.rest:\n  %2 = load i32, ptr %r" in out


def test_programs_without_such_exits_are_unchanged():
    single = NESTED_RETURN.replace("br i1 %hit, label %if.then, label %for.inc1",
                                   "br label %for.inc1")
    assert loop_exits.rewrite(single) is None
    assert loop_exits.rewrite("define void @f() {\nentry:\n  ret void\n}\n") is None


def test_a_header_with_side_effects_is_left_alone():
    # an exit runs the header once more: a store or call there would happen twice
    effect = NESTED_RETURN.replace("  %cmp2 = icmp ult i32 %1, %n\n",
                                   "  %cmp2 = icmp ult i32 %1, %n\n  store i32 %1, ptr addrspace(1) %o, align 4\n")
    assert loop_exits.rewrite(effect) is None
    pure = NESTED_RETURN.replace("  %cmp2 = icmp ult i32 %1, %n\n",
                                 "  %cmp2 = icmp ult i32 %1, %n\n  %g = call spir_func i64 @_Z13get_global_idj(i32 0)\n")
    assert loop_exits.rewrite(pure) is not None
