/** A port free on 127.0.0.1 now: the service's own helper (the Temporal SDK's metrics exporter needs one too). */
export { freeLoopbackPort as freePort } from '../../src/metrics/loopback-port.ts';
