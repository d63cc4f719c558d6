import type { Duplex } from 'node:stream';

const STATUS: Record<string, [number, string, string]> = {
  HPE_INVALID_METHOD: [501, 'Not Implemented', 'The request method is not implemented by this server'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout'],
};

/**
 * Node's `clientError`: a request its parser refused before Koa saw it (a method name HTTP does not define,
 * malformed framing, oversized headers). Answered in the error envelope, like everything else, then closed;
 * Node's own answer would be a bare status line.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = STATUS[err.code ?? ''] ?? [400, 'Bad Request', 'Bad request'];
  const body = JSON.stringify({ success: false, error: { code: status, message, details: {} } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
