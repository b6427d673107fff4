#!/usr/bin/env python3
"""Connection churn without a token against a coordinator's gRPC port, and how
long a legitimate client takes meanwhile (issue 58, item 7).

  connection_churn.py HOST:PORT SOCKETS SECONDS HOLD_MS -- PROBE...

SOCKETS loops each connect, send nothing (half of them) or half of HTTP/2's
client preface, hold the socket HOLD_MS (0 to twice that, at random), close
it (one in three resets it instead), and connect again. After a 3 s warm-up, PROBE
(a command, e.g. `ksweep status --coordinator http://HOST:PORT --token T`)
is run once every 2 s until SECONDS have passed, each run timed from start
to exit in a thread of its own. Prints each probe's time and exit code, the
churn's connects per second, and the probes' median and worst.

Listen on a port outside the ephemeral range (32768-60999 on Linux): the
churn's own sockets take ports there. `nstat -az TcpExtListenOverflows`
before and after counts the SYNs the kernel dropped.
"""
import asyncio, random, statistics, subprocess, sys, time

addr, sockets, seconds, hold_ms = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
probe = sys.argv[sys.argv.index("--") + 1:]
host, port = addr.rsplit(":", 1)
PREFACE_HALF = b"PRI * HTTP/2.0\r\n"
connects = [0, 0]  # made, failed


async def churn(i, end):
    while time.monotonic() < end:
        try:
            _, w = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 10)
        except (OSError, asyncio.TimeoutError):
            connects[1] += 1
            await asyncio.sleep(0.05)
            continue
        connects[0] += 1
        if i % 2:
            w.write(PREFACE_HALF)
        await asyncio.sleep(random.uniform(0, 2 * hold_ms) / 1000)
        w.transport.abort() if i % 3 == 0 else w.close()


def probes(end):
    """Run in a thread of its own: timed by the event loop's clock, a probe
    would count the loop's delays under a fast churn (hundreds of ms)."""
    time.sleep(3)
    times, failed = [], 0
    while time.monotonic() < end - 2:
        began = time.monotonic()
        p = subprocess.run(probe, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        took = time.monotonic() - began
        times.append(took)
        failed += p.returncode != 0
        print(f"probe {len(times)}: {took:.3f} s, exit {p.returncode} {p.stderr.decode().strip()[:120]}", flush=True)
        time.sleep(max(0.0, 2 - took))
    return times, failed


async def main():
    began = time.monotonic()
    end = began + seconds
    tasks = [asyncio.create_task(churn(i, end)) for i in range(sockets)]
    times, failed = await asyncio.to_thread(probes, end)
    await asyncio.gather(*tasks)
    rate = connects[0] / (time.monotonic() - began)
    print(f"churn: {connects[0]} connects ({rate:.0f}/s), {connects[1]} failed or timed out")
    if times:
        slow = sum(t > 1 for t in times)
        print(f"probes: {len(times)}, median {statistics.median(times):.3f} s, worst {max(times):.3f} s, "
              f"{slow} over 1 s, {failed} failed")


asyncio.run(main())
