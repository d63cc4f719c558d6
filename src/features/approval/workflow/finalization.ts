import { ActivityFailure, condition, isCancellation, log } from '@temporalio/workflow';
import { finalizationFailed } from './approval-state.ts';
import { failureMessage, type RunContext } from './run-context.ts';

/**
 * The end of an approved document: the final PDF, signed, and the signed copies to everyone. A finalization that
 * fails for good never fails the workflow: the document stays `in_progress` with `finalization.state = "failed"`
 * until an operator's `retryFinalization` (run again) or a void.
 */

/**
 * Finalization on a finite policy: a retryable failure (a signing certificate being fixed, storage) is retried
 * until APPROVAL_FINALIZE_RETRY_SECONDS runs out; that or a permanent failure parks the document until
 * `retryFinalization` or a void.
 */
export async function finalizeOrPark(run: RunContext): Promise<void> {
  const finalize = run.effects.finalize(run.effects.policies.finalizeMs);
  let failedOnce = false;
  for (;;) {
    try {
      run.approve(
        await finalize({
          documentId: run.input.documentId,
          idempotencyPrefix: run.workflowId,
        }),
      );
      if (failedOnce) run.publishAttention(null);
      return;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const failure = { error: failureMessage(err), failedAt: new Date().toISOString() };
      run.failFinalization(failure);
      failedOnce = true;
      run.publishAttention('finalization');
      await run.durably('markFinalizationFailed', () =>
        run.effects.localWrites.markFinalizationFailed({ documentId: run.input.documentId, ...failure }),
      );
      await condition(() => !finalizationFailed(run.state));
      if (run.state.status !== 'in_progress') {
        run.publishAttention(null);
        return; // voided
      }
    }
  }
}

/**
 * The signed PDF to every approver and cc recipient on the notify policy, when the finalization's own activity
 * could not send them. Only ids go in and only counts come back; a copy WhatsApp refuses, or the policy running
 * out, is logged and the document stays approved.
 */
export async function sendSignedCopies(run: RunContext): Promise<void> {
  try {
    const result = await run.effects.notices.sendSignedCopies({
      documentId: run.input.documentId,
      idempotencyPrefix: run.workflowId,
    });
    if (result.failed > 0) log.warn('WhatsApp refused some signed copies', { ...result });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('the signed copies exhausted their retry policy', { error: failureMessage(err) });
  }
}

/** The voided notice to each approver who heard of the document; one that exhausts its policy is dropped (logged). */
export async function tellVoided(run: RunContext, approverIds: readonly string[]): Promise<void> {
  await Promise.all(
    approverIds.map((approverId) =>
      run.effects.notices
        .notifyApprover({
          documentId: run.input.documentId,
          approverId,
          kind: 'voided',
          idempotencyKey: `${run.workflowId}:${approverId}:voided`,
        })
        .catch((err: unknown) =>
          log.warn('a voided notice exhausted its retry policy', { approverId, error: failureMessage(err) }),
        ),
    ),
  );
}
