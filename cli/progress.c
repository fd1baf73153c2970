/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress note (progress.h): the callback records, a helper thread draws. */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "verbosity.h"

#define SHOW_AFTER 1.0  /* seconds an operation runs before the line appears */
#define TTY_PERIOD 0.25 /* seconds between redraws on a terminal             */
#define LOG_PERIOD 1.0  /* elsewhere (-v)                                    */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int started;           /* the drawing thread runs                         */
    int active;            /* an operation is under way                       */
    double t0, last;       /* its start, the last redraw                      */
    const char *label, *step;
    uint64_t done, total;
    int drawn;             /* the line is on stderr; its width                */
    int width;
    int tty;
} pr = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* "reading x.tns: 43% (1.2 GB of 2.8 GB), 3.1 s"; lock held. */
static void draw(double now)
{
    char line[512], a[32], b[32];
    int n = snprintf(line, sizeof line, "%s: %s", pr.label, pr.step);
    if (n < 0) return;
    if (pr.total && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " %.0f%% (%s of %s)",
                      100.0 * (double)(pr.done < pr.total ? pr.done : pr.total) / (double)pr.total,
                      cli_bytes(a, sizeof a, (double)pr.done), cli_bytes(b, sizeof b, (double)pr.total));
    else if (pr.done && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s", cli_bytes(a, sizeof a, (double)pr.done));
    if ((size_t)n < sizeof line) n += snprintf(line + n, sizeof line - (size_t)n, ", %.1f s", now - pr.t0);
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
    /* pad over what a longer line before left */
    fprintf(stderr, "\r%s%*s", line, pr.width > n ? pr.width - n : 0, "");
    fflush(stderr);
    if (n > pr.width) pr.width = n;
    pr.drawn = 1;
    pr.last = now;
}

/* Ends the line: erased on a terminal, else kept and ended; lock held. */
static void end_line(void)
{
    if (!pr.drawn) return;
    if (pr.tty) fprintf(stderr, "\r%*s\r", pr.width, "");
    else fputc('\n', stderr);
    fflush(stderr);
    pr.drawn = 0;
    pr.width = 0;
}

static void *drawer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pr.lock);
    for (;;) {
        while (!pr.active) pthread_cond_wait(&pr.wake, &pr.lock);
        const double now = tf_wtime();
        if (now - pr.t0 >= SHOW_AFTER && now - pr.last >= (pr.tty ? TTY_PERIOD : LOG_PERIOD) - 1e-3) draw(now);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec += 1; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&pr.wake, &pr.lock, &ts);
    }
    return NULL;
}

void cli_progress(const tf_progress *p, void *user)
{
    pthread_mutex_lock(&pr.lock);
    if (p->finished) {
        if (pr.active && pr.drawn && !pr.tty) draw(tf_wtime()); /* the last state stays in the log */
        end_line();
        pr.active = 0;
        pthread_mutex_unlock(&pr.lock);
        return;
    }
    if (!pr.active) { /* a new operation */
        pr.active = 1;
        pr.t0 = tf_wtime();
        pr.last = 0;
        pr.label = user ? (const char *)user : "tenfold";
        pr.tty = isatty(2);
        if (!pr.started) {
            pthread_t t;
            pr.started = pthread_create(&t, NULL, drawer, NULL) == 0;
            if (pr.started) pthread_detach(t);
        }
        pthread_cond_signal(&pr.wake);
    }
    pr.step = p->step;
    pr.done = p->done;
    pr.total = p->total;
    pthread_mutex_unlock(&pr.lock);
}

tf_progress_fn cli_progress_fn(void)
{
    if (cli_quiet() || !(cli_verbose() || isatty(2))) return NULL;
    return cli_progress;
}
