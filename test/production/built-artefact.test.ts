import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  buttonReplyNotification,
  newWamid,
  signedNotification,
  startFakeGraphApi,
  type FakeGraphApi,
  type RecordedRequest,
} from '../fakes/fake-graph-api.ts';
import { eventually, linkTokenOf, quickRepliesOf, templateNameOf } from '../helpers/approval-flow.ts';
import { createDriver, waitAllApproved, type LifecycleDriver } from '../helpers/lifecycle-driver.ts';
import { pdfsig } from '../helpers/pdf-tools.ts';
import { createTestPki, type TestPki } from '../helpers/pki.ts';
import { startRole, wathiqEnv, type RunningProcess } from '../helpers/processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { freePort } from '../setup/free-port.ts';

/**
 * Issue 13, item 1: the app as an operator deploys it. The Dockerfile's build stage is followed in a fresh folder
 * (its COPY lines, node_modules in place of `npm ci`, its `RUN npm run build`), its runtime stage keeps only
 * package.json, node_modules and dist/, and `node dist/main.js api` and `node dist/main.js worker` run as two
 * processes with NODE_ENV=production, the Cloud API provider against the fake Graph API, a PKCS#12 certificate of a
 * test CA and an https PUBLIC_BASE_URL (requests go to the loopback port). One document goes to a signed download:
 * a sign approver on the approval page, whose every script and stylesheet must answer, and an approve_only approver
 * by WhatsApp button.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const PUBLIC_BASE_URL = 'https://wathiq.example.test';
const run = promisify(execFile);

let dir: string;
let database: TestDatabase;
let graph: FakeGraphApi;
let pki: TestPki;
let api: string;
let driver: LifecycleDriver;
const roles: RunningProcess[] = [];
const appSecret = `app-secret-${randomBytes(8).toString('hex')}`;

/** Follows the Dockerfile's build stage in `app`, then lays out its runtime stage in `runtime`; returns main.js. */
async function buildAsTheDockerfile(app: string, runtime: string): Promise<string> {
  const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  const [build, final] = dockerfile.split(/^FROM /m).slice(1);
  expect(build, 'a build stage').toBeDefined();
  expect(final, 'a runtime stage').toBeDefined();
  await mkdir(app, { recursive: true });
  // `RUN npm ci`: the packages this checkout already has.
  await symlink(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'), 'dir');
  for (const line of build!.split('\n')) {
    const copy = /^COPY\s+([^-].*)$/.exec(line.trim());
    if (!copy) continue;
    const parts = copy[1]!.trim().split(/\s+/);
    const dest = parts.pop()!;
    const intoDir = dest.endsWith('/') || parts.length > 1;
    for (const source of parts) {
      const target = intoDir ? path.join(app, dest, path.basename(source)) : path.join(app, dest);
      await cp(path.join(ROOT, source), target, { recursive: true });
    }
  }
  expect(build, 'the build stage runs `npm run build`').toMatch(/^RUN npm run build$/m);
  await run('npm', ['run', 'build'], { cwd: app, maxBuffer: 16 * 1024 * 1024 });

  expect(final).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
  await mkdir(runtime, { recursive: true });
  await cp(path.join(app, 'package.json'), path.join(runtime, 'package.json'));
  await symlink(path.join(ROOT, 'node_modules'), path.join(runtime, 'node_modules'), 'dir');
  await cp(path.join(app, 'dist'), path.join(runtime, 'dist'), { recursive: true });
  return path.join(runtime, 'dist', 'main.js');
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-built-'));
  const [main] = await Promise.all([
    buildAsTheDockerfile(path.join(dir, 'build'), path.join(dir, 'app')),
    (async () => {
      [database, graph, pki] = await Promise.all([
        createTestDatabase(),
        startFakeGraphApi(),
        createTestPki(path.join(dir, 'pki')),
      ]);
    })(),
  ]);
  const env: Record<string, string> = {
    ...wathiqEnv({
      databaseUrl: database.url,
      temporalAddress: inject('temporalAddress'),
      taskQueue: `built-artefact-${randomBytes(4).toString('hex')}`,
      dataDir: path.join(dir, 'data'),
      whatsapp: { ...graph, appSecret },
      signing: pki,
    }),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL,
    RATE_LIMIT_STORE: 'postgres',
  };
  // Test-only switches that production has no business with.
  delete env.WEBHOOK_ALLOW_PRIVATE;
  delete env.WEBHOOK_RETRY_SCALE;
  const port = await freePort();
  api = `http://127.0.0.1:${port}`;
  roles.push(
    ...(await Promise.all([
      startRole('api', { ...env, PORT: String(port) }, { main, name: 'built api' }),
      startRole('worker', env, { main, name: 'built worker', timeoutMs: 240_000 }),
    ])),
  );
  driver = await createDriver({ apis: [api], db: database.db, graph, appSecret });
}, 600_000);

