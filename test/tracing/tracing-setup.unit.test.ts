import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTracingFromConfig } from '../../src/runtime/tracing.ts';
import { clientSpan } from '../../src/tracing/spans.ts';

/** Whether the process has a tracer provider that records: what startTracing registers, and shutdown removes. */
const recording = () => {
  const span = trace.getTracer('probe').startSpan('probe');
  span.end();
  return span.isRecording() || trace.isSpanContextValid(span.spanContext());
};

describe('tracing configuration', () => {
  it('without OTEL_EXPORTER_OTLP_ENDPOINT sets nothing up: no tracing config, no SDK, no-op spans', async () => {
    const config = loadConfig({ NODE_ENV: 'test', OTEL_SERVICE_NAME: 'named-but-off' });
    expect(config.tracing).toBeUndefined();
    expect(await startTracingFromConfig(config)).toBeUndefined();
    expect(recording()).toBe(false);
    // Our own spans run their work and record nothing.
    expect(
      await clientSpan('POST x', {}, (span) => Promise.resolve(span.isRecording() ? 'recorded' : 'no-op')),
    ).toBe('no-op');
  });

  it('names the service by role unless OTEL_SERVICE_NAME says, and refuses an endpoint that is not an http URL', () => {
    const env = { NODE_ENV: 'test', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' };
    expect(loadConfig(env, { role: 'api' }).tracing).toEqual({
      endpoint: 'http://collector:4318',
      serviceName: 'wathiq-api',
    });
    expect(loadConfig(env, { role: 'worker' }).tracing?.serviceName).toBe('wathiq-worker');
    expect(loadConfig(env).tracing?.serviceName).toBe('wathiq');
    expect(loadConfig({ ...env, OTEL_SERVICE_NAME: 'wathiq-eu' }, { role: 'api' }).tracing?.serviceName).toBe(
      'wathiq-eu',
    );
    for (const bad of ['collector:4318', 'grpc://collector:4317'])
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: bad })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ ...env, OTEL_SERVICE_NAME: 'no spaces' })).toThrow(ConfigError);
  });

  it('with the endpoint set, posts spans to {endpoint}/v1/traces and flushes them on shutdown', async () => {
    const received: { path: string | undefined; body: string }[] = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const { port } = collector.address() as AddressInfo;
      const config = loadConfig(
        { NODE_ENV: 'test', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
        { role: 'api' },
      );
      const tracing = await startTracingFromConfig(config);
      expect(tracing?.serviceName).toBe('wathiq-api');
      expect(recording()).toBe(true);
      // A client span inside a parent: the context manager makes the parent active across the await.
      await trace.getTracer('test').startActiveSpan('parent-span', async (parent) => {
        await clientSpan('POST outbound-probe', { 'server.address': 'example.test' }, async () => {
          await new Promise((r) => setTimeout(r, 1));
          expect(trace.getSpan(context.active())?.spanContext().traceId).toBe(parent.spanContext().traceId);
        });
        parent.end();
      });
      expect(received).toEqual([]); // batched: nothing sent yet
      await tracing!.shutdown();

      expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
      const body = received[0]!.body;
      for (const expected of ['parent-span', 'POST outbound-probe', 'wathiq-api', 'example.test'])
        expect(body).toContain(expected);
      // Shut down, the process is back to the API's no-op tracer.
      expect(recording()).toBe(false);
    } finally {
      collector.close();
    }
  });
});
