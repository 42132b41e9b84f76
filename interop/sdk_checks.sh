# shellcheck shell=bash
# shellcheck disable=SC2034  # the *_VERSION pins are printed by run.sh
# Sourced by interop/run.sh: the servers of ours on the Go, Java and TypeScript v2 SDKs
# (interop/go-sdk/, …), each built here into target/interop/ with every cache under it
# (GOPATH, GOMODCACHE, GOCACHE), so a clean clone is self-contained and ~/ untouched.
# Uses run.sh's helpers: selected, any_selected, check, record, start_server, stop_server,
# server_failed, free_port, say; and its variables ROOT, WORK, RESULTS, PROFILES.

GO_SDK_VERSION="v1.8.0"          # github.com/modelcontextprotocol/go-sdk (interop/go-sdk/go.mod)

# Every check of these stacks also asks for zero findings with the strictest options.
STRICT=(--strict --probe-undeclared)
# python.toml's and sdk.toml's steps after the handshake (sdk.toml adds the `roots` call).
SDK_PHASES="initialize,tools/list,resources/list,resources/templates/list,prompts/list,tools/call,resources/read,prompts/get,ping,answer,close"
# Servers list one item a page (`--page-size 1`): 3 tools, so 3 tools/list samples per
# listing, which is how the checks see that the fleet followed nextCursor.
TOOLS_PAGES=3

go_env() {
  export GOPATH="$WORK/go" GOMODCACHE="$WORK/go/pkg/mod" GOCACHE="$WORK/go/cache"
  # Module cache files writable (a plain `rm -rf target/` works); never fetch a toolchain.
  export GOFLAGS=-modcacherw GOTOOLCHAIN=local
}

