-- benches/ssr.sh: plain GETs (wrk's default request); one BENCH line with the figures the table needs.
done = function(summary, latency, requests)
  io.write(string.format("BENCH requests=%d duration_us=%d non2xx=%d errors=%d p50_us=%d p99_us=%d bytes=%d\n",
    summary.requests, summary.duration, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), summary.bytes))
end
