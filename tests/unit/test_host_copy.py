"""icd/host_copy.c, the multi-threaded copy of staged transfers, compiled on its own: every byte
lands, for sizes that do not split evenly, for any thread count, with several callers at once
and in a forked child."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "host_copy.c"

/* A caller of its own: copies of its own buffers, checked; 1 on a wrong byte. */
static void *caller(void *arg)
{
    size_t n = (size_t)arg;
    unsigned char *src = malloc(n), *dst = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 7 + n);
    for (int r = 0; r < 50; r++) {
        memset(dst, 0, n);
        vkcl_host_copy(dst, src, n, 4);
        if (memcmp(dst, src, n) != 0)
            return (void *)1;
    }
    free(src);
    free(dst);
    return NULL;
}

static int concurrent(void)
{
    pthread_t t[3];
    size_t sizes[3] = {(1u << 20) + 3, 3u << 19, (5u << 18) + 4096};
    int bad = 0;
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, caller, (void *)sizes[i]);
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    return bad;
}

int main(void)
{
    size_t sizes[] = {0, 1, 4095, (256u << 10) * 3, (512u << 10) + 1, (1u << 20) - 1, (1u << 20) * 3 + 17,
                      (37u << 20) + 4097};
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
    if (concurrent()) {
        printf("FAIL concurrent callers\n");
        return 1;
    }
    pid_t pid = fork();  /* the helpers are running: the child must start its own */
    if (pid == 0)
        _exit(concurrent());
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("FAIL in a forked child\n");
        return 1;
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
