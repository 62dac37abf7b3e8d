#!/usr/bin/env python3
"""A server that accepts connections and reads what they send without ever answering: the target
of benches/trickle.py while edge.sh measures its baseline, so the trickler's own CPU is in both
runs and the ratio is Ebb's cost of holding the slow connections alone. Like Ebb, it closes a
connection whose request head is not complete after CLOSE_AFTER seconds (Ebb's header read
timeout), so the trickler reconnects as often in both runs. Runs until killed."""
import asyncio, sys

HOST, PORT = sys.argv[1], int(sys.argv[2])
CLOSE_AFTER = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0


async def read_all(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        if CLOSE_AFTER > 0:
            await asyncio.wait_for(read_all(reader), CLOSE_AFTER)
        else:
            await read_all(reader)
    except (OSError, asyncio.TimeoutError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(handle, HOST, PORT, backlog=4096)
    async with server:
        await server.serve_forever()


asyncio.run(main())