# build_go DIR BINARY: `go build` of interop/DIR into target/interop/bin/BINARY, again only
# when a source, go.mod or go.sum is newer than the binary.
build_go() {
  local dir="$ROOT/interop/$1" bin="$WORK/bin/$2" f stale=0
  if ! command -v go >/dev/null; then
    say "interop: go not found on PATH: Go >= 1.25 builds interop/$1 (install Go, or skip with INTEROP_ONLY)"
    return 1
  fi
  [ -x "$bin" ] || stale=1
  for f in "$dir"/*.go "$dir"/go.mod "$dir"/go.sum; do [ "$f" -nt "$bin" ] && stale=1; done
  [ "$stale" = 1 ] || return 0
  say "build: interop/$1 ($(go version | cut -d' ' -f3)) → target/interop/bin/$2"
  mkdir -p "$WORK/bin"
  (go_env; cd "$dir" && go build -trimpath -o "$bin" .) >"$WORK/$2.build.log" 2>&1 ||
    { tail -20 "$WORK/$2.build.log"; return 1; }
}

GO_SDK_CHECKS=(go-sdk-stdio go-sdk-stdio-discovery go-sdk-stdio-auto go-sdk-stdio-modern go-sdk-http go-sdk-profile-http
  go-sdk-http-auto go-sdk-http-modern go-sdk-roots-post-stream go-sdk-json-http go-sdk-reinit-http go-sdk-stateless-http
  go-sdk-stateless-profile go-sdk-stateless-auto go-sdk-stateless-modern go-sdk-sse go-sdk-profile-sse)

# The official Go SDK: stdio, Streamable HTTP with sessions (2025 versions only: its
# server/discover lists no modern version) and stateless (both eras), legacy SSE.
go_sdk_checks() {
  any_selected "${GO_SDK_CHECKS[@]}" || return 0
  if ! build_go go-sdk go-sdk-server; then
    record go-sdk-build 0 "go build of interop/go-sdk failed (see target/interop/go-sdk-server.build.log)"
    return 0
  fi
  local bin="$WORK/bin/go-sdk-server" port pid
  local stdio="$bin stdio --page-size 1"

  selected go-sdk-stdio && check go-sdk-stdio 24 "$SDK_PHASES" --server-message roots/list\>0 -- \
    "$PROFILES/sdk.toml" --stdio "$stdio" --clients 4 "${STRICT[@]}"
  selected go-sdk-stdio-discovery && check go-sdk-stdio-discovery 20 "$LEGACY_DISCOVERY" \
    --phase-count tools/list=$((20 * TOOLS_PAGES)) -- \
    --stdio "$stdio" --clients 4 "${STRICT[@]}"
  # Over stdio it serves both eras: auto goes modern.
  selected go-sdk-stdio-auto && check go-sdk-stdio-auto 12 "probe,$MODERN_PHASES" \
    --counter era_modern=12 --phase-count tools/list=$((12 * TOOLS_PAGES)) -- \
    "$PROFILES/python-era.toml" --stdio "$stdio" --era auto --clients 4 "${STRICT[@]}"
  selected go-sdk-stdio-modern && check go-sdk-stdio-modern 12 "discover,$MODERN_PHASES" \
    --counter era_modern=12 -- \
    "$PROFILES/python-era.toml" --stdio "$stdio" --era modern --clients 4 "${STRICT[@]}"

  # Streamable HTTP with sessions.
  if any_selected go-sdk-http go-sdk-profile-http go-sdk-http-auto go-sdk-http-modern go-sdk-roots-post-stream; then
    port="$(free_port)"
    if start_server go-sdk-http "$port" "$bin" http "$port" --page-size 1; then
      pid=$SERVER_PID
      selected go-sdk-http && check go-sdk-http 200 "$LEGACY_DISCOVERY" \
        --phase-count tools/list=$((200 * TOOLS_PAGES)) -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      selected go-sdk-profile-http && check go-sdk-profile-http 120 "$SDK_PHASES" \
        --counter get_stream_opened\>0 --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      # Its server/discover lists only 2025 versions on a stateful endpoint: probed or
      # forced, the session falls back to initialize (§4.3).
      selected go-sdk-http-auto && check go-sdk-http-auto 100 "probe,$PROFILE_PHASES" \
        --counter era_legacy=100 --counter era_modern=0 -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected go-sdk-http-modern && check go-sdk-http-modern 100 "discover,$PROFILE_PHASES" \
        --counter era_legacy=100 --counter era_modern=0 -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      # roots/list on the POST's own stream, for a client without a GET stream.
      selected go-sdk-roots-post-stream && check go-sdk-roots-post-stream 2 "initialize,tools/call,answer,close" \
        --server-message roots/list=2 -- \
        "$PROFILES/roots-post-stream.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed go-sdk-http go-sdk-profile-http go-sdk-http-auto go-sdk-http-modern go-sdk-roots-post-stream
    fi
  fi

  # application/json answers instead of SSE streams.
  if selected go-sdk-json-http; then
    port="$(free_port)"
    if start_server go-sdk-json "$port" "$bin" http "$port" --json; then
      pid=$SERVER_PID
      check go-sdk-json-http 120 "$SDK_PHASES" --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed go-sdk-json-http
    fi
  fi

  # Sessions forgotten after 300 ms idle: 404, then re-initialize and retry.
  if selected go-sdk-reinit-http; then
    port="$(free_port)"
    if start_server go-sdk-reinit "$port" "$bin" http "$port" --session-timeout 300ms; then
      pid=$SERVER_PID
      check go-sdk-reinit-http 8 "initialize,tools/call,reinitialize,close" \
        --phase-count reinitialize=8 --counter session_expired=8 -- \
        "$PROFILES/reinit.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed go-sdk-reinit-http
    fi
  fi

  # Stateless: no session id, GET and DELETE 405; 2026-07-28 served.
  if any_selected go-sdk-stateless-http go-sdk-stateless-profile go-sdk-stateless-auto go-sdk-stateless-modern; then
    port="$(free_port)"
    if start_server go-sdk-stateless "$port" "$bin" http "$port" --stateless --page-size 1; then
      pid=$SERVER_PID
      selected go-sdk-stateless-http && check go-sdk-stateless-http 200 "$LEGACY_DISCOVERY" \
        --phase-count tools/list=$((200 * TOOLS_PAGES)) -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      selected go-sdk-stateless-profile && check go-sdk-stateless-profile 120 "$PROFILE_PHASES" -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected go-sdk-stateless-auto && check go-sdk-stateless-auto 200 "probe,$MODERN_PHASES" \
        --counter era_modern=200 --phase-count tools/list=$((200 * TOOLS_PAGES)) -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected go-sdk-stateless-modern && check go-sdk-stateless-modern 200 "discover,$MODERN_PHASES" \
        --counter era_modern=200 -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed go-sdk-stateless-http go-sdk-stateless-profile go-sdk-stateless-auto go-sdk-stateless-modern
    fi
  fi

  # Legacy HTTP+SSE: GET /sse, POST to the endpoint it names.
  if any_selected go-sdk-sse go-sdk-profile-sse; then
    port="$(free_port)"
    if start_server go-sdk-sse "$port" "$bin" sse "$port"; then
      pid=$SERVER_PID
      selected go-sdk-sse && check go-sdk-sse 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/sse" --transport sse --protocol-version 2024-11-05 --clients 10 "${STRICT[@]}"
      selected go-sdk-profile-sse && check go-sdk-profile-sse 120 "$SDK_PHASES" --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/sse" --transport sse --clients 8 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed go-sdk-sse go-sdk-profile-sse
    fi
  fi
  return 0
}

MCP_GO_VERSION="v1.2.1"          # github.com/mark3labs/mcp-go (interop/mcp-go/go.mod)
# mcp-go ends a paged list with an empty page: 3 tools a page each are 4 tools/list samples.
MCP_GO_TOOLS_PAGES=4

MCP_GO_CHECKS=(mcp-go-stdio mcp-go-stdio-discovery mcp-go-stdio-auto mcp-go-stdio-modern mcp-go-http
  mcp-go-profile-http mcp-go-http-auto mcp-go-http-modern mcp-go-stateful-http mcp-go-reinit-http
  mcp-go-roots-post-stream mcp-go-stateless-http mcp-go-stateless-modern mcp-go-sse mcp-go-profile-sse)

# mark3labs/mcp-go: stdio, Streamable HTTP (the era picked per request, so one endpoint
# serves both; session ids issued but not checked by default, checked with --stateful,
# none with --stateless), legacy SSE. Its `roots` tool asks by a multi round-trip input
# request, which the SDK turns into roots/list for a 2025-era client.
mcp_go_checks() {
  any_selected "${MCP_GO_CHECKS[@]}" || return 0
  if ! build_go mcp-go mcp-go-server; then
    record mcp-go-build 0 "go build of interop/mcp-go failed (see target/interop/mcp-go-server.build.log)"
    return 0
  fi
  local bin="$WORK/bin/mcp-go-server" port pid
  local stdio="$bin stdio --page-size 1"

  selected mcp-go-stdio && check mcp-go-stdio 24 "$SDK_PHASES" --server-message roots/list\>0 -- \
    "$PROFILES/sdk.toml" --stdio "$stdio" --clients 4 "${STRICT[@]}"
  selected mcp-go-stdio-discovery && check mcp-go-stdio-discovery 20 "$LEGACY_DISCOVERY" \
    --phase-count tools/list=$((20 * MCP_GO_TOOLS_PAGES)) -- \
    --stdio "$stdio" --clients 4 "${STRICT[@]}"
  # The 2026-07-28 era: roots asked in an input_required result, fulfilled and retried.
  selected mcp-go-stdio-auto && check mcp-go-stdio-auto 12 "probe,$MODERN_PHASES" \
    --counter era_modern=12 --counter input_rounds=12 -- \
    "$PROFILES/sdk-era.toml" --stdio "$stdio" --era auto --clients 4 "${STRICT[@]}"
  selected mcp-go-stdio-modern && check mcp-go-stdio-modern 12 "discover,$MODERN_PHASES" \
    --counter era_modern=12 --counter input_rounds=12 -- \
    "$PROFILES/sdk-era.toml" --stdio "$stdio" --era modern --clients 4 "${STRICT[@]}"

  # Streamable HTTP as mcp-go serves it by default (session ids issued, not checked).
  if any_selected mcp-go-http mcp-go-profile-http mcp-go-http-auto mcp-go-http-modern; then
    port="$(free_port)"
    if start_server mcp-go-http "$port" "$bin" http "$port" --page-size 1; then
      pid=$SERVER_PID
      selected mcp-go-http && check mcp-go-http 200 "$LEGACY_DISCOVERY" \
        --phase-count tools/list=$((200 * MCP_GO_TOOLS_PAGES)) -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      selected mcp-go-profile-http && check mcp-go-profile-http 120 "$SDK_PHASES" \
        --counter get_stream_opened\>0 --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected mcp-go-http-auto && check mcp-go-http-auto 200 "probe,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected mcp-go-http-modern && check mcp-go-http-modern 200 "discover,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed mcp-go-http mcp-go-profile-http mcp-go-http-auto mcp-go-http-modern
    fi
  fi

  # --stateful: ids checked (404 after DELETE or the idle sweep).
  if any_selected mcp-go-stateful-http mcp-go-roots-post-stream; then
    port="$(free_port)"
    if start_server mcp-go-stateful "$port" "$bin" http "$port" --stateful; then
      pid=$SERVER_PID
      selected mcp-go-stateful-http && check mcp-go-stateful-http 120 "$SDK_PHASES" \
        --counter get_stream_opened\>0 --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      # Finding: it sends server→client requests on the standalone GET stream only. A
      # client without one (the spec lets it choose: 2025-11-25 transports, "Listening for
      # Messages from the Server", the client MAY issue a GET) never gets the roots/list,
      # and the tool call hangs until the client gives up: every session times out.
      selected mcp-go-roots-post-stream && check mcp-go-roots-post-stream 2 "initialize" \
        --expect-failures timeout=2 -- \
        "$PROFILES/roots-post-stream.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed mcp-go-stateful-http mcp-go-roots-post-stream
    fi
  fi

  # Sessions swept after 1 s idle (a server of its own: the sweep would end the other
  # checks' sessions whenever the machine is slow): 404, then re-initialize and retry.
  if selected mcp-go-reinit-http; then
    port="$(free_port)"
    if start_server mcp-go-reinit "$port" "$bin" http "$port" --stateful --idle-ttl 1s; then
      pid=$SERVER_PID
      check mcp-go-reinit-http 8 "initialize,tools/call,reinitialize,close" \
        --phase-count reinitialize=8 --counter session_expired=8 -- \
        "$PROFILES/reinit.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed mcp-go-reinit-http
    fi
  fi

  # --stateless: no session; roots only by the 2026-07-28 input requests.
  if any_selected mcp-go-stateless-http mcp-go-stateless-modern; then
    port="$(free_port)"
    if start_server mcp-go-stateless "$port" "$bin" http "$port" --stateless; then
      pid=$SERVER_PID
      selected mcp-go-stateless-http && check mcp-go-stateless-http 120 "$PROFILE_PHASES" -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected mcp-go-stateless-modern && check mcp-go-stateless-modern 200 "discover,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed mcp-go-stateless-http mcp-go-stateless-modern
    fi
  fi

  # Legacy HTTP+SSE. Its SSE session cannot send roots/list ("session does not support
  # roots", -32603 to the tool call): python.toml, without the `roots` call.
  if any_selected mcp-go-sse mcp-go-profile-sse; then
    port="$(free_port)"
    if start_server mcp-go-sse "$port" "$bin" sse "$port"; then
      pid=$SERVER_PID
      selected mcp-go-sse && check mcp-go-sse 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/sse" --transport sse --protocol-version 2024-11-05 --clients 10 "${STRICT[@]}"
      selected mcp-go-profile-sse && check mcp-go-profile-sse 120 "$PROFILE_PHASES" -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/sse" --transport sse --clients 8 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed mcp-go-sse mcp-go-profile-sse
    fi
  fi
  return 0
}

JAVA_SDK_VERSION="2.2.0"         # io.modelcontextprotocol.sdk:mcp (interop/java-sdk/pom.xml), on Tomcat 11.0.29

# build_java: `mvn package` of interop/java-sdk into target/interop/java-sdk/ (the jar and
# lib/ with its dependencies), the Maven repository under target/interop/m2; again only
# when pom.xml or a source is newer than the jar.
build_java() {
  local dir="$ROOT/interop/java-sdk" jar="$WORK/java-sdk/java-sdk-server.jar" f stale=0
  local tool
  for tool in java mvn; do
    if ! command -v "$tool" >/dev/null; then
      say "interop: $tool not found on PATH: JDK >= 17 and Maven build interop/java-sdk (install them, or skip with INTEROP_ONLY)"
      return 1
    fi
  done
  [ -f "$jar" ] || stale=1
  while IFS= read -r f; do [ "$f" -nt "$jar" ] && stale=1; done < <(find "$dir" -type f)
  [ "$stale" = 1 ] || return 0
  say "build: interop/java-sdk (mvn package, $(java -version 2>&1 | head -1)) → target/interop/java-sdk/"
  rm -rf "$WORK/java-sdk/lib"
  mvn -B -q -f "$dir/pom.xml" -Dmaven.repo.local="$WORK/m2" package >"$WORK/java-sdk.build.log" 2>&1 ||
    { tail -20 "$WORK/java-sdk.build.log"; return 1; }
}

JAVA_SDK_CHECKS=(java-sdk-stdio java-sdk-stdio-auto java-sdk-http java-sdk-profile-http java-sdk-http-auto
  java-sdk-roots-post-stream java-sdk-reinit-http java-sdk-sse java-sdk-profile-sse
  java-sdk-modern-stdio java-sdk-modern-http java-sdk-modern-http-auto java-sdk-modern-legacy-refused)

# The official Java SDK (classic McpServer, the 2025 era): stdio, Streamable HTTP on an
# embedded Tomcat, legacy SSE. Each transport serves its own versions: Streamable HTTP
# 2025-03-26 … 2025-11-25, SSE only 2024-11-05, so the personas that accept none of
# them end `version_rejected` (the server answered a version it supports, as the spec
# lets it; the client declines it), and the check says which.
java_sdk_checks() {
  any_selected "${JAVA_SDK_CHECKS[@]}" || return 0
  if ! build_java; then
    record java-sdk-build 0 "mvn package of interop/java-sdk failed (see target/interop/java-sdk.build.log)"
    return 0
  fi
  # `lib/*` is Java's own classpath wildcard, never a shell glob.
  local java_cmd="java -cp $WORK/java-sdk/java-sdk-server.jar:$WORK/java-sdk/lib/* fleet.InteropServer"
  local java_argv=(java -cp "$WORK/java-sdk/java-sdk-server.jar:$WORK/java-sdk/lib/*" fleet.InteropServer)
  local port pid

  # stdio: a JVM per session (~2 s to answer initialize on 2 cores).
  selected java-sdk-stdio && check java-sdk-stdio 4 "$SDK_PHASES" --server-message roots/list\>0 -- \
    "$PROFILES/sdk.toml" --stdio "$java_cmd stdio" --clients 2 "${STRICT[@]}"
  selected java-sdk-stdio-auto && check java-sdk-stdio-auto 2 "probe,$PROFILE_PHASES" \
    --counter era_legacy=2 --counter era_modern=0 -- \
    "$PROFILES/python-era.toml" --stdio "$java_cmd stdio" --era auto --clients 2 "${STRICT[@]}"

  if any_selected java-sdk-http java-sdk-profile-http java-sdk-http-auto java-sdk-roots-post-stream; then
    port="$(free_port)"
    if start_server java-sdk-http "$port" "${java_argv[@]}" http "$port"; then
      pid=$SERVER_PID
      selected java-sdk-http && check java-sdk-http 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      selected java-sdk-profile-http && check java-sdk-profile-http 120 "$SDK_PHASES" \
        --counter get_stream_opened\>0 --server-message roots/list\>0 --rejected-persona old-2024-11 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected java-sdk-http-auto && check java-sdk-http-auto 100 "probe,$PROFILE_PHASES" \
        --counter era_legacy=100 --counter era_modern=0 -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected java-sdk-roots-post-stream && check java-sdk-roots-post-stream 2 "initialize,tools/call,answer,close" \
        --server-message roots/list=2 -- \
        "$PROFILES/roots-post-stream.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed java-sdk-http java-sdk-profile-http java-sdk-http-auto java-sdk-roots-post-stream
    fi
  fi

  # Idle sessions evicted by its sweeper (every 500 ms), for the 404 re-init; a server of
  # its own, as the sweep also catches sessions that are merely slow.
  if selected java-sdk-reinit-http; then
    port="$(free_port)"
    if start_server java-sdk-reinit "$port" "${java_argv[@]}" http "$port" --sweep-ms 500; then
      pid=$SERVER_PID
      check java-sdk-reinit-http 8 "initialize,tools/call,reinitialize,close" \
        --phase-count reinitialize=8 --counter session_expired=8 -- \
        "$PROFILES/reinit.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed java-sdk-reinit-http
    fi
  fi

  # Finding, intermittent: its legacy SSE transport (same Tomcat, where Streamable HTTP
  # shows none) fails ~3–8 sessions in 1000: a new connection closed before the answer,
  # the stream ending before its `endpoint` event or mid-session (`transport_closed`), or a
  # POST answered 500 "The request associated with the AsyncContext has already completed
  # processing." (`http_status:500`), or, when that happens after the POST was accepted, the
  # answer never written to the stream (`timeout`: seen once in 200 sessions on
  # 2026-12-05, no error in the server's log). Go and Python SSE servers: 0 in 2000 the same
  # way. Tolerated in at most 2% of the sessions and shown on the PASS line.
  local java_sse_bug=(--known-failure transport_closed --known-failure http_status:500 --known-failure timeout)
  if any_selected java-sdk-sse java-sdk-profile-sse; then
    port="$(free_port)"
    if start_server java-sdk-sse "$port" "${java_argv[@]}" sse "$port"; then
      pid=$SERVER_PID
      selected java-sdk-sse && check java-sdk-sse 200 "$LEGACY_DISCOVERY" "${java_sse_bug[@]}" -- \
        --target "http://127.0.0.1:$port/sse" --transport sse --protocol-version 2024-11-05 --clients 10 "${STRICT[@]}"
      selected java-sdk-profile-sse && check java-sdk-profile-sse 120 "$SDK_PHASES" \
        --server-message roots/list\>0 --rejected-persona legacy-2025-03 "${java_sse_bug[@]}" -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/sse" --transport sse --clients 8 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed java-sdk-sse java-sdk-profile-sse
    fi
  fi

  # Its 2026-07-28 server (io.modelcontextprotocol.modern, fleet.ModernServer): lists one
  # item a page, roots by input_required; modern only, so a 2025 client's initialize
  # gets -32022 naming 2026-07-28 (asserted: every session of a legacy client fails so).
  local modern_cmd="java -cp $WORK/java-sdk/java-sdk-server.jar:$WORK/java-sdk/lib/* fleet.ModernServer"
  local modern_argv=(java -cp "$WORK/java-sdk/java-sdk-server.jar:$WORK/java-sdk/lib/*" fleet.ModernServer)
  selected java-sdk-modern-stdio && check java-sdk-modern-stdio 4 "discover,$MODERN_PHASES" \
    --counter era_modern=4 --counter input_rounds=4 --phase-count tools/list=$((4 * TOOLS_PAGES)) -- \
    "$PROFILES/sdk-era.toml" --stdio "$modern_cmd stdio" --era modern --clients 2 "${STRICT[@]}"
  if any_selected java-sdk-modern-http java-sdk-modern-http-auto java-sdk-modern-legacy-refused; then
    port="$(free_port)"
    if start_server java-sdk-modern "$port" "${modern_argv[@]}" http "$port"; then
      pid=$SERVER_PID
      selected java-sdk-modern-http && check java-sdk-modern-http 200 "discover,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 --phase-count tools/list=$((200 * TOOLS_PAGES)) -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      selected java-sdk-modern-http-auto && check java-sdk-modern-http-auto 200 "probe,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected java-sdk-modern-legacy-refused && check java-sdk-modern-legacy-refused 8 "" \
        --expect-failures rpc_error:-32022=8 -- \
        --target "http://127.0.0.1:$port/mcp" --clients 4 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed java-sdk-modern-http java-sdk-modern-http-auto java-sdk-modern-legacy-refused
    fi
  fi
  return 0
}

TS2_VERSION="2.4.0"              # @modelcontextprotocol/server (npm), the TypeScript SDK v2
TS2_DIR="$WORK/npm-ts2"

install_ts2() {
  local pkg="$TS2_DIR/node_modules/@modelcontextprotocol/server/package.json" got=""
  [ -f "$pkg" ] && got="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$pkg")"
  [ "$got" = "$TS2_VERSION" ] && return 0
  say "install: @modelcontextprotocol/server@$TS2_VERSION (npm, $TS2_DIR)"
  mkdir -p "$TS2_DIR"
  npm install --prefix "$TS2_DIR" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server@$TS2_VERSION" >"$WORK/npm-ts2-install.log" 2>&1 ||
    { tail -20 "$WORK/npm-ts2-install.log"; return 1; }
}

TS2_CHECKS=(ts-v2-stdio ts-v2-stdio-auto ts-v2-stdio-modern ts-v2-http ts-v2-profile-http ts-v2-http-auto
  ts-v2-http-modern ts-v2-listen ts-v2-sessions-http ts-v2-sessions-profile ts-v2-sessions-auto ts-v2-roots-post-stream)

# The TypeScript SDK v2: serveStdio (the era picked by the opening exchange), and
# createMcpHandler over HTTP: 2026-07-28 per request, 2025 traffic served statelessly
# (GET and DELETE 405) — or, with --sessions, routed by isLegacyRequest to a sessionful
# WebStandardStreamableHTTPServerTransport, the pattern its docs give.
ts2_checks() {
  any_selected "${TS2_CHECKS[@]}" || return 0
  if ! install_ts2; then
    record ts-v2-install 0 "npm install @modelcontextprotocol/server@$TS2_VERSION failed"
    return 0
  fi
  local server="$ROOT/interop/ts-v2/server.mjs" port pid
  local node_cmd="env MCP_TS2_MODULES=$TS2_DIR/node_modules node $server"
  local node_argv=(env "MCP_TS2_MODULES=$TS2_DIR/node_modules" node "$server")

  selected ts-v2-stdio && check ts-v2-stdio 8 "$SDK_PHASES" --server-message roots/list\>0 -- \
    "$PROFILES/sdk.toml" --stdio "$node_cmd stdio" --clients 2 "${STRICT[@]}"
  selected ts-v2-stdio-auto && check ts-v2-stdio-auto 6 "probe,$MODERN_PHASES" \
    --counter era_modern=6 --counter input_rounds=6 -- \
    "$PROFILES/sdk-era.toml" --stdio "$node_cmd stdio" --era auto --clients 2 "${STRICT[@]}"
  selected ts-v2-stdio-modern && check ts-v2-stdio-modern 6 "discover,$MODERN_PHASES" \
    --counter era_modern=6 --counter input_rounds=6 -- \
    "$PROFILES/sdk-era.toml" --stdio "$node_cmd stdio" --era modern --clients 2 "${STRICT[@]}"

  if any_selected ts-v2-http ts-v2-profile-http ts-v2-http-auto ts-v2-http-modern; then
    port="$(free_port)"
    if start_server ts-v2-http "$port" "${node_argv[@]}" http "$port"; then
      pid=$SERVER_PID
      selected ts-v2-http && check ts-v2-http 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      # Stateless 2025 serving cannot ask the client: python.toml, without `roots`.
      selected ts-v2-profile-http && check ts-v2-profile-http 120 "$PROFILE_PHASES" \
        --counter get_stream_not_offered\>0 -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected ts-v2-http-auto && check ts-v2-http-auto 200 "probe,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected ts-v2-http-modern && check ts-v2-http-modern 200 "discover,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10 "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed ts-v2-http ts-v2-profile-http ts-v2-http-auto ts-v2-http-modern
    fi
  fi

  # 2026-07-28 listeners on the handler's own subscriptions/listen bus (see py2-listen).
  if selected ts-v2-listen; then
    port="$(free_port)"
    if start_server ts-v2-listen "$port" "${node_argv[@]}" http "$port" --change-tool; then
      pid=$SERVER_PID
      check ts-v2-listen 4 "discover,tools/call,subscriptions/listen" \
        --counter listen_opened=4 --counter listen_notifications\>8 --counter listen_dropped=0 \
        --counter changes_triggered=4 -- \
        "$PROFILES/listen.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed ts-v2-listen
    fi
  fi

  if any_selected ts-v2-sessions-http ts-v2-sessions-profile ts-v2-sessions-auto ts-v2-roots-post-stream; then
    port="$(free_port)"
    if start_server ts-v2-sessions "$port" "${node_argv[@]}" http "$port" --sessions; then
      pid=$SERVER_PID
      selected ts-v2-sessions-http && check ts-v2-sessions-http 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10 "${STRICT[@]}"
      selected ts-v2-sessions-profile && check ts-v2-sessions-profile 120 "$SDK_PHASES" \
        --counter get_stream_opened\>0 --server-message roots/list\>0 -- \
        "$PROFILES/sdk.toml" --target "http://127.0.0.1:$port/mcp" --clients 8 "${STRICT[@]}"
      selected ts-v2-sessions-auto && check ts-v2-sessions-auto 200 "probe,$MODERN_PHASES" \
        --counter era_modern=200 --counter input_rounds=200 -- \
        "$PROFILES/sdk-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10 "${STRICT[@]}"
      selected ts-v2-roots-post-stream && check ts-v2-roots-post-stream 2 "initialize,tools/call,answer,close" \
        --server-message roots/list=2 -- \
        "$PROFILES/roots-post-stream.toml" --target "http://127.0.0.1:$port/mcp" "${STRICT[@]}"
      stop_server "$pid"
    else
      server_failed ts-v2-sessions-http ts-v2-sessions-profile ts-v2-sessions-auto ts-v2-roots-post-stream
    fi
  fi
  return 0
}
