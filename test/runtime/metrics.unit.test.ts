import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { AppState } from '../../src/http/context.ts';
import { methodGuard } from '../../src/http/methods.ts';
import { httpMetrics, routeTemplate, UNMATCHED_ROUTE } from '../../src/http/metrics.ts';
import {
  createHttpMetrics,
  createWorkerMetrics,
  registerDocumentsGauge,
  WEBHOOK_ATTEMPT_OUTCOMES,
} from '../../src/metrics/metrics.ts';
import { startMetricsServer, type RunningMetricsServer } from '../../src/metrics/server.ts';
import { attemptOutcome } from '../../src/features/webhooks/activities.ts';
import { DELIVERY_ERROR_CLASSES } from '../../src/features/webhooks/deliver.ts';
import { meteredProvider, templateNames, WhatsAppSendError } from '../../src/whatsapp/index.ts';
import { parseSamples, scrape, sumOf } from '../helpers/prometheus.ts';
import { PRODUCTION_ENV } from '../helpers/production-env.ts';

/** The metrics' configuration, their route labels (never a path, never a token), the endpoint. */

const PRODUCTION = PRODUCTION_ENV;

function issuesOf(env: Record<string, string>, role?: 'all' | 'api' | 'worker'): string[] {
  try {
    loadConfig(env, { role });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe('METRICS_PORT and METRICS_HOST', () => {
  it('are off outside production unless set, and on at 9464 on loopback in production', () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ NODE_ENV: 'test' }).metrics).toBeUndefined();
    expect(loadConfig(PRODUCTION).metrics).toEqual({
      host: '127.0.0.1',
      port: 9464,
      documentsCacheMs: 15_000,
    });
    expect(loadConfig({ METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' }).metrics).toMatchObject({
      host: '0.0.0.0',
      port: 9100,
    });
    expect(loadConfig({ METRICS_PORT: '0' }).metrics?.port).toBe(0);
    expect(loadConfig({ ...PRODUCTION, METRICS_PORT: 'off' }).metrics).toBeUndefined();
    expect(
      loadConfig({ METRICS_PORT: '9100', METRICS_DOCUMENTS_CACHE_SECONDS: '2.5' }).metrics,
    ).toMatchObject({
      documentsCacheMs: 2500,
    });
  });

  it('refuse what is not a port, and the API port itself, naming the variable', () => {
    expect(issuesOf({ METRICS_PORT: 'yes' })).toEqual([expect.stringMatching(/^METRICS_PORT: /)]);
    expect(issuesOf({ METRICS_PORT: '70000' })).toEqual([expect.stringMatching(/^METRICS_PORT: /)]);
    expect(issuesOf({ METRICS_PORT: '3000' })).toEqual([
      expect.stringMatching(/^METRICS_PORT: 3000 is the API's PORT/),
    ]);
    expect(issuesOf({ ...PRODUCTION, PORT: '9464' }, 'api')).toEqual([
      expect.stringMatching(/^METRICS_PORT: /),
    ]);
    // A worker serves no API: its metrics may take the port number the API processes use.
    expect(issuesOf({ METRICS_PORT: '3000' }, 'worker')).toEqual([]);
  });
});

describe('WORKER_HEALTH_PORT and WORKER_HEALTH_HOST', () => {
  it('are off unless set, and give the worker a health endpoint of its own when set', () => {
    expect(loadConfig({}).workerHealth).toBeUndefined();
    expect(loadConfig(PRODUCTION).workerHealth).toBeUndefined();
    expect(loadConfig({ WORKER_HEALTH_PORT: '8081' }).workerHealth).toEqual({
      host: '127.0.0.1',
      port: 8081,
    });
    expect(loadConfig({ WORKER_HEALTH_PORT: '0', WORKER_HEALTH_HOST: '0.0.0.0' }).workerHealth).toEqual({
      host: '0.0.0.0',
      port: 0,
    });
  });

  it('refuse what is not a port, and the metrics port, naming the variable', () => {
    expect(issuesOf({ WORKER_HEALTH_PORT: '{"__proto__":1}' })).toEqual([
      expect.stringMatching(/^WORKER_HEALTH_PORT: /),
    ]);
    expect(issuesOf({ WORKER_HEALTH_PORT: '9'.repeat(10_000) })).toEqual([
      expect.stringMatching(/^WORKER_HEALTH_PORT: /),
    ]);
    expect(issuesOf({ ...PRODUCTION, WORKER_HEALTH_PORT: '9464' })).toEqual([
      expect.stringMatching(/^WORKER_HEALTH_PORT: 9464 is METRICS_PORT/),
    ]);
    // Port 0 takes any free port, so two endpoints asking for it never clash.
    expect(issuesOf({ METRICS_PORT: '0', WORKER_HEALTH_PORT: '0' })).toEqual([]);
  });
});

