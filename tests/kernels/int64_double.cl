// 64-bit integers and doubles.
kernel void int64_double(global long *l, global double *d, ulong mul, double add)
{
    size_t i = get_global_id(0);
    l[i] = l[i] * (long)mul + (long)i;
    d[i] = d[i] * 0.5 + add;
}
