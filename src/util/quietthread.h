/* A helper thread that takes no signal. */
#ifndef HBG_UTIL_QUIETTHREAD_H
#define HBG_UTIL_QUIETTHREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create with every signal blocked in the new thread: a signal
 * sent to the process is then taken by the threads that run the program's
 * own code, whose handlers expect to run there (the CLI's output file
 * removes its temporary in one, and frees its name on the same thread).
 * A reader or writer thread has nothing to do with a signal. */
static inline int hbg__thread_start_quiet(pthread_t *th, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(th, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

#endif
