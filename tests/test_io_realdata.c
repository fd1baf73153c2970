/* SPDX-License-Identifier: BSD-3-Clause */
/* Every real tensor and matrix in the real-data directory ($TF_TEST_DATA,
 * else TF_SHARED_DATA) loads with the nnz and inferred shape given in its
 * README, and so does the bundled data/uber-apr14.tns.xz. The shared part is skipped (77) when the
 * directory is absent. */
#include <sys/stat.h>

#include "check.h"
#include "realdata.h"
#include "tenfold.h"

typedef struct real_file {
    const char *name;
    uint32_t order;
    uint64_t dims[5];
    uint64_t nnz;
} real_file;

static const real_file files[] = {
    {"uber-apr14.tns.xz", 4, {30, 24, 659, 1086}, 416744},
    {"nycflights13.tns.xz", 5, {365, 25, 3, 104, 16}, 318818},
    {"wordnet30-relations.tns.xz", 3, {117659, 26, 117659}, 364552},
    {"lastfm-2k-tags.tns.xz", 4, {1892, 12523, 9749, 73}, 186479},
    {"collegemsg.tns.xz", 3, {1899, 1898, 193}, 33874},
    {"enron-igraphdata.tns.xz", 3, {184, 184, 982}, 25958},
    {"ego-twitter.mtx.xz", 2, {81306, 81306}, 2684606},
    {"20news-lda-dtm.mtx.xz", 2, {18774, 61188}, 2435219},
    {"cit-hepph.mtx.xz", 2, {34546, 34546}, 421578},
    {"ca-astroph-cc1.mtx.xz", 2, {17903, 17903}, 394003},
    {"delaunay_n16.mtx.xz", 2, {65536, 65536}, 393150},
    {"email-enron.mtx.xz", 2, {36692, 36692}, 367662},
    {"ap-dtm.mtx.xz", 2, {2246, 10473}, 302031},
    {"facebook-combined.mtx.xz", 2, {4039, 4039}, 176468},
    {"cage10.mtx.xz", 2, {11397, 11397}, 150645},
};

/* Loads path and checks its shape; returns the sum of the values. */
static double check_file(const char *path, const real_file *want)
{
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_read_tensor(path, 0, &t, &info);
    CHECKF(s == TF_OK, "%s: %s", path, tf_last_error());
    if (s != TF_OK) return 0;
    int shape = t.order == want->order && t.nnz == want->nnz;
    for (uint32_t m = 0; shape && m < t.order; ++m) shape = t.dims[m] == want->dims[m];
    CHECKF(shape, "%s: order %u nnz %llu dims %llu x %llu ...", want->name, t.order,
           (unsigned long long)t.nnz, (unsigned long long)t.dims[0], (unsigned long long)t.dims[1]);
    /* the README: no duplicates, no zeros, every file xz, 1-based */
    CHECK(info.compressed == 1 && info.duplicates == 0 && info.zeros == 0 &&
          info.entries == want->nnz);
    CHECK(info.format == (want->order == 2 ? TF_FILE_MTX : TF_FILE_TNS));
    CHECK(info.index_base == 1);
    CHECK_OK(tf_tensor_validate(&t));
    double sum = 0;
    for (uint64_t k = 0; k < t.nnz; ++k) sum += t.vals[k];
    printf("  %-28s %8llu nnz  %.3f s\n", want->name, (unsigned long long)t.nnz, info.seconds);
    tf_tensor_free(&t);
    return sum;
}

int main(void)
{
    char path[1024];
    /* bundled copy: the uber April tensor sums to 564,516 pickups */
    snprintf(path, sizeof path, "%s/uber-apr14.tns.xz", TF_REPO_DATA);
    CHECK(check_file(path, &files[0]) == 564516.0);

    const char *dir = tf_test_data_dir();
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        tf_test_finish("test_io_realdata (bundled data only)");
        char why[1100];
        snprintf(why, sizeof why, "no %s", dir);
        return tf_t_fail ? 1 : tf_test_skip("test_io_realdata", why);
    }
    for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        double sum = check_file(path, &files[i]);
        if (i == 0) CHECK(sum == 564516.0);
    }
    return tf_test_finish("test_io_realdata");
}
