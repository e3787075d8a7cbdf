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
#   phase_note "text"          a line of its own under the current phase
#   $PHASE_LOG                 the log of the latest phase
#   phase_table                the phases with their times and results
#   number VAR OPTION MIN MAX  $VAR a whole number from MIN to MAX, else one line
#                              and exit 2 (before anything is changed)
#   raise_sysctl KEY VALUE     raise a kernel setting, said with its old value
#                              (under supervise: recorded in $STATE_DIR)
#   put_back_sysctls           put back every one raised (supervise does it too)
#   supervise FUNC ARGS...     run FUNC ARGS, the script's work, in a process
#                              group of its own and exit with its status; SIGINT
#                              (Ctrl-C), SIGTERM or SIGHUP to this shell stops the
#                              whole group and exits 130, 143 or 129; either way
#                              the kernel settings raised are put back and
#                              $STATE_DIR (FUNC's temporary files) is removed
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

phase() {
  local name rc start log last verbose=0 labels=() result l
  while :; do
    case $1 in
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
  if [ $verbose -eq 1 ]; then
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
# by put_back_sysctls, which supervise runs too, whichever way the script
# ends (but SIGKILL). Each is recorded in $STATE_DIR/sysctls before it is
# written, so that a worker stopped at any point leaves its supervisor
# what to put back.
# raise_sysctl KEY VALUE: raise KEY to VALUE (its last field compared)
# unless it is as high already; one line when that is not allowed.
raise_sysctl() {
  local cur
  cur=$(sysctl -n "$1" 2>/dev/null | tr -s ' \t' '  ') || cur=
  [[ ${cur##* } =~ ^[0-9]+$ ]] || { echo "$LIB_NAME: no sysctl $1 here"; return 0; }
  [ "${cur##* }" -ge "${2##* }" ] 2>/dev/null && return 0
  printf '%s\t%s\n' "$1" "$cur" >>"$STATE_DIR/sysctls"
  if sysctl -q -w "$1=$2" 2>/dev/null; then
    echo "$LIB_NAME: set $1 = $2 (was $cur; put back at the end)"
  else
    echo "$LIB_NAME: cannot raise $1 (it is $cur) here"
  fi
}
# put_back_sysctls: each one recorded that no longer has its old value,
# the last raised first
put_back_sysctls() {
  local f=$STATE_DIR/sysctls
  [ -s "$f" ] || return 0
  tac "$f" | while IFS=$'\t' read -r key old; do
    [ "$(sysctl -n "$key" 2>/dev/null | tr -s ' \t' '  ')" != "$old" ] || continue
    if sysctl -q -w "$key=$old" 2>/dev/null; then
      echo "$LIB_NAME: put back $key = $old"
    else
      echo "$LIB_NAME: could not put back $key: by hand, sysctl -w '$key=$old'" >&2
    fi
  done
  : >"$f"
}

# supervise FUNC ARGS...: the script's work, FUNC ARGS, in a process group
# of its own (the worker), this shell waiting for it with traps on SIGINT,
# SIGTERM and SIGHUP; on one, the whole group gets SIGTERM (SIGKILL 5 s
# later) and the script exits 130, 143 or 129; else with FUNC's status.
# Either way the kernel settings raised are put back and $STATE_DIR (made
# here, for FUNC's temporary files) is removed. Call it last: it exits.
#
# Why two shells: bash (5.2.15 at least) runs a pending trap when it starts
# to parse a $( ) it expands, and parses the trap's command in that
# parser's state: "trap: line 2: unexpected EOF while looking for matching
# \`)'", the trap not run, the script going on or ending 2 (set -e). A
# signal that comes while one $( ) runs meets the next of the same command:
# x="$(a)$(b)" failed at 141 of 200 SIGTERMs, whatever the trap's command
# (a function's name, an assignment). So the shell with the traps expands
# no $( ) from the first trap to the clean-up, which ignores the signals
# (a second one cannot cut it short); the worker has no trap, and SIGTERM
# ends it at once wherever it is. The worker's standard input is
# /dev/null: from a process group that is not the terminal's, a read of
# it would stop the group (so scripts/deps.sh, whose sudo may ask for a
# password, runs before, in this shell); its writes to the terminal go
# on under stty tostop (SIGTTOU ignored).
_sup_pid='' _sup_sig=''
_sup_stop() { # the traps' action: the exit status, and the group stopped
  _sup_sig=${_sup_sig:-$1}
  [ -z "$_sup_pid" ] || _sup_kill TERM
}
_sup_kill() { # SIGNAL to the group, and SIGCONT: a stopped member ends too
  kill -"$1" -- "-$_sup_pid" 2>/dev/null || true
  kill -CONT -- "-$_sup_pid" 2>/dev/null || true
}
_sup_live() { pgrep -g "$_sup_pid" -r D,R,S,T,t >/dev/null; } # a member runs
supervise() {
  local rc=0 i
  trap '_sup_stop 130' INT
  trap '_sup_stop 143' TERM
  trap '_sup_stop 129' HUP
  STATE_DIR='' # (no mktemp: its name would come through a $( ))
  for i in 1 2 3 4 5 6 7 8 9 10; do
    STATE_DIR=${TMPDIR:-/tmp}/twheel-$LIB_NAME.$$.$RANDOM$i
    mkdir -m 700 "$STATE_DIR" 2>/dev/null && break
    STATE_DIR=''
  done
  if [ -z "$STATE_DIR" ]; then
    trap '' INT TERM HUP
    echo "$LIB_NAME: cannot make a directory in ${TMPDIR:-/tmp}" >&2
    exit 1
  fi
  if [ -z "$_sup_sig" ]; then
    set -m
    # SIGTTOU ignored: a terminal with tostop stopped the worker's group,
    # not the terminal's, at its first line
    { trap '' TTOU; "$@"; } </dev/null &
    _sup_pid=$!
    set +m
    [ -z "$_sup_sig" ] || _sup_stop "$_sup_sig" # it came before $! was known
    wait "$_sup_pid" || rc=$?
  fi
  # The clean-up runs to its end: a second signal ignored, and a write to
  # a terminal gone (SIGHUP) or a pipe closed (SIGPIPE) fails, nothing more
  trap '' INT TERM HUP PIPE
  set +e
  if [ -n "$_sup_pid" ]; then
    # what is left of the group: all of it after a signal, else nothing.
    # Gone once no member runs: one that exited holds no port or file,
    # whenever its new parent reaps it (here: 0.5 to 1.4 s later)
    _sup_kill TERM
    wait "$_sup_pid" 2>/dev/null || true
    for i in $(seq 100); do _sup_live || break; sleep 0.05; done
    _sup_kill KILL
    for i in $(seq 20); do _sup_live || break; sleep 0.05; done
  fi
  put_back_sysctls
  rm -rf "$STATE_DIR"
  exit "${_sup_sig:-$rc}"
}
