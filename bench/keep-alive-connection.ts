/**
 * One HTTP/1.1 keep-alive connection that sends GET requests one at a time and answers each one's status once its
 * body has been read to the end, dropping the body's bytes as they arrive. It allocates about the least a client
 * can for a request (the request line, and the chunks the socket reads), so a load driver built on it adds as few
 * garbage-collection pauses of its own as it can to the latencies it measures; a general client (undici) builds
 * headers, a response object and a body stream for each answer.
 *
 * An answer must give its length in `Content-Length` (Koa does for every JSON body; 204 and 304 have none): one
 * that does not, a malformed head, bytes beyond the body, or the socket closing while an answer is awaited fails
 * that request, and the connection is not used again.
 */
import net from 'node:net';

export interface KeepAliveConnection {
  /** Sends `GET path` with these headers and answers the status once the whole body is read. */
  get(path: string, headers: Record<string, string>): Promise<number>;
  close(): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** A head larger than this is no answer a read gives: the connection is failed instead of buffering on. */
const HEAD_LIMIT = 64 * 1024;

export function openKeepAliveConnection(origin: string): Promise<KeepAliveConnection> {
  const url = new URL(origin);
  const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
  let pending: { resolve: (status: number) => void; reject: (err: Error) => void } | undefined;
  let head: Buffer | undefined;
  let status = 0;
  let remaining = -1; // body bytes still to read; -1 while reading the head
  let broken: Error | undefined;

  const fail = (err: Error) => {
    broken ??= err;
    const p = pending;
    pending = undefined;
    p?.reject(err);
    socket.destroy();
  };
  const done = () => {
    const p = pending;
    pending = undefined;
    head = undefined;
    remaining = -1;
    p?.resolve(status);
  };

  socket.on('data', (chunk: Buffer) => {
    if (!pending) return fail(new Error('bytes arrived with no request waiting'));
    if (remaining >= 0) {
      if (chunk.length > remaining) return fail(new Error('bytes beyond the answer'));
      remaining -= chunk.length;
      if (remaining === 0) done();
      return;
    }
    head = head ? Buffer.concat([head, chunk]) : chunk;
    const end = head.indexOf(HEAD_END);
    if (end < 0) {
      if (head.length > HEAD_LIMIT) fail(new Error('an answer head over 64 KiB'));
      return;
    }
    const text = head.toString('latin1', 0, end);
    const line = /^HTTP\/1\.1 (\d{3})/.exec(text);
    if (!line) return fail(new Error(`an answer without a status line: ${text}`));
    status = Number(line[1]);
    // 204 and 304 never have a body; every other answer must say its length.
    const length =
      status === 204 || status === 304 ? ['', '0'] : /\r\ncontent-length:[ \t]*(\d+)/i.exec(text);
    if (!length) return fail(new Error(`an answer without Content-Length: ${text}`));
    const bodyRead = head.length - end - HEAD_END.length;
    remaining = Number(length[1]) - bodyRead;
    if (remaining < 0) return fail(new Error('bytes beyond the answer'));
    if (remaining === 0) done();
  });
  socket.on('error', (err) => fail(err));
  socket.on('close', () => fail(new Error('the connection closed')));

  const connection: KeepAliveConnection = {
    get(path, headers) {
      if (broken) return Promise.reject(broken);
      if (pending) return Promise.reject(new Error('one request at a time on a connection'));
      let request = `GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\n`;
      for (const name in headers) request += `${name}: ${headers[name]}\r\n`;
      return new Promise<number>((resolve, reject) => {
        pending = { resolve, reject };
        socket.write(`${request}\r\n`, 'latin1');
      });
    },
    close: () => socket.destroy(),
  };
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(connection));
    socket.once('error', reject);
  });
}
