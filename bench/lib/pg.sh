# shellcheck shell=bash
# A throwaway PostgreSQL cluster on loopback for bench scripts; source it after common.sh.
#   pg_start DB...  initdb in a temp dir (trust auth, fsync on; as root it runs as the postgres
#                   user), creates the databases, starts the server on a free port. Sets PG_BIN,
#                   PG_DIR, PG_PORT, PG_PID, PG_VERSION, and appends what it ran to COMMANDS.
#                   PG_EXTRA: more server options (`-c name=value ...`).
#   pg_stop         stops it and removes its directory (KEEP_WORK=1 copies its log to WORK).
#   pg_url DB       the database's URL.

PG_DIR=
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_start() {
  local db creates='' attempt
  PG_BIN=${TOOLHOST_PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
  [ -x "$PG_BIN/initdb" ] || die "PostgreSQL server binaries not found (install Debian's postgresql, or set TOOLHOST_PG_BINDIR)"
  PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/toolhost-bench-pg.XXXXXX")
  [ "$(id -u)" = 0 ] && chown postgres: "$PG_DIR"
  log "PostgreSQL: initdb in $PG_DIR"
  as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >"$WORK/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$WORK/initdb.log")"
  for db in "$@"; do creates+="CREATE DATABASE $db;\\n"; done
  # shellcheck disable=SC2059 # the format is ours: CREATE DATABASE lines
  printf "$creates" | as_pg "$PG_BIN/postgres" --single -F -D "$PG_DIR/data" postgres >"$WORK/createdb.log" 2>&1 || die "create database failed"
  for attempt in 1 2 3 4 5; do
    PG_PORT=$(free_port)
    # shellcheck disable=SC2086 # PG_EXTRA is a list of options
    if as_pg "$PG_BIN/pg_ctl" start -w -t 60 -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
      -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=on ${PG_EXTRA:-}" >/dev/null 2>&1; then break; fi
    [ "$attempt" = 5 ] && die "PostgreSQL did not start: $(tail -5 "$PG_DIR/server.log")"
  done
  PG_PID=$(head -1 "$PG_DIR/data/postmaster.pid")
  PG_VERSION=$(psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -X -A -t -c "SHOW server_version" 2>/dev/null | awk '{print $1}')
  COMMANDS+=(
    "initdb -D \$PG_DIR/data -A trust -U postgres -E UTF8 --locale=C --no-sync   # as the postgres user when root"
    "printf '$creates' | postgres --single -F -D \$PG_DIR/data postgres"
    "pg_ctl start -w -D \$PG_DIR/data -o '-p $PG_PORT -k \$PG_DIR -c listen_addresses=127.0.0.1 -c fsync=on'"
  )
  log "PostgreSQL $PG_VERSION on 127.0.0.1:$PG_PORT (pid $PG_PID)"
}

pg_url() { echo "postgres://postgres@127.0.0.1:$PG_PORT/$1"; }

pg_stop() {
  if [ -n "$PG_DIR" ] && [ -d "$PG_DIR" ]; then
    [ -f "$PG_DIR/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" stop -w -t 30 -m fast -D "$PG_DIR/data" >/dev/null 2>&1 || true
    [ "${KEEP_WORK:-0}" = 1 ] && [ -d "$WORK" ] && cp "$PG_DIR/server.log" "$WORK/postgresql.log" 2>/dev/null
    rm -rf "$PG_DIR"
  fi
}
