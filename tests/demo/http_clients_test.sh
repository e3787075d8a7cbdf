#!/usr/bin/env bash
# tests/demo/http_clients_test.sh - an idle-timeout server in --http mode
# (20 s idle timeout) against real HTTP clients: the persistence rules of
# RFC 9112 section 9, end to end.
#
# usage: http_clients_test.sh SERVER NAME
#
# Asserts:
#  - ab (an HTTP/1.0 client that reads each reply to its close), 2,000
#    requests 10 at a time: all complete in well under the 20 s one idle
#    timeout would take (the server closes after each reply);
#  - ab -k (HTTP/1.0, "Connection: Keep-Alive"): all 2,000 on kept-alive
#    connections, a few dozen at most, well under 20 s;
#  - curl --http1.0, and curl with "Connection: close": the reply says
#    "Connection: close" and curl's next request needs a new connection;
#    plain curl (HTTP/1.1) gets "Connection: keep-alive" and reuses it;
#    curl -d, with a Content-Length or a chunked body, gets "Connection:
#    close", and never a reply it did not ask for (the body is not read
#    as a request); curl -X GET -d a 413 or, chunked, a 411 (the server
#    reads no bodies: RFC 9110 15.5.14, 15.5.12), and with "Expect:
#    100-continue" its 413 without sending the body (RFC 9110 10.1.1);
#  - methods (RFC 9110 9): curl -d (POST), curl -T (PUT, no byte of its
#    body sent) and curl -X DELETE, TRACE, get, head get a 501 (not
#    implemented: 9.1; methods are case-sensitive); curl -I (HEAD) and
#    -X GET a 204; raw OPTIONS to "*", "/" and an absolute URI a 200 with
#    "Allow: GET, HEAD, OPTIONS" and "Content-Length: 0" (9.3.7) and the
#    close; raw PUT, PATCH, FOO and Get, and POST after GET and HEAD, a
#    501 and the close, nothing after it
#    answered; a method with a byte no token holds a 400; python's
#    http.client 204s on one kept connection for GET and HEAD, a 200 with
#    that Allow closing it for OPTIONS *, a 501 closing it for POST,
#    DELETE and "get", a 304 and a 412 closing it for "If-None-Match: *"
#    and 'If-Match: "x"', a 421 closing it for an "https" target;
#  - an "https" target (raw GET and HEAD, any case, curl
#    --request-target): a 421 and the close (RFC 9110 7.4: no TLS here);
#  - preconditions of GET and HEAD (RFC 9110 13; the target has an empty
#    representation, no entity tag): curl with 'If-Match: "x"' (GET,
#    HEAD) a 412, "If-Match: *" a 204, "If-None-Match: *" (GET, HEAD) a
#    304, 'If-None-Match: "x"' a 204; OPTIONS with 'If-Match: "x"' its 200;
#  - raw requests on a socket: the server sends its FIN right after the
#    reply that closes (read to the end within 2 s); a request pipelined
#    after it is not answered, and 16 KiB more behind it do not turn the
#    close into an RST (the reply arrives whole, the end is clean);
#    HTTP/1.0 with keep-alive stays open; a body (Content-Length, chunked)
#    gets a 413 or 411 and is not answered as a request, "Content-Length:
#    0" keeps it open;
#    HTTP/0.9's one line, no complete head, is answered nothing (the
#    connection waits); HEAD, an absolute-form target and HTTP/1.2
#    stay open;
#  - invalid requests (RFC 9112: HTTP/1.1 without Host, two Hosts, one
#    that is no host, whitespace before a colon, a line without one, a
#    Content-Length not a number or twice, a last coding not chunked,
#    Transfer-Encoding in HTTP/1.0, HTTP/2's preface, HTTP/0.9's head, a
#    method that is no token, a target in none of RFC 9112 3.2's forms:
#    "foo", "*" but for OPTIONS, a fragment, CONNECT's not host:port,
#    an http URI without a host, an https one with userinfo, one whose
#    port is no number)
#    get a 400 with "Connection: close", then
#    the FIN, and nothing after them is answered, chunked twice too; a
#    coding before chunked ("gzip, chunked") a 501; HTTP/2.0 and
#    HTTP/0.9 as a version a 505, "http/1.1" and a bare CR a 400; a
#    method too long a 501 (RFC 9112 3), a version too long a 400, a
#    target too long a 414, whitespace too long before any target a
#    400 (no URI was sent), a head too long a 431;
#    curl with no Host field a 400, curl's OPTIONS * a 200 with Allow, curl through
#    a proxy with userinfo in its URL a 204 (curl sends it as a field);
#  - each reply, 204 or 4xx, has a Date field (RFC 9110 6.6.1);
#  - the server closed no connection by its idle timer, and after SIGTERM
#    exits 0 with no connection and no timer left.
# Exit 0 pass, 1 fail, 77 skip (io_uring refused, or ab or curl not
# installed: scripts/deps.sh test installs them).
set -u
server=$1 name=$2
for tool in ab curl; do
  command -v "$tool" >/dev/null ||
    { echo "SKIP [$name]: $tool not installed (scripts/deps.sh test installs it)"; exit 77; }
