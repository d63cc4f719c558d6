import type { Duplex } from 'node:stream';
import { AppError, errorEnvelope, type ErrorType } from '../errors.ts';

const STATUS: Record<string, [ErrorType, string, string]> = {
  HPE_INVALID_METHOD: [
    'not_implemented',
    'Not Implemented',
    'The request method is not implemented by this server',
  ],
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'Request Header Fields Too Large', 'Request headers too large'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'Request Timeout', 'Request timeout'],
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
  const [type, reason, message] = STATUS[err.code ?? ''] ?? ['bad_request', 'Bad Request', 'Bad request'];
  const error = new AppError(type, message);
  const body = JSON.stringify(errorEnvelope(error));
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