const TOKEN = 'q7Vb3kXo9PzL2mWn8RtY5uHs1JcA6dEf4GiK0lMp';

/** Routers shaped like the app's: prefixes, nested routers, overlapping templates, token parameters. */
function appRouters() {
  const page = new Router<AppState>({ prefix: '/a' });
  page.get('/assets/:file', (ctx) => void (ctx.body = 'asset'));
  page.get('/:token', (ctx) => void (ctx.body = 'page'));
  page.post('/:token/complete', (ctx) => void (ctx.body = 'done'));
  const files = new Router<AppState>({ prefix: '/files' });
  files.get('/:token/:filename', (ctx) => {
    ctx.status = 404;
    ctx.body = 'no such file';
  });
  const documents = new Router<AppState>();
  documents.get('/documents/:id', (ctx) => void (ctx.body = 'doc'));
  documents.post('/documents/:id/send', (ctx) => void (ctx.body = 'sent'));
  documents.get('/webhooks/events', (ctx) => void (ctx.body = 'events'));
  documents.get('/webhooks/:id', (ctx) => void (ctx.body = 'webhook'));
  const api = new Router<AppState>({ prefix: '/api/v1' });
  api.use(async (ctx, next) => {
    // Like authenticate: middleware of the router, answering before the route runs.
    if (ctx.get('authorization') === '') {
      ctx.status = 401;
      ctx.body = 'unauthorized';
      return;
    }
    await next();
  });
  api.use(documents.routes());
  return [page, files, api];
}

