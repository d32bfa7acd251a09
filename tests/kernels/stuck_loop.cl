// A do-while loop left by a `return`, holding a `for` loop left by one too: clspv's structurizer
// loses a loop of it unless its exits go through the loops' tests (loop_exits); under llvmpipe's
// forced unrolling a first form of that routing made a loop that spins on the exit code
// (spirv_single_pass_loops.stuck_loops; tests/unit/test_spirv_single_pass_loops.py,
// tests/icd/test_structurized_loops.py).
kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, t = 0; uint i1 = 0;
  do { i1++; s = s * 1103515245u + (i1 ^ 25861u); t++;
    if ((s % 13u) == 9u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; }
#pragma nounroll
    for (uint i2 = 0; i2 < (g % 5u) + 1u; i2++) { s = s * 1103515245u + (i2 ^ 59248u); t++;
      if ((s % 7u) == 2u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; } } } while (i1 < n);
  o[2 * g] = s; o[2 * g + 1] = t; }
