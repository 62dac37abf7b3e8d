-- wrk script: POST the contact form as the hydrated client does, each request from a different
-- visitor (X-Forwarded-For from the IPv6 documentation prefix; the server trusts one proxy hop),
-- so the per-client rate limit measures real upserts without turning every request into a 429.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"
local n = 0
request = function()
  n = n + 1
  wrk.headers["X-Forwarded-For"] = string.format("2001:db8:%x:%x::%x", math.random(0, 65535), math.random(0, 65535), n % 65535)
  local body = "name=Bench+" .. n .. "&email=bench%40example.org&message=Hello+from+the+benchmark.%0ASecond+line."
  return wrk.format(nil, nil, nil, body)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH requests=%d duration_us=%d non2xx=%d errors=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
