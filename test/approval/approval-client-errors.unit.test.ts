import { status as grpcStatus, Metadata } from '@grpc/grpc-js';
import {
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { answerLost, ApprovalRefused, createApprovalClient } from '../../src/features/approval/client.ts';
import { AppError } from '../../src/errors.ts';

/**
 * How the approval client words what an update call ends with, for its callers (the page, the WhatsApp webhook,
 * the API). The client's Temporal side is a stand-in that fails the update call the way @temporalio/client does.
 */
function clientFailingWith(error: Error) {
  const temporal = {
    withDeadline: <T>(_deadline: number, run: () => Promise<T>) => run(),
    workflow: { getHandle: () => ({ executeUpdate: () => Promise.reject(error) }) },
  } as unknown as Client;
  return createApprovalClient({ client: temporal, taskQueue: 'unit' });
}

/** A gRPC error as grpc-js gives it, wrapped as the Temporal client wraps an update call's failure. */
function grpcFailure(code: grpcStatus, details: string): ServiceError {
  const cause = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() });
  return new ServiceError('Workflow Update failed', { cause });
}

const act = (error: Error) =>
  clientFailingWith(error).act('00000000-0000-4000-8000-000000000000', {
    approverId: '00000000-0000-4000-8000-000000000001',
    kind: 'complete',
    evidenceId: '00000000-0000-4000-8000-000000000002',
  });

describe('the approval client on a failed update call', () => {
  it('an update Temporal aborted (the workflow task holding it failed) is a 503: asking again is safe', async () => {
    const err = await act(
      grpcFailure(grpcStatus.FAILED_PRECONDITION, 'unexpected workflow task failure'),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'unavailable', status: 503 });
    // Callers that keep what they stored on a lost answer (the delegation row) see it as one.
    expect(answerLost(err)).toBe(true);
  });

  it('an update call cancelled on its way (gRPC CANCELLED, "Call cancelled") is a 503 whose answer was lost', async () => {
    const cancelled = new WorkflowUpdateRPCTimeoutOrCancelledError('Call cancelled', {
      cause: Object.assign(new Error('1 CANCELLED: Call cancelled'), {
        code: grpcStatus.CANCELLED,
        details: 'Call cancelled',
        metadata: new Metadata(),
      }),
    });
    const err = await act(cancelled).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'unavailable', status: 503 });
    expect(answerLost(err)).toBe(true);
  });

  it('a refusal of the workflow stays a refusal, and a handler that failed otherwise is not hidden', async () => {
    const refused = new WorkflowUpdateFailedError(
      'update failed',
      ApplicationFailure.create({ type: 'already_acted' }),
    );
    await expect(act(refused)).rejects.toBeInstanceOf(ApprovalRefused);
    await expect(act(refused)).rejects.toMatchObject({ refusal: 'already_acted' });

    const broken = new WorkflowUpdateFailedError('update failed', ApplicationFailure.create({ type: 'bug' }));
    const err = await act(broken).catch((e: unknown) => e);
    expect(err).toBe(broken);
  });
});
