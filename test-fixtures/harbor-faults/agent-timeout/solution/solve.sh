#!/bin/bash
# Sleeps past the task's 5 s agent timeout before writing the marker, so a timed-out oracle scores 0.
sleep 30
echo done >/app/done.txt
