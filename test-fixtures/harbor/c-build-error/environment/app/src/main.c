#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) verbose = 1;
  size_t cap = 64;
  int n = 0;
  double *xs = malloc(cap * sizeof *xs), x;
  while (scanf("%lf", &x) == 1) {
    if ((size_t)n == cap) xs = realloc(xs, (cap *= 2) * sizeof *xs);
    if (verbose) fprintf(stderr, "read %g\n", x);
    xs[n++] = x;
  }
  printf("n=%d mean=%.4f stddev=%.4f\n", n, mean(xs, n), stddev(xs, n));
  free(xs);
  return 0;
}
