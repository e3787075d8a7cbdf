# scripts/lib.sh - what the scripts share (sourced, not run): phases that
# print their name, send their noise to a log file and time themselves, and
# the table of phases at the end.
#
#   phase "name" cmd args...   run cmd with its output in $LOG_DIR/<n>-<slug>.log;
#                              prints "[n] name ... ok (12 s)" or, on failure,
#                              the log's last lines and its path; returns cmd's status
#   phase -v "name" cmd...     the same with the output on the terminal (indented;
#                              on failure the log's path only: its lines were shown)
#   phase -l RC=LABEL ...      exit status RC is LABEL, not ok or FAILED (e.g.
#                              -l 0=PASS -l 1=FAIL -l 3=INVALID: a run's verdict);
#                              -l and -v combine
#   phase -a -v ...            the command in the background, waited for with
#                              wait: the script's traps run as soon as a signal
#                              comes, not once the command has ended (bash runs
#                              none while a command runs in the foreground); the
#                              command starts with SIGINT ignored (as every
#                              background command of a script), and the trap
#                              stops it with phase_stop
#   phase_stop                 SIGTERM to the command of a phase -a that runs,
#                              and wait for it to end (SIGKILL after 5 s)
#   phase_note "text"          a line of its own under the current phase
#   $PHASE_LOG                 the log of the latest phase
#   phase_table                the phases with their times and results
#   number VAR OPTION MIN MAX  $VAR a whole number from MIN to MAX, else one line
#                              and exit 2 (before anything is changed)
#   raise_sysctl KEY VALUE     raise a kernel setting, said with its old value
#   put_back_sysctls           put back every one raised (call it on EXIT)
#
# LOG_DIR must be set by the caller before the first phase (a directory;
# created here). Messages start with "$LIB_NAME: " (the script's name). The times
# of the last run are kept in $LOG_DIR/../phase-times, and each phase says
# how long it took then ("last run 12 s"), an estimate that follows the
# machine.

_phase_n=0
_phase_names=()
_phase_secs=()
_phase_results=()
_phase_rcs=()
_phase_t0=$SECONDS

_slug() { tr -c 'A-Za-z0-9\n' '-' <<<"$1" | tr -s '-' | sed 's/^-//; s/-$//' | tr 'A-Z' 'a-z'; }

_phase_last() { # name -> the seconds it took in the last run, or nothing
  [ -f "$LOG_DIR/../phase-times" ] || return 0
  awk -F '\t' -v n="$1" '$1 == n { t = $2 } END { if (t != "") print t }' \
    "$LOG_DIR/../phase-times"
}

_phase_pidfile=''
phase() {
  local name rc start log last verbose=0 async=0 labels=() result l
  while :; do
    case $1 in
      -a) async=1; shift ;;
      -v) verbose=1; shift ;;
      -l) labels+=("$2"); shift 2 ;;
      *) break ;;
    esac
  done
  name=$1
  shift
  _phase_n=$((_phase_n + 1))
  mkdir -p "$LOG_DIR"
  log="$LOG_DIR/$(printf '%02d' $_phase_n)-$(_slug "$name").log"
  PHASE_LOG=$log
  last=$(_phase_last "$name")
  printf '[%d] %s%s' "$_phase_n" "$name" "${last:+ (last run ${last} s)}"
  [ $verbose -eq 1 ] && echo || printf ' ... '
  start=$SECONDS
  set +e
  if [ $async -eq 1 ]; then
    _phase_pidfile=$log.pid
    rm -f "$log.pid" "$log.rc"
    { "$@" & echo $! >"$log.pid"; wait $!; echo $? >"$log.rc"; } 2>&1 | tee "$log" | sed 's/^/    /' &
    wait $! # its output's end (a trap runs as soon as a signal comes)
    rc=$(cat "$log.rc" 2>/dev/null) || rc=1
    rm -f "$log.pid" "$log.rc"
    _phase_pidfile=''
    printf '[%d] %s ... ' "$_phase_n" "$name"
  elif [ $verbose -eq 1 ]; then
    "$@" 2>&1 | tee "$log" | sed 's/^/    /'
    rc=${PIPESTATUS[0]}
    printf '[%d] %s ... ' "$_phase_n" "$name"
  else
    "$@" >"$log" 2>&1
    rc=$?
  fi
  set -e
  _phase_names+=("$name")
  _phase_secs+=($((SECONDS - start)))
  _phase_rcs+=("$rc")
  result=FAILED
  [ $rc -ne 0 ] || result=ok
  for l in "${labels[@]}"; do [ "${l%%=*}" != "$rc" ] || result=${l#*=}; done
  if [ $rc -eq 0 ]; then
    _phase_results+=("$result")
    echo "$result ($((SECONDS - start)) s)"
  elif [ $result != FAILED ]; then
    _phase_results+=("$result")
    echo "$result ($((SECONDS - start)) s)"
    [ $verbose -eq 1 ] || echo "---- log: $log ----"
  else
    _phase_results+=("FAILED")
    echo "FAILED ($((SECONDS - start)) s, exit $rc)"
    if [ $verbose -eq 0 ]; then
      echo "---- last lines of $log ----"
      tail -40 "$log"
    fi
    echo "---- full log: $log ----"
  fi
  return $rc
}

