#ifndef STATS_H
#define STATS_H

#include <stddef.h>

/* Set by -v: print every number as it is read. */
int verbose = 0;

double mean(const double *xs, int n);
double stddev(const double *xs, int n);

#endif
