import triton
import triton.language as tl
from triton import jit

KERNEL_NAME = f"fused_{1}"

@triton.autotune(configs=[], key=["n"])
@triton.jit
def _add_kernel(x_ptr, n: tl.constexpr):
    """doc"""
    pid = tl.program_id(0)
    s = 'a' + "b" % 3
    return pid

class K:
    async def method(self):
        pass
@jit
def tail(x): return x \
    + 1
