import { ApplicationFailure } from '@temporalio/workflow';
import {
  REFUSAL_MESSAGES,
  type ApprovalWorkflowInput,
  type FinalizationFailure,
  type FinalizeWithCopiesResult,
  type Refusal,
} from '../definitions.ts';
import type { ApprovalState } from './approval-state.ts';
import type { ApprovalEffects } from './effects.ts';

/**
 * What the parts of one approval run (its approval requests, its finalization) see of the run that owns the state:
 * they read the state, and change it only through the run's methods.
 */
export interface RunContext {
  readonly input: ApprovalWorkflowInput;
  readonly workflowId: string;
  readonly state: ApprovalState;
  /** Set once the run has begun (its policies read). */
  readonly effects: ApprovalEffects;
  /**
   * Runs a read-model write; when it exhausts its policy the run parks in `attention` until an operator's
   * `retryFinalization`, then tries again.
   */
  durably<T>(activity: string, run: () => Promise<T>): Promise<T>;
  publishAttention(value: string | null): void;
  /** The approver was asked (or their request gave up): they count as notified. */
  notified(approverId: string): void;
  /** The document is finalized; `result` says what became of the signed copies. */
  approve(result: FinalizeWithCopiesResult): void;
  /** The finalization failed for good: the document waits for a retry or a void. */
  failFinalization(failure: FinalizationFailure): void;
}

export function refuse(refusal: Refusal): never {
  throw ApplicationFailure.create({ type: refusal, message: REFUSAL_MESSAGES[refusal], nonRetryable: true });
}

/** The innermost message of an activity's failure (its last attempt's error, under a time-out). */
export function failureMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.message) message = e.message;
  return message;
}