done

# The idle timeout must outlast what the checks hold open (2 s) and the
# clients' own closes on a busy machine: at 5 s, 2 runs of 30 at load 16
# to 67 saw a client's close come after it. Nothing waits for it to fire.
idle_s=20
# shellcheck source-path=SCRIPTDIR source=server.sh
. "$(dirname "$0")/server.sh"
server_start "$name" "$server" --http --idle-ms $((idle_s * 1000))
url=http://127.0.0.1:$port/

# ab_run LABEL ARGS...: 2,000 requests, 10 at a time; all must complete
# within the idle timeout (given 30 s before it is called stuck)
ab_run() {
  local label=$1
  shift
  timeout 30 ab -q "$@" -n 2000 -c 10 "$url" >"$tmp/ab.log" 2>&1
  local rc=$?
  cat "$tmp/ab.log"
  [ $rc -eq 124 ] && fail "$label: not finished in 30 s (closes waiting for the $idle_s s idle timeout?)"
  [ $rc -eq 0 ] || fail "$label: ab exited with $rc"
  grep -Eq '^Complete requests: +2000$' "$tmp/ab.log" || fail "$label: not 2000 requests complete"
  grep -Eq '^Failed requests: +0$' "$tmp/ab.log" || fail "$label: failed requests"
  local t
  t=$(sed -n 's/^Time taken for tests: *\([0-9.]*\) seconds/\1/p' "$tmp/ab.log")
  awk -v t="$t" -v lim="$idle_s" 'BEGIN { exit !(t != "" && t + 0 < lim) }' ||
    fail "$label: took ${t:-?} s, not under the $idle_s s idle timeout"
  echo "$label: 2000 requests in $t s"
}

# ab: HTTP/1.0 without keep-alive; it reads each reply until the server closes
stats; a0=$(counter accepted)
ab_run "ab (HTTP/1.0)"
stats; a1=$(counter accepted)
[ $((a1 - a0)) -ge 2000 ] || fail "ab: $((a1 - a0)) connections accepted for 2000 requests without keep-alive"

# ab -k: HTTP/1.0 with "Connection: Keep-Alive"; the replies must keep them open
ab_run "ab -k (HTTP/1.0 keep-alive)" -k
grep -Eq '^Keep-Alive requests: +2000$' "$tmp/ab.log" || fail "ab -k: not every request on a kept-alive connection"
stats; a2=$(counter accepted)
[ $((a2 - a1)) -le 50 ] || fail "ab -k: $((a2 - a1)) connections for 2000 requests (reuse expected)"
echo "ab -k: $((a2 - a1)) connections"

# a Date field's value, IMF-fixdate (RFC 9110 5.6.7); every 2xx and 4xx reply has one (6.6.1)
date_re='(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-3][0-9] (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT'

