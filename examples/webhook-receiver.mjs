// A Wathiq webhook receiver with no dependencies: verifies every delivery as docs/webhooks.md describes
// (raw bytes, HMAC-SHA256 of "timestamp.body", constant-time compare, 300 s tolerance) and prints it.
//   WATHIQ_WEBHOOK_SECRET=whsec_… PORT=4000 node examples/webhook-receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

const secret = process.env.WATHIQ_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WATHIQ_WEBHOOK_SECRET to the secret POST /webhooks returned.');
  process.exit(2);
}

/** True when a Wathiq delivery is authentic and fresh. `rawBody` is a Buffer of the bytes received. */
export function verifyWathiqWebhook(secret, headers, rawBody, toleranceSeconds = 300) {
  const timestamp = headers['x-wathiq-timestamp'];
  const signature = headers['x-wathiq-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  if (!/^[0-9]+$/.test(timestamp)) return false;
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${timestamp}.`, 'utf8');
  hmac.update(rawBody);
  const expected = Buffer.from(`sha256=${hmac.digest('hex')}`, 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  return Math.abs(Date.now() / 1000 - Number(timestamp)) <= toleranceSeconds;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks);
    if (!verifyWathiqWebhook(secret, req.headers, rawBody)) {
      console.log('refused a delivery whose signature did not verify');
      res.writeHead(400).end();
      return;
    }
    res.writeHead(204).end();
    const delivery = JSON.parse(rawBody.toString('utf8'));
    console.log(`verified ${delivery.event} ${JSON.stringify(delivery.data)}`);
  });
});
server.listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/`);
});
