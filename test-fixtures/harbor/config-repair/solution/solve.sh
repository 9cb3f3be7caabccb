#!/bin/bash
# Strict JSON (no comments, no trailing comma), the right types, the key names relayd knows, and "debug" as the
# most detailed level.
set -euo pipefail
cat >/app/config/relay.json <<'JSON'
{
  "listen_port": 8443,
  "log_level": "debug",
  "timeout_ms": 2500,
  "upstreams": [
    {"name": "primary", "url": "https://10.0.0.5:9000", "weight": 3},
    {"name": "fallback", "url": "https://10.0.0.6:9000", "weight": 1}
  ]
}
JSON
python3 /app/bin/relayd --check
