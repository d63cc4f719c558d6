import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A port for a server a test starts, free on 127.0.0.1 now, chosen where no one else will take it before that server
 * binds it. A port the kernel hands out for port 0 lies in its ephemeral range, the range it also draws from for
 * every outgoing connection's local port: between our probe's close and the child's bind, any connection made on the
 * machine (three test files run at once, each with PostgreSQL, Temporal and HTTP clients) can take it, and the child
 * then fails with EADDRINUSE. CI saw that for `npm start`'s API and for the production-shaped Temporal's frontend.
 * So the port is drawn at random below the ephemeral range, probed by a bind, and never handed out twice by this
 * process (a caller may ask for several before it starts anything). The service's own `freeLoopbackPort` (one port,
 * for the Temporal SDK's metrics exporter) keeps the kernel's choice: on a server, ports below the ephemeral range
 * are where other services listen, and a rare collision there fails the start loudly.
 */
export async function freePort(): Promise<number> {
  const [low, high] = ASSIGNABLE;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port on 127.0.0.1 between ${low} and ${high} after 200 tries`);
}

const handedOut = new Set<number>();

/** The kernel's ephemeral range: Linux says where it is; macOS and Windows use IANA's, 49152–65535. */
export function ephemeralRange(
  procFile = '/proc/sys/net/ipv4/ip_local_port_range',
): readonly [number, number] {
  try {
    const [low, high] = readFileSync(procFile, 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low! > 1024 && high! >= low!) return [low!, high!];
  } catch {
    // Not Linux, or not readable: the IANA range below.
  }
  return [49152, 65535];
}

/**
 * Where test servers take their ports: from 20000 up to the ephemeral range (on Linux's default, 20000–32767), or,
 * should the ephemeral range start too low to leave room below it, the ports above it.
 */
export function assignableRange([ephemeralLow, ephemeralHigh]: readonly [number, number]): readonly [
  number,
  number,
] {
  if (ephemeralLow - 1 - 20000 >= 1000) return [20000, ephemeralLow - 1];
  if (65535 - (ephemeralHigh + 1) >= 1000) return [ephemeralHigh + 1, 65535];
  // No room either side: any unprivileged port, the bind probe still checks it.
  return [10000, 65535];
}

const ASSIGNABLE = assignableRange(ephemeralRange());

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}
