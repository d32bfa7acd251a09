// A `return` from a `switch` inside two loops: the exit leaves from the switch's arm, which
// loop_exits routes like a branch's (until the twenty-sixth session the program was refused).
kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g;
  for (uint r = 0; r < n; r++) { for (uint i = 0; i < n; i++) { s = s * 1103515245u + i;
    switch (s % 7u) { case 3: o[2 * g] = s; return; case 5: s ^= 1u; break; default: break; } } }
  o[2 * g] = s; }
