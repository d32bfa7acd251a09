// A `return` out of three nested loops (tests/unit/test_spirv_nesting.py, tests/icd/test_long_loops.py).
kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, t = 0;
  for (uint r = 0; r < m; r++)
    for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 82664u); t++;
      for (uint j = 0; j < 3u; j++) { s = s * 1103515245u + (j ^ 36499u); t++;
        if ((s % 211u) == 191u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; } }
      if ((s % 13u) == 7u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; } }
  o[2 * g] = s; o[2 * g + 1] = t; }
