// Compiles with clang, then aborts clspv (pyclspv 0.0.1): a pointer loaded from global memory.
// clspv reports "Invalid bitcast ... LLVM ERROR: Broken module found, compilation aborted!" and
// calls abort(), which must kill only the compiler worker.
kernel void crash(global uintptr_t *p)
{
    global int *global *pp = (global int *global *)p[0];
    **pp = 1;
}
