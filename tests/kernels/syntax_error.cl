// Does not compile: an undeclared identifier and a missing semicolon.
kernel void broken(global int *a)
{
    a[get_global_id(0)] = undeclared_thing
}