phase_note() { echo "    $*"; }

phase_stop() {
  local pid='' i
  [ -n "$_phase_pidfile" ] || return 0
  for i in $(seq 20); do # the command may have just started
    pid=$(cat "$_phase_pidfile" 2>/dev/null) && [ -n "$pid" ] && break
    sleep 0.05
  done
  _phase_pidfile=''
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null || true
}

phase_table() {
  local i
  echo
  printf '%-4s %-56s %8s  %s\n' "" "phase" "seconds" "result"
  for i in "${!_phase_names[@]}"; do
    printf '%-4s %-56s %8d  %s\n' "[$((i + 1))]" "${_phase_names[$i]}" "${_phase_secs[$i]}" \
      "${_phase_results[$i]}"
  done
  printf '%-4s %-56s %8d\n' "" "total" $((SECONDS - _phase_t0))
  echo "logs: $LOG_DIR"
  # remember the times of the phases that passed, keeping the others'
  {
    [ -f "$LOG_DIR/../phase-times" ] && cat "$LOG_DIR/../phase-times"
    for i in "${!_phase_names[@]}"; do
      [ "${_phase_rcs[$i]}" != 0 ] || printf '%s\t%s\n' "${_phase_names[$i]}" "${_phase_secs[$i]}"
    done
  } | awk -F '\t' '!($1 in t) { k[++n] = $1 } { t[$1] = $2 }
                   END { for (i = 1; i <= n; i++) print k[i] "\t" t[k[i]] }' \
    >"$LOG_DIR/../phase-times.new" && mv "$LOG_DIR/../phase-times.new" "$LOG_DIR/../phase-times"
}

LIB_NAME=${LIB_NAME:-$(basename "$0" .sh)}

# number VAR OPTION MIN MAX: $VAR a whole number from MIN to MAX, checked
# as text first (no shell arithmetic overflows) and with its leading zeros
# dropped (else the shell reads 010 as octal); else one line and exit 2
number() {
  local v=${!1}
  if ! [[ $v =~ ^[0-9]+$ ]] || { v=${v#"${v%%[!0]*}"}; v=${v:-0}; [ ${#v} -gt 15 ]; } ||
     [ "$v" -lt "$3" ] || [ "$v" -gt "$4" ]; then
    echo "$LIB_NAME: $2 needs a whole number from $3 to $4, not '${!1}'" >&2
    exit 2
  fi
  printf -v "$1" '%s' "$v"
}

# Kernel settings: each one raised is said with its old value and put back
# by put_back_sysctls (the caller's EXIT trap: on every way out but SIGKILL).
_sysctl_keys=() _sysctl_old=()
# raise_sysctl KEY VALUE: raise KEY to VALUE (its last field compared)
# unless it is as high already; one line when that is not allowed.
raise_sysctl() {
  local cur
  cur=$(sysctl -n "$1" 2>/dev/null | tr -s ' \t' '  ') || cur=
  [[ ${cur##* } =~ ^[0-9]+$ ]] || { echo "$LIB_NAME: no sysctl $1 here"; return 0; }
  [ "${cur##* }" -ge "${2##* }" ] 2>/dev/null && return 0
  if sysctl -q -w "$1=$2" 2>/dev/null; then
    _sysctl_keys+=("$1") _sysctl_old+=("$cur")
    echo "$LIB_NAME: set $1 = $2 (was $cur; put back at the end)"
  else
    echo "$LIB_NAME: cannot raise $1 (it is $cur) here"
  fi
}
put_back_sysctls() {
  local i
  for ((i = ${#_sysctl_keys[@]} - 1; i >= 0; i--)); do
    if sysctl -q -w "${_sysctl_keys[i]}=${_sysctl_old[i]}" 2>/dev/null; then
      echo "$LIB_NAME: put back ${_sysctl_keys[i]} = ${_sysctl_old[i]}"
    else
      echo "$LIB_NAME: could not put back ${_sysctl_keys[i]}: by hand," \
        "sysctl -w '${_sysctl_keys[i]}=${_sysctl_old[i]}'" >&2
    fi
  done
  _sysctl_keys=() _sysctl_old=()
}
