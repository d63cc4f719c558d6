import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverOnce } from '../../src/features/webhooks/deliver.ts';
import { buildEventBody } from '../../src/features/webhooks/payload.ts';
import { generateWebhookSecret, signWebhook } from '../../src/features/webhooks/signature.ts';
import { startWebhookReceiver } from '../fakes/webhook-receiver.ts';
import { KNOWN_ANSWER as K } from './known-answer.ts';

/**
 * docs/webhooks.md is what customers copy. This runs its Node and Python verification code exactly as printed
 * (extracted from the file, in separate processes) against the known answer and against real deliveries.
 */

const guidePath = path.resolve(import.meta.dirname, '../../docs/webhooks.md');

interface Case {
  secret: string;
  headers: Record<string, string>;
  body: string; // base64 of the raw bytes
  tolerance?: number;
}

const NODE_RUNNER = `
import { verifyWathiqWebhook } from './verify.mjs';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = JSON.parse(input).map((c) =>
  c.tolerance === undefined
    ? verifyWathiqWebhook(c.secret, c.headers, Buffer.from(c.body, 'base64'))
    : verifyWathiqWebhook(c.secret, c.headers, Buffer.from(c.body, 'base64'), c.tolerance),
);
process.stdout.write(JSON.stringify(results));
`;

const PYTHON_RUNNER = `
import base64, json, sys
sys.path.insert(0, sys.argv[1])
from verify import verify_wathiq_webhook

class Headers(dict):
    """Case-insensitive look-ups, as Flask's and Django's request.headers."""
    def get(self, name, default=None):
        return next((v for k, v in self.items() if k.lower() == name.lower()), default)

results = []
for c in json.load(sys.stdin):
    args = [c["secret"], Headers(c["headers"]), base64.b64decode(c["body"])]
    if "tolerance" in c:
        args.append(c["tolerance"])
    results.append(verify_wathiq_webhook(*args))
print(json.dumps(results))
`;

function codeBlockAfter(markdown: string, marker: string, language: string): string {
  const at = markdown.indexOf(marker);
  expect(at, `marker ${marker} in docs/webhooks.md`).toBeGreaterThan(-1);
  const fence = '```' + language + '\n';
  const start = markdown.indexOf(fence, at) + fence.length;
  const end = markdown.indexOf('\n```', start);
  return markdown.slice(start, end + 1);
}

function run(command: string, args: string[], cwd: string, stdin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { cwd, timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} failed: ${stderr || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(stdin);
  });
}

const hasPython = spawnSync('python3', ['--version']).status === 0;

let guide: string;
let dir: string;
const verifyWithNode = async (cases: Case[]) =>
  JSON.parse(await run(process.execPath, ['runner.mjs'], dir, JSON.stringify(cases))) as boolean[];
const verifyWithPython = async (cases: Case[]) =>
  JSON.parse(await run('python3', ['runner.py', dir], dir, JSON.stringify(cases))) as boolean[];

beforeAll(async () => {
  guide = await readFile(guidePath, 'utf8');
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-guide-'));
  await writeFile(path.join(dir, 'verify.mjs'), codeBlockAfter(guide, '<!-- verify-node', 'js'));
  await writeFile(path.join(dir, 'runner.mjs'), NODE_RUNNER);
  await writeFile(path.join(dir, 'verify.py'), codeBlockAfter(guide, '<!-- verify-python', 'python'));
  await writeFile(path.join(dir, 'runner.py'), PYTHON_RUNNER);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the receiver guide (docs/webhooks.md)', () => {
  it('prints the known-answer vector the tests check', () => {
    expect(guide).toContain(`secret: \`${K.secret}\``);
    expect(guide).toContain(`\`X-Wathiq-Timestamp\`: \`${K.timestamp}\``);
    expect(codeBlockAfter(guide, 'body (356 bytes', 'text')).toBe(`${K.body}\n`);
    expect(codeBlockAfter(guide, 'the signature is', 'text')).toBe(`${K.signature}\n`);
    expect(guide).toContain(`-hmac '${K.secret}'`);
  });

  /** Cases whose expected answers do not depend on the language: a delivery made now, and its alterations. */
  async function cases(): Promise<{ cases: Case[]; expected: boolean[] }> {
    const secret = generateWebhookSecret();
    const receiver = await startWebhookReceiver({ secret });
    try {
      const body = buildEventBody({
        deliveryId: 9,
        event: 'approver.completed',
        sequence: 3,
        createdAt: new Date(),
        data: {
          document: { title_ar: 'عقد توريد', note: 'emoji 🧾 and "quotes"' },
          approver: { name_ar: 'سارة' },
        },
      });
      const result = await deliverOnce({
        url: receiver.url,
        event: 'approver.completed',
        deliveryId: 9,
        body,
        secret,
        allowPrivate: true,
      });
      expect(result.ok).toBe(true);
      const [req] = await receiver.waitForRequests(1);
      expect(req!.verification?.ok).toBe(true);
      const headers = req!.headers as Record<string, string>;
      const raw = req!.rawBody;
      const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
      const now = Math.floor(Date.now() / 1000);
      const signedAt = (t: number) => ({
        'x-wathiq-timestamp': String(t),
        'x-wathiq-signature': signWebhook({ secret, timestamp: t, body: raw }),
      });
      const list: [Case, boolean][] = [
        [
          {
            secret: K.secret,
            headers: { 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': K.signature },
            body: b64(K.body),
            tolerance: 10 ** 10,
          },
          true,
        ],
        [
          {
            secret: K.secret,
            headers: { 'x-wathiq-timestamp': String(K.timestamp), 'x-wathiq-signature': K.signature },
            body: b64(K.body),
          },
          false,
        ],
        [{ secret, headers, body: b64(raw) }, true],
        [{ secret, headers, body: b64(JSON.stringify(JSON.parse(raw.toString('utf8')), null, 2)) }, false],
        [{ secret, headers, body: b64(Buffer.concat([raw, Buffer.from(' ')])) }, false],
        [{ secret: generateWebhookSecret(), headers, body: b64(raw) }, false],
        [
          {
            secret,
            headers: { ...headers, 'x-wathiq-signature': 'sha256=' + '0'.repeat(64) },
            body: b64(raw),
          },
          false,
        ],
        [{ secret, headers: signedAt(now - 100), body: b64(raw) }, true],
        [{ secret, headers: signedAt(now - 400), body: b64(raw) }, false],
        [{ secret, headers: signedAt(now + 400), body: b64(raw) }, false],
        [{ secret, headers: { 'x-wathiq-timestamp': String(now) }, body: b64(raw) }, false],
      ];
      return { cases: list.map(([c]) => c), expected: list.map(([, e]) => e) };
    } finally {
      await receiver.close();
    }
  }

  it('its Node.js code verifies real deliveries and refuses altered, foreign and stale ones', async () => {
    const { cases: c, expected } = await cases();
    expect(await verifyWithNode(c)).toEqual(expected);
  });

  it.skipIf(!hasPython)('its Python code gives the same answers', async () => {
    const { cases: c, expected } = await cases();
    expect(await verifyWithPython(c)).toEqual(expected);
  });
});
