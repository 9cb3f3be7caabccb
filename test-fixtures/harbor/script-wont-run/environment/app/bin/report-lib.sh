# Shared formatting for the inventory reports.
service_line() {
  printf '%-14s %s:%s\n' "$1" "$2" "$3"
}
