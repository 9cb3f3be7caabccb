#!/bin/bash
# Three faults: Windows line endings (the interpreter line reads "/bin/bash\r"), no execute bit, and a library
# sourced relative to the working directory instead of the script's own folder.
set -euo pipefail
sed -i 's/\r$//' /app/bin/inventory-report.sh
sed -i 's|^source report-lib.sh$|source "$(dirname "$0")/report-lib.sh"|' /app/bin/inventory-report.sh
chmod +x /app/bin/inventory-report.sh
cd / && /app/bin/inventory-report.sh /app/services.txt
