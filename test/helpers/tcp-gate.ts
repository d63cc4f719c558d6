import { connect, createServer, type Socket } from 'node:net';

/**
 * A loopback TCP gate in front of a real server (here Temporal's frontend), standing in for the network between
 * them: `forward` passes connections through; `hold` accepts connections and never answers, as a server that is
 * down behind a load balancer or a dropped route does, so every call waits out its deadline.
 */
export interface TcpGate {
  /** `127.0.0.1:<port>`, to dial instead of the target. */
  address: string;
  /** Connections held unanswered now. */
  held(): number;
  /** Drops every connection and holds the next ones unanswered. */
  hold(): void;
  /** Drops the held connections (their callers reconnect) and forwards the next ones. */
  forward(): void;
  close(): Promise<void>;
}

export async function startTcpGate(target: string): Promise<TcpGate> {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  let mode: 'forward' | 'hold' = 'forward';
  const held = new Set<Socket>();
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      held.delete(socket);
    });
    socket.on('error', () => socket.destroy());
    if (mode === 'hold') {
      held.add(socket);
      socket.resume();
      return;
    }
    const upstream = connect(port, host);
    upstream.on('error', () => socket.destroy());
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the gate has no port');
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    address: `127.0.0.1:${address.port}`,
    held: () => held.size,
    hold() {
      mode = 'hold';
      dropAll();
    },
    forward() {
      mode = 'forward';
      for (const socket of held) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll();
        server.close(() => resolve());
      }),
  };
}
