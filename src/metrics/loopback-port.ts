import net from 'node:net';

/**
 * A port free on 127.0.0.1 right now, for an exporter that must be given a port up front (the Temporal SDK's
 * Prometheus exporter binds the address it is given and cannot report an ephemeral one). Another process could
 * take the port in between; start-up then fails loudly rather than serving someone else's metrics.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
