/**
 * Where a document's time goes, for `bench:lifecycle -- --phases`: the driver's view (each step of a document, from
 * the create request to the workflow's result) and Temporal's (how long tasks waited to start and ran, from the
 * event times of the real histories).
 */

/**
 * A step the driver sees: its create request and its answer, the send's answer, each approval request arriving,
 * each action answered, the workflow's result.
 */
export type Mark = 'create' | 'created' | 'sent' | 'asked' | 'answered' | 'approved';

interface Summary {
  label: string;
  n: number;
  p50: number;
  mean: number;
  perDocument: number;
}

function summarize(label: string, values: number[], documents: number): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    label,
    n: sorted.length,
    p50: sorted[Math.floor(sorted.length / 2)] ?? 0,
    mean: sorted.length ? sum / sorted.length : 0,
    perDocument: documents ? sum / documents : 0,
  };
}

const line = (s: Summary) =>
  `      ${s.label.padEnd(42)} ${String(s.n).padStart(5)}×  p50 ${s.p50.toFixed(1).padStart(7)} ms  mean ${s.mean.toFixed(1).padStart(7)} ms  ${s.perDocument.toFixed(1).padStart(7)} ms per document`;

/**
 * Each document's marks in the order they happen. A step is the time from the mark before it, labelled by the pair
 * ("asked → answered" is an approver's action answered after their request arrived), per kind of document.
 */
export function createTimeline() {
  const marks = new Map<number, { kind: string; at: [Mark, number][] }>();
  return {
    mark(document: number, what: Mark, kind?: string): void {
      const entry = marks.get(document) ?? { kind: kind ?? '', at: [] };
      if (kind) entry.kind = kind;
      entry.at.push([what, performance.now()]);
      marks.set(document, entry);
    },
    /** Printable lines, per kind of document, the steps that cost the most per document first. */
    lines(): string[] {
      const out: string[] = [];
      for (const kind of [...new Set([...marks.values()].map((m) => m.kind))].sort()) {
        const documents = [...marks.values()].filter((m) => m.kind === kind);
        const steps = new Map<string, number[]>();
        for (const { at } of documents) {
          const ordered = [...at].sort((a, b) => a[1] - b[1]);
          for (let i = 1; i < ordered.length; i++) {
            const label = `${ordered[i - 1]![0]} → ${ordered[i]![0]}`;
            steps.set(label, [...(steps.get(label) ?? []), ordered[i]![1] - ordered[i - 1]![1]]);
          }
        }
        out.push(`    ${kind} documents (${documents.length}), as the driver sees them:`);
        for (const s of [...steps]
          .map(([label, values]) => summarize(label, values, documents.length))
          .sort((a, b) => b.perDocument - a.perDocument))
          out.push(line(s));
      }
      return out;
    },
  };
}

interface TimedEvent {
  eventId?: unknown;
  eventType?: unknown;
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  workflowTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  workflowTaskCompletedEventAttributes?: { startedEventId?: unknown } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskCompletedEventAttributes?: { startedEventId?: unknown } | null;
}

const KINDS = {
  wftWait: 'workflow task: scheduled → started',
  wftRun: 'workflow task: started → completed',
  activityWait: 'activity task: scheduled → started',
  activityRun: 'activity task: started → completed',
} as const;

/** Collects, over histories, how long each workflow and activity task waited to start and then ran. */
export function createTaskTimes() {
  const times: Record<keyof typeof KINDS, number[]> = {
    wftWait: [],
    wftRun: [],
    activityWait: [],
    activityRun: [],
  };
  let histories = 0;
  return {
    add(events: TimedEvent[]): void {
      histories++;
      const at = new Map<string, number>();
      for (const e of events) {
        const t = Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
        at.set(String(e.eventId), t);
        const since = (id: unknown) => t - (at.get(String(id)) ?? t);
        if (e.workflowTaskStartedEventAttributes)
          times.wftWait.push(since(e.workflowTaskStartedEventAttributes.scheduledEventId));
        else if (e.workflowTaskCompletedEventAttributes)
          times.wftRun.push(since(e.workflowTaskCompletedEventAttributes.startedEventId));
        else if (e.activityTaskStartedEventAttributes)
          times.activityWait.push(since(e.activityTaskStartedEventAttributes.scheduledEventId));
        else if (e.activityTaskCompletedEventAttributes)
          times.activityRun.push(since(e.activityTaskCompletedEventAttributes.startedEventId));
      }
    },
    lines(): string[] {
      return [
        `    Temporal's tasks, from the event times of ${histories} histories:`,
        ...(Object.keys(KINDS) as (keyof typeof KINDS)[]).map((k) =>
          line(summarize(KINDS[k], times[k], histories)),
        ),
      ];
    },
  };
}