describe('route labels', () => {
  let server: Server;
  let base: string;
  let registry: Registry;

  beforeAll(async () => {
    registry = new Registry();
    const routers = appRouters();
    const app = new Koa<AppState>();
    app.silent = true;
    app.use(httpMetrics(createHttpMetrics(registry), routers));
    app.use(methodGuard(routers));
    for (const router of routers) app.use(router.routes());
    const handle = app.callback();
    server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('pick the template of the route that answers, most specific first, and a fixed label for none', () => {
    const [page, files, api] = appRouters() as [Router<AppState>, Router<AppState>, Router<AppState>];
    const label = (router: Router<AppState>, path: string, method: string) =>
      routeTemplate(router.match(path, method).path, method);
    expect(label(page, `/a/${TOKEN}`, 'GET')).toBe('/a/:token');
    expect(label(page, '/a/assets/approval.js', 'GET')).toBe('/a/assets/:file');
    expect(label(page, `/a/${TOKEN}/complete`, 'POST')).toBe('/a/:token/complete');
    expect(label(files, `/files/${TOKEN}/WQT-2026-000001.pdf`, 'GET')).toBe('/files/:token/:filename');
    expect(label(api, '/api/v1/webhooks/events', 'GET')).toBe('/api/v1/webhooks/events');
    expect(label(api, `/api/v1/webhooks/${TOKEN}`, 'GET')).toBe('/api/v1/webhooks/:id');
    // A method the route does not take still names the route (405), not the path.
    expect(label(api, `/api/v1/documents/${TOKEN}`, 'DELETE')).toBe('/api/v1/documents/:id');
    expect(label(api, `/api/v1/nothing/${TOKEN}`, 'GET')).toBe(UNMATCHED_ROUTE);
    expect(routeTemplate([], 'GET')).toBe(UNMATCHED_ROUTE);
  });

  it('label every answer by method, template and status, and never carry a token or a path', async () => {
    const auth = { authorization: 'Bearer x' };
    const calls: [string, RequestInit?][] = [
      [`/a/${TOKEN}`],
      [`/a/${TOKEN}/complete`, { method: 'POST' }],
      ['/a/assets/approval.js'],
      [`/files/${TOKEN}/WQT-2026-000001.pdf`],
      [`/api/v1/documents/${TOKEN}`, { headers: auth }],
      [`/api/v1/documents/${TOKEN}`], // 401 from the router's middleware
      [`/api/v1/documents/${TOKEN}`, { method: 'DELETE' }], // 405 from the method guard
      [`/api/v1/documents/${TOKEN}/send`, { method: 'OPTIONS' }], // 204 from the method guard
      [`/${TOKEN}`],
      [`/api/v1/${TOKEN}/x`, { headers: auth }],
      [`/a/${TOKEN}`, { method: 'PROPFIND' }],
    ];
    for (const [path, init] of calls) await (await fetch(`${base}${path}`, init)).arrayBuffer();

    const text = await registry.metrics();
    expect(text).not.toContain(TOKEN);
    const samples = parseSamples(text).filter((s) => s.name === 'wathiq_http_request_duration_seconds_count');
    const seen = samples.map((s) => `${s.labels.method} ${s.labels.route} ${s.labels.status} ${s.value}`);
    expect(seen.sort()).toEqual(
      [
        'GET /a/:token 200 1',
        'POST /a/:token/complete 200 1',
        'GET /a/assets/:file 200 1',
        'GET /files/:token/:filename 404 1',
        'GET /api/v1/documents/:id 200 1',
        'GET /api/v1/documents/:id 401 1',
        'DELETE /api/v1/documents/:id 405 1',
        'OPTIONS /api/v1/documents/:id/send 204 1',
        `GET ${UNMATCHED_ROUTE} 404 2`,
        'OTHER /a/:token 501 1',
      ].sort(),
    );
    expect(sumOf(parseSamples(text), 'wathiq_http_request_duration_seconds_bucket', { le: '+Inf' })).toBe(11);
  });
});

describe('the metrics endpoint', () => {
  let endpoint: RunningMetricsServer;
  let counts = 0;
  let fail = false;
  let clock = 0;

  beforeAll(async () => {
    const registry = new Registry();
    registerDocumentsGauge(registry, {
      count: () => {
        counts++;
        return fail
          ? Promise.reject(new Error('database down'))
          : Promise.resolve({ approved: counts, legacy_status: 1 });
      },
      statuses: ['draft', 'approved'],
      cacheMs: 10_000,
      onError: () => undefined,
      now: () => clock,
    });
    endpoint = await startMetricsServer({
      registry,
      host: '127.0.0.1',
      port: 0,
      sources: [
        () => Promise.resolve('# TYPE temporal_test gauge\ntemporal_test 7'),
        () => Promise.reject(new Error('down')),
      ],
    });
  });
  afterAll(() => endpoint.stop());

  it('answers GET /metrics with its registry and its sources, and nothing else', async () => {
    const first = await scrape(endpoint.url);
    expect(first.status).toBe(200);
    expect(first.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseSamples(first.text);
    expect(sumOf(samples, 'temporal_test')).toBe(7);
    expect(sumOf(samples, 'wathiq_documents', { status: 'approved' })).toBe(1);
    expect(sumOf(samples, 'wathiq_documents', { status: 'draft' })).toBe(0);
    expect(sumOf(samples, 'wathiq_documents', { status: 'legacy_status' })).toBe(1);

    expect((await fetch(endpoint.url, { method: 'POST' })).status).toBe(405);
    expect((await fetch(endpoint.url.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(endpoint.url.replace('/metrics', '/metrics/x'))).status).toBe(404);
  });

  it('counts documents at most once per cache period, and keeps the last counts when a count fails', async () => {
    clock += 10_000;
    const before = counts;
    const values = async () => parseSamples((await scrape(endpoint.url)).text);
    expect(sumOf(await values(), 'wathiq_documents', { status: 'approved' })).toBe(before + 1);
    // Within the cache period, scrapes (even at once) reuse that count.
    await Promise.all([values(), values(), values()]);
    clock += 9_999;
    expect(sumOf(await values(), 'wathiq_documents', { status: 'approved' })).toBe(before + 1);
    expect(counts).toBe(before + 1);
    clock += 1;
    expect(sumOf(await values(), 'wathiq_documents', { status: 'approved' })).toBe(before + 2);

    fail = true;
    clock += 10_000;
    const samples = await values();
    expect(counts).toBe(before + 3);
    expect(sumOf(samples, 'wathiq_documents_count_failures_total')).toBe(1);
    expect(sumOf(samples, 'wathiq_documents', { status: 'approved' })).toBe(before + 2);
    // A failed count is not retried before the cache period is over either.
    await values();
    expect(counts).toBe(before + 3);
  });
});

describe('worker counters', () => {
  it('count WhatsApp sends by template, and failures by reason class and retryability', async () => {
    const registry = new Registry();
    const templates = loadConfig({}).whatsapp.templates;
    const metrics = createWorkerMetrics(registry, { templates: templateNames(templates) });
    const answers: (Error | undefined)[] = [
      undefined,
      new WhatsAppSendError('Meta refused', { retryable: false, reason: 'graph_error', code: 131026 }),
      new Error('socket hang up'),
    ];
    // The provider is the outside border: one that answers, refuses, then breaks.
    const provider = meteredProvider(
      {
        name: 'cloud',
        send: () => {
          const answer = answers.shift();
          return answer ? Promise.reject(answer) : Promise.resolve({ wamid: 'wamid.1' });
        },
      },
      metrics.whatsapp,
      templates,
    );
    const notice = (actionType: 'sign' | 'approve_only') => ({
      kind: 'approval_request' as const,
      accountId: 'a',
      documentId: 'd',
      approverId: 'p',
      phone: '966501234567',
      language: 'en' as const,
      approverName: 'Sara',
      documentTitle: 'Contract',
      reference: 'WQT-2026-000001',
      linkToken: TOKEN,
      actionType,
      idempotencyKey: 'p:approval_request:1',
    });
    await provider.send(notice('sign'));
    await expect(provider.send(notice('approve_only'))).rejects.toThrow('Meta refused');
    await expect(provider.send(notice('approve_only'))).rejects.toThrow('socket hang up');

    const text = await registry.metrics();
    expect(text).not.toContain(TOKEN);
    const samples = parseSamples(text);
    const sends = (template: string, outcome: string) =>
      sumOf(samples, 'wathiq_whatsapp_sends_total', { template, outcome });
    expect(sends('wathiq_approval_request', 'accepted')).toBe(1);
    expect(sends('wathiq_approval_request_approve', 'failed')).toBe(2);
    expect(sends('wathiq_reminder', 'accepted')).toBe(0); // every template's series exists from the start
    const failures = samples.filter((s) => s.name === 'wathiq_whatsapp_send_failures_total');
    expect(failures.map((s) => s.labels)).toEqual([
      { template: 'wathiq_approval_request_approve', reason: 'graph_error', retryable: 'false' },
      { template: 'wathiq_approval_request_approve', reason: 'network', retryable: 'true' },
    ]);
  });

  it('class webhook attempts by outcome: success, status class or error class', () => {
    expect(attemptOutcome({ ok: true, status: 204 })).toBe('success');
    expect(attemptOutcome({ ok: false, status: 302, errorClass: 'http_status' })).toBe('http_3xx');
    expect(attemptOutcome({ ok: false, status: 410, errorClass: 'http_status' })).toBe('http_4xx');
    expect(attemptOutcome({ ok: false, status: 503, errorClass: 'http_status' })).toBe('http_5xx');
    expect(attemptOutcome({ ok: false, status: 101, errorClass: 'http_status' })).toBe('http_other');
    expect(attemptOutcome({ ok: false, errorClass: 'timeout' })).toBe('timeout');
    expect(attemptOutcome({ ok: false, errorClass: 'blocked_address' })).toBe('blocked_address');
    for (const errorClass of DELIVERY_ERROR_CLASSES) {
      expect(WEBHOOK_ATTEMPT_OUTCOMES).toContain(
        attemptOutcome({ ok: false, status: errorClass === 'http_status' ? 500 : undefined, errorClass }),
      );
    }
  });
});
