// Several kernels in one program sharing a helper function and a __constant table.
__constant int weights[4] = {1, 2, 3, 4};

static int weigh(int x, int i) { return x * weights[i & 3]; }

kernel void first(global int *a) { size_t i = get_global_id(0); a[i] = weigh(a[i], (int)i); }

kernel void second(global int *a, global int *b, int k) { size_t i = get_global_id(0); b[i] = weigh(a[i], k); }

kernel void third(global float2 *v) { size_t i = get_global_id(0); v[i] = v[i].yx; }