afterAll(async () => {
  await driver?.stop();
  await Promise.all(roles.map((r) => r.kill('SIGTERM')));
  await graph?.close();
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The first approval request the fake Graph API received for `phone`. */
const approvalRequestTo = (phone: string): Promise<RecordedRequest> =>
  eventually(
    () =>
      graph.requests.find(
        (r) =>
          r.authorized &&
          (r.body as { to?: string } | undefined)?.to === phone &&
          templateNameOf(r).includes('approval_request'),
      ),
    120_000,
  );

/** `src` of every <script> and `href` of every stylesheet <link> in `html`. */
function referencedAssets(html: string): { scripts: string[]; styles: string[] } {
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].flatMap((m) => attr(m[0], 'src') ?? []);
  const styles = [...html.matchAll(/<link\b[^>]*>/g)]
    .filter((m) => attr(m[0], 'rel') === 'stylesheet')
    .flatMap((m) => attr(m[0], 'href') ?? []);
  return { scripts, styles };
}

describe('the app built as the Dockerfile builds it, run as api and worker with NODE_ENV=production', () => {
  it('takes a document from the page and a button to a signed download, the page with all its assets', async () => {
    const doc = await driver.createAndSend('parallel', ['sign', 'approve_only']);
    const [signPhone, approvePhone] = doc.phones as [string, string];

    // The sign approver opens the page: every script and stylesheet it references answers with its type.
    const signRequest = await approvalRequestTo(signPhone);
    const token = linkTokenOf(signRequest);
    const pageUrl = `${api}/a/${token}`;
    const page = await fetch(pageUrl);
    const html = await page.text();
    expect(page.status, html).toBe(200);
    const { scripts, styles } = referencedAssets(html);
    expect(scripts.length, html).toBeGreaterThan(0);
    expect(styles.length, html).toBeGreaterThan(0);
    // The modules approval.js imports at run time, from the same folder (pdf.js and its worker).
    const assets = [
      ...scripts.map((src) => ({ url: new URL(src, pageUrl), type: /^text\/javascript\b/ })),
      ...styles.map((href) => ({ url: new URL(href, pageUrl), type: /^text\/css\b/ })),
      ...['pdf.min.mjs', 'pdf.worker.min.mjs'].map((file) => ({
        url: new URL(`/a/assets/${file}`, pageUrl),
        type: /^text\/javascript\b/,
      })),
    ];
    for (const asset of assets) {
      const res = await fetch(asset.url);
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.status, `${asset.url.pathname}: ${body.toString('utf8', 0, 300)}`).toBe(200);
      expect(res.headers.get('content-type'), asset.url.pathname).toMatch(asset.type);
      expect(body.length, asset.url.pathname).toBeGreaterThan(0);
    }
    // The page's own files are the sources, byte for byte.
    for (const file of ['approval.js', 'approval.css']) {
      const res = await fetch(new URL(`/a/assets/${file}`, pageUrl));
      expect(Buffer.from(await res.arrayBuffer())).toEqual(
        await readFile(path.join(ROOT, 'src/approval-page/public', file)),
      );
    }

    const signed = await fetch(`${pageUrl}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'WathiqBuiltTest/1.0' },
      body: JSON.stringify({ typed_name: 'Built Signer' }),
    });
    expect(signed.status, await signed.clone().text()).toBe(200);

    // The approve_only approver taps Approve: a Meta-signed notification.
    const approveRequest = await approvalRequestTo(approvePhone);
    const payload = quickRepliesOf(approveRequest)[0]!;
    const { body, headers } = signedNotification(
      buttonReplyNotification({ from: approvePhone, payload, wamid: newWamid() }),
      appSecret,
    );
    const tapped = await fetch(`${api}/api/v1/webhooks/whatsapp`, { method: 'POST', headers, body });
    expect(tapped.status, await tapped.clone().text()).toBe(200);

    await waitAllApproved(database.db, [doc], 240_000);

    // The download link is on the https public address; the file is fetched from the loopback port.
    const download = await eventually(async () => {
      const res = await driver.request(`/documents/${doc.id}/download`);
      return res.status === 200 && ((await res.json()) as { data: { download_url: string } }).data;
    }, 120_000);
    expect(download.download_url.startsWith(`${PUBLIC_BASE_URL}/files/`), download.download_url).toBe(true);
    const link = new URL(download.download_url);
    const file = await fetch(`${api}${link.pathname}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^application\/pdf\b/);
    const target = path.join(dir, `${doc.reference}.pdf`);
    await writeFile(target, Buffer.from(await file.arrayBuffer()));
    const { signatures, output } = pdfsig(target, pki.nssDir);
    expect(signatures, output).toHaveLength(1);
    expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });

    expect(roles.map((r) => r.child.exitCode)).toEqual([null, null]);
  }, 600_000);
});
