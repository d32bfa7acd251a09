// A do-while loop whose latch tests `++i < n`, left by a `return` out of the loop around it:
// the exits enter the latch's test after its store, the value kept in a local (loop_exits; until
// the twenty-sixth session the program was refused).
kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, i;
  for (uint r = 0; r < n; r++) { i = 0;
    do { s = s * 1103515245u + i; if ((s % 97u) == 3u) { o[2 * g] = s; return; } } while (++i < n); }
  o[2 * g] = s; }
