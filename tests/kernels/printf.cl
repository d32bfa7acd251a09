// printf with several argument types.
kernel void say_hello(global const int *values, float f)
{
    size_t i = get_global_id(0);
    if (i == 0)
        printf("hello %d %f\n", values[0], f);
    printf("item %u of %u: %s\n", (uint)i, (uint)get_global_size(0), "ok");
}
