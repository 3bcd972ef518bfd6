-- wrk script for bench/serve.sh: POSTs JSON bodies read from BODIES (one per line) in turn,
-- and prints a one-line JSON summary (latency percentiles in ms, requests/s, every error kind).
local path = os.getenv("WRK_PATH") or "/v1/ask"
local bodies = {}
for line in io.lines(os.getenv("BODIES")) do
  bodies[#bodies + 1] = line
end
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function setup(thread)
  thread:set("offset", math.random(#bodies))
end

function request()
  i = i + 1
  return wrk.format("POST", path, nil, bodies[(i + (offset or 0)) % #bodies + 1])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.2f, "rps": %.1f, "p50_ms": %.2f, "p90_ms": %.2f, "p99_ms": %.2f, "max_ms": %.2f, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end
