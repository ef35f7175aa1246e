// Counts a process's heap allocations for scripts/bench-server (Linux, glibc).
//
// Loaded with LD_PRELOAD into `sesame serve`, it counts every call of malloc, calloc, realloc, posix_memalign,
// aligned_alloc and memalign (each passes on to glibc's own __libc_* function; free is not counted). On SIGUSR2 it
// writes the count so far, as decimal digits and a newline, over the file named by SESAME_BENCH_ALLOC_FILE; the
// script reads it before and after a wrk run and divides the difference by the sign-ins completed.
//
// Build: cc -O2 -shared -fPIC -o bench-alloc-count.so scripts/bench-alloc-count.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_ulong allocations;
static char path[4096];

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count();
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

// Async-signal-safe: open, write and close only, digits formatted by hand.
static void report(int signal_number) {
    (void)signal_number;
    int saved = errno;
    char digits[32];
    int at = sizeof digits;
    digits[--at] = '\n';
    unsigned long value = atomic_load_explicit(&allocations, memory_order_relaxed);
    do {
        digits[--at] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0 && at > 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        ssize_t ignored = write(fd, digits + at, sizeof digits - at);
        (void)ignored;
        close(fd);
    }
    errno = saved;
}

__attribute__((constructor)) static void install(void) {
    const char *name = getenv("SESAME_BENCH_ALLOC_FILE");
    if (name == NULL) return;
    size_t length = 0;
    while (name[length] != '\0' && length + 1 < sizeof path) {
        path[length] = name[length];
        length++;
    }
    path[length] = '\0';
    struct sigaction action = {0};
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR2, &action, NULL);
}
