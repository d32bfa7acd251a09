"""icd/host_copy.c, the multi-threaded copy of staged transfers, compiled on its own: every byte
lands, for sizes that do not split evenly and for any thread count."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "host_copy.c"
int main(void)
{
    size_t sizes[] = {0, 1, 4095, (1u << 20) - 1, (1u << 20) * 3 + 17, (37u << 20) + 4097};
    int threads[] = {0, 1, 2, 3, 8, 16, 64};
    size_t max = (37u << 20) + 4097;
    unsigned char *src = malloc(max + 64), *dst = malloc(max + 64);
    for (size_t i = 0; i < max + 64; i++) src[i] = (unsigned char)(i * 131 + (i >> 13));
    for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (unsigned t = 0; t < sizeof threads / sizeof *threads; t++) {
            size_t n = sizes[s];
            memset(dst, 0xEE, max + 64);
            vkcl_host_copy(dst + 3, src + 5, n, threads[t]);  /* unaligned both sides */
            if (memcmp(dst + 3, src + 5, n) != 0 || dst[2] != 0xEE || dst[3 + n] != 0xEE) {
                printf("FAIL size %zu threads %d\n", n, threads[t]);
                return 1;
            }
        }
    printf("ok\n");
    return 0;
}
"""


def test_host_copy(tmp_path):
    src = tmp_path / "driver.c"
    src.write_text(DRIVER)
    exe = tmp_path / "driver"
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-I", str(ROOT / "icd"), "-o", str(exe), str(src), "-lpthread"],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