# curl_check LABEL WANT_HEADER WANT_CONNECTS ARGS...: two requests in one curl;
# each transfer's num_connects says whether it needed a new connection
curl_check() {
  local label=$1 want=$2 connects=$3
  shift 3
  timeout 10 curl -sS -v -o /dev/null -w '%{num_connects}\n' "$@" "$url" "$url" \
    >"$tmp/curl.out" 2>"$tmp/curl.err" || { cat "$tmp/curl.err"; fail "$label: curl failed"; }
  grep -iq "^< Connection: $want" "$tmp/curl.err" ||
    { cat "$tmp/curl.err"; fail "$label: no \"Connection: $want\" in the reply"; }
  grep -Eq "^< Date: $date_re" "$tmp/curl.err" ||
    { cat "$tmp/curl.err"; fail "$label: no Date field (IMF-fixdate) in the reply"; }
  # a reply curl did not ask for (a body read as a request) is "excess" to it
  grep -q 'Excess found' "$tmp/curl.err" && { cat "$tmp/curl.err"; fail "$label: a reply curl did not ask for"; }
  [ "$(paste -sd, "$tmp/curl.out")" = "$connects" ] ||
    { cat "$tmp/curl.err"; fail "$label: connections made per request $(paste -sd, "$tmp/curl.out"), want $connects"; }
  echo "$label: Connection: $want, new connections per request $connects"
}
curl_check "curl --http1.0" close 1,1 --http1.0
curl_check "curl -H 'Connection: close'" close 1,1 -H 'Connection: close'
curl_check "curl (HTTP/1.1)" keep-alive 1,0
curl_check "curl --http1.0 -H 'Connection: keep-alive'" keep-alive 1,0 --http1.0 -H 'Connection: keep-alive'
# a request with a body: the server reads no bodies, so it closes rather than read one as a request
curl_check "curl -d (Content-Length)" close 1,1 -d 'hello'
curl_check "curl -d, chunked" close 1,1 -H 'Transfer-Encoding: chunked' -d 'hello'
# ...and refuses them: 413 (Content-Length), 411 (chunked); a 2xx would say the content was taken
# curl_code LABEL STATUS ARGS...: curl's status must be STATUS; $sent: the body's bytes it sent
curl_code() {
  local label=$1 want=$2 got
  shift 2
  got=$(timeout 10 curl -sS -o /dev/null -w '%{http_code} %{size_upload}' "$@" "$url") || fail "$label: curl failed"
  [ "${got% *}" = "$want" ] || fail "$label: status ${got% *}, want $want"
  sent=${got#* }
  sent=${sent%%.*}
  echo "$label: $want, $sent bytes of the body sent"
}
curl_code "curl -X GET -d" 413 -X GET -d 'hello'
curl_code "curl -X GET -d, chunked" 411 -X GET -H 'Transfer-Encoding: chunked' -d 'hello'
# Expect: 100-continue: the final status at once, so the body is never sent (RFC 9110 10.1.1)
head -c 100000 /dev/zero >"$tmp/body"
curl_code "curl -X GET -T, Expect: 100-continue" 413 -X GET -H 'Expect: 100-continue' -T "$tmp/body"
[ "$sent" = 0 ] || fail "curl -T with Expect: 100-continue sent $sent bytes of its body to a final status"
# a method the server does not implement: 501 (RFC 9110 9.1), before any body (curl -d
# is a POST, -T a PUT); GET, HEAD (curl -I) a 204; methods are case-sensitive
curl_code "curl -d (POST)" 501 -d 'hello'
curl_code "curl -T (PUT), Expect: 100-continue" 501 -H 'Expect: 100-continue' -T "$tmp/body"
[ "$sent" = 0 ] || fail "curl -T (PUT) with Expect: 100-continue sent $sent bytes of its body to a 501"
for m in DELETE TRACE get head; do
  curl_code "curl -X $m" 501 -X "$m"
done
curl_code "curl -I (HEAD)" 204 -I
curl_code "curl -X GET" 204 -X GET
# preconditions of GET and HEAD (RFC 9110 13): the target's representation has no entity tag
curl_code "curl, If-Match: \"x\"" 412 -H 'If-Match: "x"'
curl_code "curl -I, If-Match: W/\"x\"" 412 -I -H 'If-Match: W/"x"'
curl_code "curl, If-Match: *" 204 -H 'If-Match: *'
curl_code "curl, If-None-Match: *" 304 -H 'If-None-Match: *'
curl_code "curl -I, If-None-Match: *" 304 -I -H 'If-None-Match: *'
curl_code "curl, If-None-Match: \"x\"" 204 -H 'If-None-Match: "x"'
curl_code "curl -X OPTIONS, If-Match: \"x\"" 200 -X OPTIONS -H 'If-Match: "x"'

# raw LABEL REQUEST WANT_REPLIES WANT_END [LAST]: send REQUEST (printf format)
# on a socket and read for 2 s at most; WANT_END "eof": the server closed
# cleanly within that time after WANT_REPLIES replies, 204s but the last,
# whose status is LAST (204 unless given) and which says "Connection:
# close"; "open": it kept the connection open after WANT_REPLIES 204s.
# raw_start (same arguments) connects, sends and reads in the background,
# its id in $raw_id; raw_end ID waits and checks. The checks that wait the
# whole 2 s ("open") are started first and checked last, overlapping the
# others. The socket is the background job's alone: the client closes it
# when its read ends, not when raw_end comes to it (the checks between
# may take longer than the idle timeout on a busy machine).
raw() { raw_start "$@"; raw_end "$raw_id"; }
raw_id=0
raw_start() {
  local i=$((raw_id + 1))
  raw_id=$i
  printf '%s\0' "$@" >"$tmp/raw$i.args"
  (
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 200
    # shellcheck disable=SC2059
    printf "$2" >&3 || exit 201
    echo "$EPOCHREALTIME" >"$tmp/raw$i.t0"
    exec timeout 2 cat <&3 >"$tmp/raw$i.out" 2>"$tmp/raw$i.err"
  ) &
  echo $! >"$tmp/raw$i.pid"
}
raw_end() {
  local i=$1 t0 rc t1
  wait "$(cat "$tmp/raw$i.pid")"
  rc=$? t1=$EPOCHREALTIME
  local label want end last
  { IFS= read -r -d '' label; IFS= read -r -d '' _; IFS= read -r -d '' want
    IFS= read -r -d '' end; IFS= read -r -d '' last || last=204; } <"$tmp/raw$i.args"
  [ $rc -eq 200 ] && fail "$label: cannot connect"
  [ $rc -eq 201 ] && fail "$label: sending failed"
  read -r t0 <"$tmp/raw$i.t0"
  mv "$tmp/raw$i.out" "$tmp/raw.out"
  mv "$tmp/raw$i.err" "$tmp/raw.err"
  local got ok ms
  got=$(grep -c '^HTTP/1.1 ' "$tmp/raw.out")
  ok=$(grep -c '^HTTP/1.1 204 ' "$tmp/raw.out")
  ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
  [ "$got" = "$want" ] || fail "$label: $got replies, want $want"
  [ "$(grep -Ec "^Date: $date_re"$'\r'"\$" "$tmp/raw.out")" = "$want" ] || fail "$label: not a Date field in each reply"
  if [ "$end" = eof ]; then
    [ $rc -eq 124 ] && fail "$label: connection still open 2 s after the request"
    if [ $rc -ne 0 ] || [ -s "$tmp/raw.err" ]; then fail "$label: the end was not clean: $(cat "$tmp/raw.err")"; fi
    [ "$(grep -c '^Connection: close' "$tmp/raw.out")" = 1 ] || fail "$label: not one \"Connection: close\""
    [ "$(grep '^HTTP/1.1 ' "$tmp/raw.out" | tail -n 1 | cut -d' ' -f2)" = "$last" ] ||
      fail "$label: the last reply is $(grep '^HTTP/1.1 ' "$tmp/raw.out" | tail -n 1 | tr -d '\r'), want a $last"
    [ "$ok" = $((last == 204 ? want : want - 1)) ] || fail "$label: $ok replies 204, want all but the last"
    cmp -s <(tail -c 21 "$tmp/raw.out") <(printf 'Connection: close\r\n\r\n') ||
      fail "$label: the replies do not end with a whole \"Connection: close\" reply"
  else
    [ $rc -eq 124 ] || fail "$label: the server closed a connection that should persist"
    [ "$ok" = "$want" ] || fail "$label: $ok replies 204, want $want"
    [ "$(grep -c '^Connection: keep-alive' "$tmp/raw.out")" = "$want" ] || fail "$label: no Connection: keep-alive"
  fi
  [ "$end" = eof ] && ms="$ms ms, the last reply a $last" || ms="$ms ms"
  echo "$label: $got replies, $end after $ms"
}
opens=()
raw_start "HTTP/1.0 keep-alive" 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' 1 open
opens+=("$raw_id")
raw_start "HTTP/0.9, one line: no head yet" 'GET /\r\n' 0 open
opens+=("$raw_id")
raw_start "Content-Length: 0" 'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 2 open
opens+=("$raw_id")
raw_start "HEAD, then GET" 'HEAD / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 2 open
opens+=("$raw_id")
raw_start "HTTP/1.2, read as HTTP/1.1" 'GET / HTTP/1.2\r\nHost: a\r\n\r\n' 1 open
opens+=("$raw_id")
raw_start "absolute-form (3.2.2)" 'GET http://a/x?y HTTP/1.1\r\nHost: a\r\n\r\n' 1 open
opens+=("$raw_id")
raw "HTTP/1.0" 'GET / HTTP/1.0\r\nHost: a\r\n\r\n' 1 eof
raw "HTTP/1.1, Connection: close" 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n' 1 eof
raw "HTTP/1.1, connection: TE, CLOSE" \
  'GET / HTTP/1.1\r\nHost: a\r\nconnection: TE\r\nConnection: keep-alive,\r\n CLOSE\r\n\r\n' 1 eof
raw "pipelined after close" \
  'GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 2 eof
junk=$(printf 'GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n%.0s' $(seq 600)) # 16 KiB of requests after the close
raw "16 KiB after close" "GET / HTTP/1.1\\r\\nHost: a\\r\\nConnection: close\\r\\n\\r\\n$junk" 1 eof
raw "a body that reads as a request (413)" \
  'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 27\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 413
raw "a chunked body (411)" \
  'GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' 1 eof 411
raw "a body after Expect: 100-continue (413)" \
  'GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n' 1 eof 413
# invalid requests (RFC 9112) get a 400 and the close; nothing after them is answered
raw "HTTP/1.1 without Host (3.2)" 'GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "a second request without Host" 'GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n' 2 eof 400
raw "two Host fields (3.2)" 'GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n' 1 eof 400
raw "a Host that is no host (3.2)" 'GET / HTTP/1.1\r\nHost: user@a\r\n\r\n' 1 eof 400
raw "a Host whose port is no number (3.2)" 'GET / HTTP/1.1\r\nHost: a:b\r\n\r\n' 1 eof 400
raw "a Host with an open IP literal (3.2)" 'GET / HTTP/1.1\r\nHost: [::1\r\n\r\n' 1 eof 400
raw "whitespace before a colon (5.1)" 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\nhello' 1 eof 400
raw "a field line without a colon" 'GET / HTTP/1.1\r\nHost: a\r\nContent-Length\r\n\r\n' 1 eof 400
raw "Content-Length not a number (6.3)" 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5x\r\n\r\nhello' 1 eof 400
raw "two Content-Lengths (6.3)" \
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello' 1 eof 400
raw "last coding not chunked (6.3)" 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n' 1 eof 400
raw "chunked twice (7)" 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n' 1 eof 400
raw "HTTP/1.0 with Transfer-Encoding (6.1)" 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' 1 eof 400
# a transfer coding the server does not implement gets a 501 and the close (RFC 9112 6.1)
raw "gzip, then chunked (6.1)" 'GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n' 1 eof 501
# another major version: a 505 (RFC 9110 15.6.6); HTTP-version is case-sensitive (RFC 9112 2.3)
raw "HTTP/2.0 (505)" 'GET / HTTP/2.0\r\nHost: a\r\n\r\n' 1 eof 505
raw "HTTP/0.9 as a version (505)" 'GET / HTTP/0.9\r\n\r\n' 1 eof 505
raw "http/1.1 (2.3)" 'GET / http/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "a bare CR (2.2)" 'GET / HTTP/1.1\r\nHost: a\r\n\r\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "HTTP/2 preface" 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' 1 eof 400
raw "a method not a token (3)" 'G(T / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "HTTP/0.9, a complete head" 'GET /\r\n\r\n' 1 eof 400
raw "a target in no form (3.2)" 'GET foo HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "asterisk-form, not OPTIONS (3.2.4)" 'GET * HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "a target with a fragment (3.2)" 'GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "CONNECT, origin-form (3.2.3)" 'CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "CONNECT, a port that is no number (3.2.3)" 'CONNECT a:1:2 HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "an http URI with no host (RFC 9110 4.2.1)" 'GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "an https URI with userinfo (RFC 9110 4.2.4)" 'GET https://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
raw "an http URI whose port is no number" 'GET http://a:b/ HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
# OPTIONS: a 200 that says what the server implements, Content-Length: 0 (RFC 9110 9.3.7), and the close
for target in '*' / 'http://a/'; do
  raw "OPTIONS $target (200)" "OPTIONS $target HTTP/1.1\\r\\nHost: a\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" 1 eof 200
  grep -q $'^Allow: GET, HEAD, OPTIONS\r$' "$tmp/raw.out" || fail "OPTIONS $target: no \"Allow: GET, HEAD, OPTIONS\""
  grep -q $'^Content-Length: 0\r$' "$tmp/raw.out" || fail "OPTIONS $target: no \"Content-Length: 0\""
done
# the methods the server does not implement: 501 and the close (RFC 9110 9.1), nothing after it answered
for m in PUT PATCH FOO Get; do
  raw "$m (501)" "$m / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" 1 eof 501
done
raw "GET, HEAD, then POST (501)" \
  'GET / HTTP/1.1\r\nHost: a\r\n\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\nPOST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n' 3 eof 501
# an "https" target on a connection without TLS: a 421 (RFC 9110 7.4), however it is spelled
raw "an https target (421)" 'GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 421
raw "an HTTPS target, HEAD (421)" 'HEAD HTTPS://a:443/x HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 421
curl_code "curl --request-target https://a/" 421 --request-target 'https://a/'
raw "a method with a byte no token holds (400)" 'GE@T / HTTP/1.1\r\nHost: a\r\n\r\n' 1 eof 400
long=$(printf 'a%.0s' $(seq 1100))
raw "a method too long (501)" "$long / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" 1 eof 501
raw "a version too long (400)" "GET / HTTP/1.1$long\\r\\nHost: a\\r\\n\\r\\n" 1 eof 400
raw "a request line too long (414)" "GET /$long HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" 1 eof 414
spaces=$(printf ' %.0s' $(seq 1100))
raw "whitespace too long, no target (400)" "GET$spaces/ HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" 1 eof 400
raw "a head too long (431)" "GET / HTTP/1.1\\r\\nHost: a\\r\\nX: $long\\r\\n\\r\\n" 1 eof 431
for id in "${opens[@]}"; do raw_end "$id"; done
# curl without a Host field gets the 400 too
code=$(timeout 10 curl -sS -o /dev/null -w '%{http_code}' -H 'Host:' "$url") || fail "curl -H 'Host:' failed"
[ "$code" = 400 ] || fail "curl -H 'Host:' (no Host field): status $code, want 400"
echo "curl -H 'Host:': 400"
# curl's OPTIONS * (asterisk-form): a 200 with Allow; and a target in no form
timeout 10 curl -sS -i -X OPTIONS --request-target '*' "$url" >"$tmp/curl.out" 2>"$tmp/curl.err" ||
  { cat "$tmp/curl.err"; fail "curl --request-target '*' failed"; }
code=$(sed -n '1s/^HTTP\/1.1 \([0-9]*\) .*/\1/p' "$tmp/curl.out")
[ "$code" = 200 ] || fail "curl -X OPTIONS --request-target '*': status $code, want 200"
grep -q $'^Allow: GET, HEAD, OPTIONS\r$' "$tmp/curl.out" || fail "curl -X OPTIONS: no \"Allow: GET, HEAD, OPTIONS\""
code=$(timeout 10 curl -sS -o /dev/null -w '%{http_code}' --request-target 'foo' "$url") ||
  fail "curl --request-target foo failed"
[ "$code" = 400 ] || fail "curl --request-target foo: status $code, want 400"
echo "curl OPTIONS *: 200 with Allow, --request-target foo: 400"
# python's http.client: GET and HEAD get a 204 and keep the connection, OPTIONS * a 200 with
# Allow and Content-Length: 0 that closes it, POST, DELETE and "get" a 501 that closes it
python3 - "$port" <<'EOF_PY' || fail "python http.client: see above"
import http.client
import sys

c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)


