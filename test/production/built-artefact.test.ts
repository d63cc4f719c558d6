import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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
import { declaredTypes, parseSamples, scrape, sumOf } from '../helpers/prometheus.ts';
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
/** Each role's Prometheus endpoint (issue 13, item 4), on a port of its own. */
let metrics: { api: string; worker: string };
let driver: LifecycleDriver;
/** Tokens of the lifecycle below, which must never appear in a metric label. */
const tokensSeen: string[] = [];
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
    ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL,
    RATE_LIMIT_STORE: 'postgres',
  };
  // Test-only switches that production has no business with.
  delete env.WEBHOOK_ALLOW_PRIVATE;
  delete env.WEBHOOK_RETRY_SCALE;
  const [port, apiMetricsPort, workerMetricsPort] = await Promise.all([freePort(), freePort(), freePort()]);
  api = `http://127.0.0.1:${port}`;
  metrics = {
    api: `http://127.0.0.1:${apiMetricsPort}/metrics`,
    worker: `http://127.0.0.1:${workerMetricsPort}/metrics`,
  };
  roles.push(
    ...(await Promise.all([
      startRole(
        'api',
        { ...env, PORT: String(port), METRICS_PORT: String(apiMetricsPort) },
        { main, name: 'built api' },
      ),
      startRole(
        'worker',
        { ...env, METRICS_PORT: String(workerMetricsPort) },
        { main, name: 'built worker', timeoutMs: 240_000 },
      ),
    ])),
  );
  driver = await createDriver({ apis: [api], db: database.db, graph, appSecret });
}, 600_000);

