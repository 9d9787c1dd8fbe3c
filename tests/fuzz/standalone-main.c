/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs a fuzz target without libFuzzer: every file of the seed corpus, then
 * deterministic mutations of each, so a normal build still exercises it.
 * The mutations share one budget: a corpus that tools/fuzz-long grew to
 * hundreds of inputs is replayed whole, with fewer mutations of each, so
 * the replay stays a unit test's length (2000 of each of 401 screen-args
 * inputs took over 120 s under the sanitizers). */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MUTATIONS_PER_SEED 2000
#define MUTATION_BUDGET 30000
#define MUTATIONS_MIN 8
#define QS_FUZZ_MAX_INPUT (1u << 20)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    /* xorshift64*: fixed seed, so a failure replays identically. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static int mutations_per_seed = MUTATIONS_PER_SEED;

static void run_mutations(const uint8_t *seed, size_t len)
{
    uint8_t *buf = malloc(QS_FUZZ_MAX_INPUT);

    if (!buf) {
        abort();
    }
    for (int i = 0; i < mutations_per_seed; i++) {
        size_t n = len;

        memcpy(buf, seed, len);
        switch (next_random() % 4) {
        case 0: /* flip bytes */
            for (int k = 0; n && k < 4; k++) {
                buf[next_random() % n] ^= (uint8_t)next_random();
            }
            break;
        case 1: /* truncate */
            n = n ? next_random() % n : 0;
            break;
        case 2: /* extend with noise */
            for (int k = 0; k < 64 && n < QS_FUZZ_MAX_INPUT; k++) {
                buf[n++] = (uint8_t)next_random();
            }
            break;
        default: /* overwrite a 32-bit field with an extreme value */
            if (n >= 4) {
                static const uint32_t extremes[] = {
                    0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xffff, 0x10000,
                };
                uint32_t v = extremes[next_random() % 7];
                memcpy(buf + next_random() % (n - 3), &v, 4);
            }
            break;
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    free(buf);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t len;

    if (!f) {
        fprintf(stderr, "cannot open '%s'\n", path);
        return 1;
    }
    buf = malloc(QS_FUZZ_MAX_INPUT);
    if (!buf) {
        abort();
    }
    len = fread(buf, 1, QS_FUZZ_MAX_INPUT, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    run_mutations(buf, len);
    free(buf);
    return 0;
}

/* Runs (or, with run == 0, counts) every seed named on the command line:
 * files, and the files of directories. Returns the count, -1 on an error. */
static int for_each_seed(int argc, char **argv, int run)
{
    int seeds = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;

        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;

            while (d && (e = readdir(d))) {
                char path[4096];

                if (e->d_name[0] == '.') {
                    continue;
                }
                snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                if (run && run_file(path)) {
                    closedir(d);
                    return -1;
                }
                seeds++;
            }
            if (d) {
                closedir(d);
            }
        } else {
            if (run && run_file(argv[i])) {
                return -1;
            }
            seeds++;
        }
    }
    return seeds;
}

int main(int argc, char **argv)
{
    int seeds = for_each_seed(argc, argv, 0);

    if (seeds <= 0) {
        fprintf(stderr, "no seed inputs: a fuzz target needs a corpus\n");
        return 1;
    }
    mutations_per_seed = MUTATION_BUDGET / seeds;
    if (mutations_per_seed > MUTATIONS_PER_SEED) {
        mutations_per_seed = MUTATIONS_PER_SEED;
    } else if (mutations_per_seed < MUTATIONS_MIN) {
        mutations_per_seed = MUTATIONS_MIN;
    }
    if (for_each_seed(argc, argv, 1) < 0) {
        return 1;
    }
    printf("%d seeds, %d inputs each, no crash\n", seeds, mutations_per_seed + 1);
    return 0;
}
