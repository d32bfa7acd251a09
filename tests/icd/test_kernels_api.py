"""Kernel objects through the ICD loader (tests/icd/c/kernels_api.c, one section per test).

create           clCreateKernel / clCreateKernelsInProgram errors, clCloneKernel (arguments
                 copied, then independent), retain/release, a kernel outliving its program
set_arg          clSetKernelArg's exact errors: ARG_INDEX, ARG_SIZE, ARG_VALUE, MEM_OBJECT; NULL
                 buffers, sub-buffers; a run with every kind of argument; unused arguments
info             every clGetKernelInfo param, attributes included
arg_info         clGetKernelArgInfo with -cl-kernel-arg-info (build or compile), without it
work_group_info  clGetKernelWorkGroupInfo params, clGetKernelSubGroupInfo
enqueue          CL_INVALID_KERNEL_ARGS for unset arguments, reqd_work_group_size at enqueue
"""
import pytest
from checks import assert_passed


@pytest.mark.parametrize("section", ["create", "set_arg", "released_arg", "info", "arg_info", "work_group_info", "enqueue"])
def test_kernels_api(c_program, section):
    assert_passed(c_program("kernels_api").run(section))
