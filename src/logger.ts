import { AsyncLocalStorage } from 'node:async_hooks';
import { asyncLocalStorage as activityContext } from '@temporalio/activity';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';
import { redactLogLine } from './domain/log-redaction.ts';

export type { Logger };

export { redactTokens } from './domain/log-redaction.ts';

/** What a request's log lines carry: its id, and the document it turned out to concern. */
export interface LogContext {
  request_id?: string;
  document_id?: string;
}

const requestContext = new AsyncLocalStorage<LogContext>();

/** Runs `work` with `context` added to every log line written while it runs (a request, in the API). */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  return requestContext.run(context, work);
}

/** Adds fields (a document id found by a route) to the current request's log lines from now on. */
export function addToLogContext(fields: LogContext): void {
  const current = requestContext.getStore();
  if (current) Object.assign(current, fields);
}

const DOCUMENT_WORKFLOW = /^document-([0-9a-f-]{36})$/i;

/** Inside an activity: its workflow, and the document when the workflow is a document's approval workflow. */
function activityFields(): Record<string, string> {
  // The store Context.current() reads, read without its throw outside an activity (every API log line).
  const info = activityContext.getStore()?.info;
  if (!info) return {};
  const workflowId = info.workflowExecution?.workflowId;
  if (!workflowId) return { activity_type: info.activityType };
  const documentId = DOCUMENT_WORKFLOW.exec(workflowId)?.[1];
  return {
    workflow_id: workflowId,
    activity_type: info.activityType,
    ...(documentId ? { document_id: documentId } : {}),
  };
}

/** Every line: the request's fields in the API, the activity's in the worker (none elsewhere). */
function contextFields(): Record<string, unknown> {
  const request = requestContext.getStore();
  return { ...activityFields(), ...request };
}

/**
 * Writes each finished line to `destination` without tokens or phone numbers (domain/log-redaction.ts): messages,
 * URLs, errors and stacks alike.
 */
function redacting(destination: DestinationStream): DestinationStream {
  return { write: (line: string) => destination.write(redactLogLine(line)) };
}

/**
 * Structured JSON logs (pino): cheap on the hot path and readable by any log pipeline. Lines written during a
 * request carry `request_id` (and `document_id` once known); lines written in an activity carry `workflow_id`
 * (and `document_id` for a document's workflow). `destination` is stdout unless a test passes its own.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  bindings: Record<string, unknown> = {},
  destination: DestinationStream = pino.destination(1),
): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'wathiq', ...bindings },
      mixin: contextFields,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          '*.password',
          '*.api_secret',
          '*.secret',
        ],
        censor: '[redacted]',
      },
    },
    redacting(destination),
  );
}
