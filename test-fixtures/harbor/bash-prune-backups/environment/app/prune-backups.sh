#!/bin/bash
# prune-backups.sh DIR [KEEP]: keeps the KEEP newest backup archives in DIR and deletes the older ones.
# An archive is named NAME_YYYY-MM-DD.tar.gz (NAME may contain spaces, never an underscore); the newest is the
# one with the latest date in its name. Other files in DIR are left alone.
set -eu
dir=${1:?usage: prune-backups.sh DIR [KEEP]}
keep=${2:-5}
cd "$dir"
ls -1 -- *_????-??-??.tar.gz 2>/dev/null | sort -t_ -k2,2r | tail -n +$keep | xargs -r rm -f --
