/* What the workers of a group and the thread controlling its phases wait on: barriers whose
 * size can shrink if a thread fails to start, and the count of workers whose work() returned in
 * the current phase. */
#include <errno.h>
#include <time.h>

#include "harness_sync.h"

#include "harness_signals.h"

void hbi_barrier_init(hbi_barrier *b, int count)
{
    pthread_mutex_init(&b->m, NULL);
    pthread_cond_init(&b->c, NULL);
    b->count = count;
    b->waiting = 0;
    b->gen = 0;
}

void hbi_barrier_destroy(hbi_barrier *b)
{
    pthread_mutex_destroy(&b->m);
    pthread_cond_destroy(&b->c);
}

void hbi_barrier_wait(hbi_barrier *b)
{
    pthread_mutex_lock(&b->m);
    if (++b->waiting >= b->count) {
        b->waiting = 0;
        b->gen++;
        pthread_cond_broadcast(&b->c);
    } else {
        unsigned gen = b->gen;
        while (gen == b->gen)
            pthread_cond_wait(&b->c, &b->m);
    }
    pthread_mutex_unlock(&b->m);
}

void hbi_barrier_resize(hbi_barrier *b, int count)
{
    pthread_mutex_lock(&b->m);
    b->count = count;
    pthread_mutex_unlock(&b->m);
}

void hbi_wait_finished(group *g, int64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / NS), (long)(deadline % NS)};
    pthread_mutex_lock(&g->fin_lock);
    while (g->finished < g->started && !hbi_signal())
        if (pthread_cond_timedwait(&g->fin_cond, &g->fin_lock, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&g->fin_lock);
}

int hbi_all_finished(group *g)
{
    pthread_mutex_lock(&g->fin_lock);
    int all = g->finished >= g->started;
    pthread_mutex_unlock(&g->fin_lock);
    return all;
}

void hbi_reset_finished(group *g)
{
    pthread_mutex_lock(&g->fin_lock);
    g->finished = 0;
    pthread_mutex_unlock(&g->fin_lock);
}
