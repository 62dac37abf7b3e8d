#!/usr/bin/env python3
"""A server that accepts connections and reads what they send without ever answering: the target
of benches/trickle.py while edge.sh measures its baseline, so the trickler's own CPU is in both
runs and the ratio is Ebb's cost of holding the slow connections alone. Runs until killed."""
import asyncio, sys

HOST, PORT = sys.argv[1], int(sys.argv[2])


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while await reader.read(4096):
            pass
    except OSError:
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(handle, HOST, PORT, backlog=4096)
    async with server:
        await server.serve_forever()


asyncio.run(main())
