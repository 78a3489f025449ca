-- wrk script for bench/coupons/run.sh: POSTs a random body of a bodies file
-- (one JSON body per line) to a path with a bearer token, pausing between a
-- connection's requests, and prints one RESULT line at the end.
--
--   wrk -t2 -c4 -d30s -s search.lua URL -- PATH TOKEN BODIES_FILE DELAY_MS

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local bodies, path, token, pause

function init(args)
  path, token, pause = args[1], args[2], tonumber(args[4] or "0")
  bodies = {}
  for line in io.lines(args[3]) do
    bodies[#bodies + 1] = line
  end
  math.randomseed(os.time() * 1000 + id)
end

function request()
  return wrk.format("POST", path, {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. token,
  }, bodies[math.random(#bodies)])
end

function delay()
  return pause
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f non2xx=%d socket_errors=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.status, e.connect + e.read + e.write + e.timeout))
end
