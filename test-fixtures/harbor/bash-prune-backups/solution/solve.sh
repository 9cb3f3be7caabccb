#!/bin/bash
# `tail -n +K` starts at line K, so it kept K-1 archives; xargs split names on spaces. Fix both.
set -euo pipefail
sed -i 's/tail -n +\$keep | xargs -r rm -f --/tail -n +$((keep + 1)) | xargs -r -d '"'"'\\n'"'"' rm -f --/' /app/prune-backups.sh
tail -n 1 /app/prune-backups.sh
