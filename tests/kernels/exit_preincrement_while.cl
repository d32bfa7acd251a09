// A `while (++i < n)` loop left by a `return` out of the loop around it: the header's compare
// takes the value its store made, so loop_exits keeps that value in a local for the exits'
// test (until the twenty-sixth session such a loop was left alone and the program refused).
kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, i;
  for (uint r = 0; r < n; r++) { i = 0;
    while (++i < n) { s = s * 1103515245u + i; if ((s % 97u) == 3u) { o[2 * g] = s; return; } } }
  o[2 * g] = s; }
