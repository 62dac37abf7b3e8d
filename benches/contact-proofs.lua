-- wrk script: POST the contact form with a proof of work, each request a distinct visitor with
-- its own proof (one line of the file in BENCH_PROOFS per request; the threads take alternate
-- lines). A run longer than the file would replay proofs: `done` reports how many were reused.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"
local threads = {}
local bodies = {}
for line in io.lines(os.getenv("BENCH_PROOFS")) do bodies[#bodies + 1] = line end

setup = function(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

local i = 0
local reused = 0
init = function(args)
  i = id
end

request = function()
  wrk.headers["X-Forwarded-For"] = string.format("2001:db8:%x:%x::%x", math.random(0, 65535), math.random(0, 65535), i % 65535)
  local body = bodies[(i % #bodies) + 1]
  if i >= #bodies then reused = reused + 1 end
  i = i + 2
  return wrk.format(nil, nil, nil, body)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH requests=%d duration_us=%d non2xx=%d errors=%d p50_us=%d p99_us=%d pool=%d\n",
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), #bodies))
end