def req(method, target, want, closes):
    c.request(method, target)
    r = c.getresponse()
    r.read()
    if (r.status, r.will_close) != (want, closes):
        sys.exit(f"{method} {target}: {r.status}, closes {r.will_close}; want {want}, closes {closes}")
    return r


req("GET", "/", 204, False)
req("HEAD", "/", 204, False)
r = req("OPTIONS", "*", 200, True)
if (r.getheader("Allow"), r.getheader("Content-Length")) != ("GET, HEAD, OPTIONS", "0"):
    sys.exit(f"OPTIONS *: Allow {r.getheader('Allow')}, Content-Length {r.getheader('Content-Length')}")
for m in ("POST", "DELETE", "get"):
    req(m, "/", 501, True)
req("GET", "/", 204, False)
c.request("GET", "https://a.example/x")
r = c.getresponse()
r.read()
if (r.status, r.will_close) != (421, True):
    sys.exit(f"GET https://a.example/x: {r.status}, closes {r.will_close}; want 421, closes")
for field, status in (("If-None-Match", 304), ("If-Match", 412)):
    c.request("GET", "/", headers={field: "*" if status == 304 else '"x"'})
    r = c.getresponse()
    r.read()
    if (r.status, r.will_close) != (status, True):
        sys.exit(f"GET with {field}: {r.status}, closes {r.will_close}; want {status}, closes")
print("python http.client: GET, HEAD 204; OPTIONS * 200 with Allow, closes; POST, DELETE, get 501;"
      " If-None-Match: * 304, If-Match: \"x\" 412, an https target 421, closing")
EOF_PY
# curl through a proxy (absolute-form) moves an URL's userinfo to an Authorization field: a 204
code=$(timeout 10 curl -sS -o /dev/null -w '%{http_code}' -x "$url" 'http://u:p@a.example:81/x?y') ||
  fail "curl -x failed"
[ "$code" = 204 ] || fail "curl -x $url http://u:p@a.example:81/x?y: status $code, want 204"
echo "curl through a proxy, userinfo in its URL: 204"

# the connections end when the clients close theirs: none waits for the timer
stats_until_closed
[ "$(counter conns)" = 0 ] || fail "$(counter conns) connections still open after the clients closed theirs"
[ "$(counter idle_closed)" = 0 ] || fail "$(counter idle_closed) connections closed by the idle timer"
[ "$(counter resets)" = 0 ] || fail "$(counter resets) connections reset"

server_stop
echo "PASS [$name]"
exit 0
