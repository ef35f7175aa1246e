-- wrk script for scripts/bench-server --mode http: one fixed request, over and over, on each connection.
--
-- Arguments after `--`: METHOD PATH [BODY_FILE] (the body is sent as application/json).
-- done() prints one line starting with "BENCH_RESULT" in the shape bench-signin.lua prints, with each answered
-- request counted as one "sign-in" (the figures per request): only 200 answers count; anything else is an error.

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

ok, failed = 0, 0

function init(args)
    local method, path, body_file = args[1], args[2], args[3]
    assert(method and path, "usage: -- METHOD PATH [BODY_FILE]")
    local headers = {}
    local body
    if body_file then
        local file = assert(io.open(body_file, "rb"))
        body = file:read("*a")
        file:close()
        headers["Content-Type"] = "application/json"
    end
    request_bytes = wrk.format(method, path, headers, body)
end

function request()
    return request_bytes
end

function response(status, headers, body)
    if status == 200 then
        ok = ok + 1
    else
        failed = failed + 1
        if failed <= 3 then io.stderr:write("answered ", status, ": ", body:sub(1, 200), "\n") end
    end
end

function done(summary, latency, requests)
    local total, errors = 0, 0
    for _, thread in ipairs(threads) do
        total = total + thread:get("ok")
        errors = errors + thread:get("failed")
    end
    local seconds = summary.duration / 1e6
    local socket = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    local p50, p90, p99 = latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3
    io.write(string.format(
        "BENCH_RESULT sign_ins=%d seconds=%.3f sign_ins_per_second=%.1f requests=%d non_2xx=%d error_responses=%d " ..
        "parse_errors=0 socket_errors=%d signin_p50_ms=%.3f signin_p90_ms=%.3f signin_p99_ms=%.3f signin_max_ms=%.3f " ..
        "request_p50_ms=%.3f request_p90_ms=%.3f request_p99_ms=%.3f request_max_ms=%.3f\n",
        total, seconds, total / seconds, summary.requests, summary.errors.status, errors, socket,
        p50, p90, p99, latency.max / 1e3, p50, p90, p99, latency.max / 1e3))
end
