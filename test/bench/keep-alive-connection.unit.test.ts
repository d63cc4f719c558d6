import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeepAliveConnection } from '../../bench/keep-alive-connection.ts';

/** A real HTTP server whose answer each path chooses; it counts the connections it accepted. */
let server: http.Server;
let origin: string;
let accepted = 0;
const seen: { path: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ path: req.url!, authorization: req.headers.authorization });
    if (req.url === '/big') {
      // 1 MiB in 64 KiB writes: the body arrives over many reads of the socket.
      res.writeHead(200, { 'content-length': String(1 << 20) });
      for (let i = 0; i < 16; i++) res.write(Buffer.alloc(1 << 16, i));
      return res.end();
    }
    if (req.url === '/chunked') {
      res.writeHead(200); // no Content-Length: Node sends the body chunked
      res.write('part');
      return res.end('rest');
    }
    if (req.url === '/empty') return res.writeHead(204).end();
    if (req.url === '/hang-up') return req.socket.destroy();
    const body = JSON.stringify({ path: req.url });
    res.writeHead(req.url === '/missing' ? 404 : 200, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
  });
  server.on('connection', () => accepted++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("bench:lifecycle's keep-alive read connection", () => {
  it('answers each status once the body is read, on one connection, with the headers it was given', async () => {
    const before = accepted;
    const connection = await openKeepAliveConnection(origin);
    expect(await connection.get('/a', { authorization: 'Bearer one' })).toBe(200);
    expect(await connection.get('/missing', { authorization: 'Bearer two' })).toBe(404);
    expect(await connection.get('/big', {})).toBe(200);
    expect(await connection.get('/empty', {})).toBe(204);
    expect(await connection.get('/b', {})).toBe(200);
    connection.close();
    expect(accepted - before).toBe(1);
    expect(seen.slice(-5).map((s) => s.path)).toEqual(['/a', '/missing', '/big', '/empty', '/b']);
    expect(seen.at(-5)!.authorization).toBe('Bearer one');
    expect(seen.at(-4)!.authorization).toBe('Bearer two');
  });

  it('fails an answer without Content-Length, and the connection stays failed', async () => {
    const connection = await openKeepAliveConnection(origin);
    await expect(connection.get('/chunked', {})).rejects.toThrow(/Content-Length/);
    await expect(connection.get('/a', {})).rejects.toThrow();
  });

  it('fails the request when the server closes the connection instead of answering', async () => {
    const connection = await openKeepAliveConnection(origin);
    await expect(connection.get('/hang-up', {})).rejects.toThrow(/closed|reset/);
  });

  it('fails bytes beyond the answer, and refuses a second request while one waits', async () => {
    // A raw server that answers with more bytes than its Content-Length says.
    const liar = net.createServer((socket) =>
      socket.once('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokEXTRA')),
    );
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    try {
      const connection = await openKeepAliveConnection(
        `http://127.0.0.1:${(liar.address() as AddressInfo).port}`,
      );
      const first = connection.get('/x', {});
      await expect(connection.get('/y', {})).rejects.toThrow(/one request at a time/);
      await expect(first).rejects.toThrow(/beyond the answer/);
    } finally {
      await new Promise((resolve) => liar.close(resolve));
    }
  });

  it('refuses to connect where nothing listens', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(openKeepAliveConnection(`http://127.0.0.1:${port}`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
