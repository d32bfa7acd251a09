"""vkcl.compiler.loop_exits: exits out of several loops at once taken through the loops' headers,
in the front end's IR (tests/icd/test_structurized_loops.py: what the programs compute)."""
from vkcl.compiler import loop_exits

# The outer loop `for (r = 0; r < m; r++)` up to its inner loop, then its latch and the blocks
# after the loops: shared by the functions below.
OUTER_HEAD = """define spir_kernel void @k(ptr addrspace(1) %o, i32 %n, i32 %m) {{
entry:
  %r = alloca i32, align 4
  %i = alloca i32, align 4
  store i32 0, ptr %r, align 4
  br label %for.cond

for.cond:
  %0 = load i32, ptr %r, align 4
  %cmp = icmp ult i32 %0, %m
  br i1 %cmp, label %for.body, label %for.end

for.body:
  store i32 0, ptr %i, align 4
  br label %{inner}

"""
OUTER_LATCH = """{label}:
  {value} = load i32, ptr %r, align 4
  %inc2 = add i32 {value}, 1
  store i32 %inc2, ptr %r, align 4
  br label %for.cond

for.end:
  br label %return

return:
  ret void
}}
"""

# for (r < m) for (i < n) if (hit) return;  as clang writes it at -O0 (trimmed)
NESTED_RETURN = OUTER_HEAD.format(inner="for.cond1") + """for.cond1:
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

""" + OUTER_LATCH.format(label="for.inc", value="%2")


def test_an_exit_out_of_two_loops_goes_through_both_headers():
    out = loop_exits.rewrite(NESTED_RETURN)
    assert out is not None
    # the hit stores its number and goes back to the inner header, which now also tests it
    assert "br i1 %hit, label %vkcl.exit.1, label %for.inc1" in out
    assert "store volatile i32 1, ptr %vkcl.loop.exit" in out
    assert out.count("icmp eq i32 %vkcl.h") == 2  # both headers
    # the inner loop's exit block passes it on to the outer header; the outer's sends it on,
    # clearing the number first
    assert "i32 1, label %for.cond ]" in out
    to = out[out.index("vkcl.e1.to1:"):]
    assert to.split("\n")[1:3] == ["  store volatile i32 0, ptr %vkcl.loop.exit, align 4", "  br label %if.then"]
    # the latch (the increment) is not on the exit's way
    assert "vkcl.e0.rest:\n  %2 = load i32, ptr %r" in out


def test_programs_without_such_exits_are_unchanged():
    single = NESTED_RETURN.replace("br i1 %hit, label %if.then, label %for.inc1",
                                   "br label %for.inc1")
    assert loop_exits.rewrite(single) is None
    assert loop_exits.rewrite("define void @f() {\nentry:\n  ret void\n}\n") is None


def test_a_header_with_side_effects_is_entered_after_them():
    # an exit must not run the header's store or call again: it enters a block of its own that
    # holds what follows them, the compare made before them kept in a local (twenty-sixth
    # session; until then such a header was left alone and the program refused)
    effect = NESTED_RETURN.replace("  %cmp2 = icmp ult i32 %1, %n\n",
                                   "  %cmp2 = icmp ult i32 %1, %n\n  store i32 %1, ptr addrspace(1) %o, align 4\n")
    out = loop_exits.rewrite(effect)
    assert out is not None
    assert out.count("store i32 %1, ptr addrspace(1) %o") == effect.count("store i32 %1, ptr addrspace(1) %o")
    assert "store i1 %cmp2, ptr %vkcl.keep.0" in out
    test = out[out.index("\nvkcl.test."):]
    assert "%vkcl.keep.0.v = load i1, ptr %vkcl.keep.0" in test.split("\n\n")[0]
    assert "store i32 1, ptr %vkcl.loop.exit, align 4\n  br label %vkcl.test." in out.replace("volatile ", "")
    pure = NESTED_RETURN.replace("  %cmp2 = icmp ult i32 %1, %n\n",
                                 "  %cmp2 = icmp ult i32 %1, %n\n  %g = call spir_func i64 @_Z13get_global_idj(i32 0)\n")
    assert loop_exits.rewrite(pure) is not None
    assert "vkcl.test." not in loop_exits.rewrite(pure)  # a work-item function is no side effect


# for (r < m) { i = 0; do { if (hit) return; i++; } while (i < n); }  at -O0 (trimmed): the
# do-while loop leaves at its latch, whose increment comes before its condition.
DO_WHILE_RETURN = OUTER_HEAD.format(inner="do.body") + """do.body:
  %1 = load i32, ptr %i, align 4
  store i32 %1, ptr addrspace(1) %o, align 4
  %hit = icmp eq i32 %1, 7
  br i1 %hit, label %if.then, label %if.end

if.then:
  br label %return

if.end:
  %inc = add i32 %1, 1
  store i32 %inc, ptr %i, align 4
  %2 = load i32, ptr %i, align 4
  %cmp2 = icmp ult i32 %2, %n
  br i1 %cmp2, label %do.body, label %do.end

""" + OUTER_LATCH.format(label="do.end", value="%3")


def test_a_do_while_loop_is_left_through_its_latchs_condition():
    out = loop_exits.rewrite(DO_WHILE_RETURN)
    assert out is not None
    # the latch's increment stays where it was; its condition moved to a block of its own,
    # which the exit enters (skipping the increment, as the return did) and which tests it
    latch = out[out.index("if.end:"):]
    assert latch.split("\n")[1:4] == ["  %inc = add i32 %1, 1", "  store i32 %inc, ptr %i, align 4",
                                      "  br label %vkcl.test.9"]
    test = out[out.index("vkcl.test.9:"):]
    assert test.split("\n")[1:3] == ["  %2 = load i32, ptr %i, align 4", "  %cmp2 = icmp ult i32 %2, %n"]
    assert "br i1 %hit, label %vkcl.exit.1, label %if.end" in out
    assert "store volatile i32 1, ptr %vkcl.loop.exit, align 4\n  br label %vkcl.test.9" in out
    # the header, the body's first block, has its stores and tests no exit
    assert "%vkcl.h" not in out[out.index("do.body:"):out.index("vkcl.exit.1:")]
    # then on through the outer loop's header, as for loops with tests at their headers
    assert out.count("icmp eq i32 %vkcl.h") == 2


def test_a_condition_using_a_value_of_the_latchs_side_effects_is_kept_in_a_local():
    # `while (++i < n)`: the compare uses the increment's value, which an exit entering after
    # the store would not have: the value goes through a local of its own (left alone, and the
    # program refused, until the twenty-sixth session)
    fused = DO_WHILE_RETURN.replace("  %2 = load i32, ptr %i, align 4\n  %cmp2 = icmp ult i32 %2, %n\n",
                                    "  %cmp2 = icmp ult i32 %inc, %n\n")
    out = loop_exits.rewrite(fused)
    assert out is not None
    assert "  %inc = add i32 %1, 1\n  store i32 %inc, ptr %vkcl.keep.0\n" in out
    test = out[out.index("\nvkcl.test."):].split("\n\n")[0]
    assert "%vkcl.keep.0.v = load i32, ptr %vkcl.keep.0" in test
    assert "icmp ult i32 %vkcl.keep.0.v, %n" in test
    assert "%vkcl.keep.0 = alloca i32" in out and "store i32 zeroinitializer, ptr %vkcl.keep.0" in out