afterAll(async () => {
  await driver?.stop({ abandon: true });
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
    tokensSeen.push(token);
    const pageUrl = `${api}/a/${token}`;
    const page = await fetch(pageUrl);
    const html = await page.text();
    expect(page.status, html).toBe(200);
    const { scripts, styles } = referencedAssets(html);
    expect(scripts.length, html).toBeGreaterThan(0);
    expect(styles.length, html).toBeGreaterThan(0);
    // The modules approval.js imports at run time (its viewer, pdf.js and its worker), named in the page's data.
    const data = JSON.parse(
      /<script type="application\/json" id="approval-data">(.*?)<\/script>/s.exec(html)![1]!,
    ) as {
      assets: Record<string, string>;
    };
    const modules = Object.values(data.assets).filter((u) => /\.m?js$/.test(u));
    expect(modules.length, html).toBeGreaterThanOrEqual(4);
    const assets = [
      ...scripts.map((src) => ({ url: new URL(src, pageUrl), type: /^text\/javascript\b/ })),
      ...styles.map((href) => ({ url: new URL(href, pageUrl), type: /^text\/css\b/ })),
      ...modules.map((u) => ({ url: new URL(u, pageUrl), type: /^text\/javascript\b/ })),
    ];
    for (const asset of assets) {
      const res = await fetch(asset.url, { headers: { 'accept-encoding': 'br' } });
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.status, `${asset.url.pathname}: ${body.toString('utf8', 0, 300)}`).toBe(200);
      expect(res.headers.get('content-type'), asset.url.pathname).toMatch(asset.type);
      expect(res.headers.get('content-encoding'), asset.url.pathname).toBe('br');
      expect(res.headers.get('cache-control'), asset.url.pathname).toBe(
        'public, max-age=31536000, immutable',
      );
      expect(body.length, asset.url.pathname).toBeGreaterThan(0);
    }
    // The page's own files are the sources, byte for byte (fetch undoes the brotli).
    for (const file of ['approval.js', 'approval.css']) {
      const [stem, ext] = file.split('.');
      const url = [...scripts, ...styles].find((u) =>
        new RegExp(`/${stem}\\.[0-9a-f]{16}\\.${ext}$`).test(u),
      )!;
      const res = await fetch(new URL(url, pageUrl));
      expect(Buffer.from(await res.arrayBuffer())).toEqual(
        await readFile(path.join(ROOT, 'src/approval-page/public', file)),
      );
    }
    // Compressed by the build (dist/precompressed), not by the running app: it made no cache of its own.
    expect((await readdir(path.join(dir, 'app', 'dist', 'precompressed'))).length).toBeGreaterThan(100);
    expect(await readdir(path.join(dir, 'data', 'asset-cache')).catch(() => [])).toEqual([]);

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
    tokensSeen.push(link.pathname.split('/')[2]!);
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

  // The scrapes below read what the document above left behind (a separate test, for a separate verdict).
  it('each process answers a Prometheus scrape showing that document, with no token in any label', async () => {
    const apiScrape = await scrape(metrics.api);
    expect(apiScrape.status).toBe(200);
    expect(apiScrape.type).toMatch(/^text\/plain; version=0\.0\.4\b/);
    const apiSamples = parseSamples(apiScrape.text);
    const requests = (route: string, method: string, status: string) =>
      sumOf(apiSamples, 'wathiq_http_request_duration_seconds_count', { route, method, status });
    // Each route by its template; the tokens of /a/{token} and /files/{token} never become labels.
    expect(requests('/api/v1/documents', 'POST', '201')).toBeGreaterThanOrEqual(1);
    expect(requests('/api/v1/documents/:id/send', 'POST', '200')).toBeGreaterThanOrEqual(1);
    expect(requests('/a/:token', 'GET', '200')).toBeGreaterThanOrEqual(1);
    expect(requests('/a/:token/complete', 'POST', '200')).toBe(1);
    expect(requests('/a/assets/:file', 'GET', '200')).toBeGreaterThanOrEqual(2);
    expect(requests('/api/v1/webhooks/whatsapp', 'POST', '200')).toBe(1);
    expect(requests('/files/:token/:filename', 'GET', '200')).toBe(1);
    expect(tokensSeen).toHaveLength(2);
    for (const token of tokensSeen) expect(apiScrape.text).not.toContain(token);
    // Documents by status, counted in PostgreSQL at scrape time (across accounts; cached for a few seconds).
    await eventually(async () => {
      const samples = parseSamples((await scrape(metrics.api)).text);
      return sumOf(samples, 'wathiq_documents', { status: 'approved' }) >= 1;
    }, 60_000);
    // The API counts no worker's work.
    expect(apiScrape.text).not.toContain('wathiq_whatsapp_sends_total');

    const workerScrape = await scrape(metrics.worker);
    expect(workerScrape.status).toBe(200);
    const workerSamples = parseSamples(workerScrape.text);
    const sent = (template: string) =>
      sumOf(workerSamples, 'wathiq_whatsapp_sends_total', { template, outcome: 'accepted' });
    expect(sent('wathiq_approval_request')).toBeGreaterThanOrEqual(1);
    expect(sent('wathiq_approval_request_approve')).toBeGreaterThanOrEqual(1);
    expect(sumOf(workerSamples, 'wathiq_whatsapp_sends_total', { outcome: 'failed' })).toBe(0);
    expect(sumOf(workerSamples, 'wathiq_finalization_duration_seconds_count')).toBe(1);
    // Archive renewals are counted from the start (none ran yet), so an alert on failures sees the first one.
    expect(
      workerSamples
        .filter((s) => s.name === 'wathiq_archive_renewals_total')
        .map((s) => `${s.labels.result}=${s.value}`)
        .sort(),
    ).toEqual(['failed=0', 'renewed=0']);
    // The Temporal SDK's own worker metrics, appended to the same endpoint.
    expect(
      workerSamples.some((s) => s.name.startsWith('temporal_workflow_task_') && s.value > 0),
      [...new Set(workerSamples.map((s) => s.name).filter((n) => n.startsWith('temporal_')))].join('\n'),
    ).toBe(true);
    expect(workerScrape.text).not.toContain('wathiq_http_request_duration_seconds');

    // Nothing but GET /metrics.
    expect((await fetch(metrics.worker, { method: 'POST' })).status).toBe(405);
    expect((await fetch(new URL('/', metrics.worker))).status).toBe(404);
  }, 120_000);

  it('every metric the Grafana dashboard queries is in a real scrape of the two processes', async () => {
    const dashboard = JSON.parse(await readFile(path.join(ROOT, 'docs/grafana-dashboard.json'), 'utf8')) as {
      panels: { targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const referenced = new Set(
      exprs.flatMap((e) => e.match(/\b(?:wathiq|temporal|process|nodejs)_\w+/g) ?? []),
    );
    const texts = await Promise.all([scrape(metrics.api), scrape(metrics.worker)]);
    const sampled = new Set(texts.flatMap((t) => parseSamples(t.text).map((s) => s.name)));
    // A family with no sample yet (no WhatsApp send or finalization has failed) is declared by its # TYPE line.
    const declared = new Map(texts.flatMap((t) => [...declaredTypes(t.text)]));
    const missing = [...referenced].filter((name) => {
      if (sampled.has(name)) return false;
      const family = name.replace(/_(bucket|sum|count)$/, '');
      const type = declared.get(name) ?? declared.get(family);
      return type === undefined || (family !== name && type !== 'histogram');
    });
    expect(missing, [...sampled].filter((n) => n.startsWith('temporal_')).join('\n')).toEqual([]);
  }, 60_000);
});
