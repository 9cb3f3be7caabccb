#!/bin/bash
# Four faults: a recipe indented with spaces, a variable defined in a header (multiple definition at link time),
# mean() defined with a type its prototype does not declare, and sqrt without -lm.
set -euo pipefail
cd /app
sed -i 's/^ \{8\}\$(CC)/\t$(CC)/' Makefile
sed -i 's/^\t\$(CC) \$(CFLAGS) -o \$@ \$(OBJS)$/& -lm/' Makefile
sed -i 's/^int verbose = 0;/extern int verbose;/' src/stats.h
sed -i 's/^#include "stats.h"$/&\n\nint verbose = 0;/' src/main.c
sed -i 's/double mean(const double \*xs, size_t n) {/double mean(const double *xs, int n) {/; s/for (size_t i = 0; i < n; i++)/for (int i = 0; i < n; i++)/' src/stats.c
make
