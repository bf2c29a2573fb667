/* Linux's epoll for the load test's clients (Glibc's Swift module does not export it). */
#ifndef CEPOLL_H
#define CEPOLL_H
#include <sys/epoll.h>
#endif
