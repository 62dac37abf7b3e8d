#!/usr/bin/env python3
"""Slow clients for benches/edge.sh: N connections, each sending a request head one byte every
INTERVAL seconds (what a slowloris does); a connection the server closes is opened again, so N
stay open or trying. Runs until killed; prints how many were open every 10 s to stderr."""
import asyncio, sys

HOST, PORT, N, INTERVAL = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
HEAD = b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 4096
open_now = 0


async def client(i: int) -> None:
    global open_now
    await asyncio.sleep(i * 0.002)
    while True:
        try:
            reader, writer = await asyncio.open_connection(HOST, PORT)
        except OSError:
            await asyncio.sleep(1)
            continue
        open_now += 1
        try:
            for b in HEAD:
                writer.write(bytes([b]))
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(1), INTERVAL) == b"":
                        break
                except asyncio.TimeoutError:
                    pass
        except OSError:
            pass
        finally:
            open_now -= 1
            writer.close()


async def report() -> None:
    while True:
        await asyncio.sleep(10)
        print(f"trickle: {open_now} open", file=sys.stderr, flush=True)


async def main() -> None:
    await asyncio.gather(report(), *(client(i) for i in range(N)))


asyncio.run(main())
