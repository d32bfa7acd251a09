// A loop that leaves by two exits: a flag set at the break, then a return on the flag. clspv's
// structurizer once made its back-edge never taken (vkcl/compiler/spirv_single_pass_loops.py).
kernel void k(global uint *o, global uint *rec, uint n, uint stop) {
  uint s = get_global_id(0); uint c = 0; bool brk = false;
  for (uint i = 0; i < n; i++) {
    c++; if (c >= stop) { brk = true; break; }
    s = s * 1103515245u + (i ^ 12345u);
  }
  if (brk) { rec[get_global_id(0)] = s; return; }
  o[get_global_id(0)] = s;
}
