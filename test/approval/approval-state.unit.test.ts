import { describe, expect, it } from 'vitest';
import {
  acceptsActions,
  applyExpiry,
  createApprovalState,
  currentApprovers,
  decideAction,
  decideRemind,
  decideRetryFinalization,
  decideVoid,
  dueForNotification,
  finalizationFailed,
  followAction,
  markApproved,
  markFinalizationFailed,
  markNotified,
  notifiedApprovers,
  type ApprovalState,
} from '../../src/features/approval/workflow/approval-state.ts';

const three = [
  { id: 'c', orderIndex: 3, actionType: 'stamp' as const },
  { id: 'a', orderIndex: 1, actionType: 'sign' as const },
  { id: 'b', orderIndex: 2, actionType: 'approve_only' as const },
];

function act(s: ApprovalState, id: string, kind: 'complete' | 'reject' = 'complete'): ApprovalState {
  const d = decideAction(s, id, kind);
  if (!d.accepted) throw new Error(`refused: ${d.refusal}`);
  return d.next;
}

describe('sequential approval', () => {
  it('orders by order_index and notifies one approver at a time', () => {
    let s = createApprovalState('sequential', three);
    expect(s.approvers.map((a) => a.id)).toEqual(['a', 'b', 'c']);
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['a']);
    s = markNotified(s, ['a']);
    expect(dueForNotification(s)).toEqual([]);
    expect(decideAction(s, 'b', 'complete')).toEqual({ accepted: false, refusal: 'not_your_turn' });

    const first = decideAction(s, 'a', 'complete');
    expect(first).toMatchObject({ accepted: true, firstCompletion: true, finished: false });
    s = act(s, 'a');
    expect(s.status).toBe('in_progress');
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['b']);
    s = act(markNotified(s, ['b']), 'b');
    expect(decideAction(s, 'c', 'complete')).toMatchObject({
      accepted: true,
      firstCompletion: false,
      finished: true,
    });
    s = act(markNotified(s, ['c']), 'c');
    expect(acceptsActions(s)).toBe(false);
    expect(s.status).toBe('in_progress'); // finalizing: approved only once the signed PDF exists
    expect(markApproved(s).status).toBe('approved');
  });

  it('notifies approvers who share an order_index together, in the order given', () => {
    const s = createApprovalState('sequential', [
      { id: 'x', orderIndex: 1, actionType: 'sign' },
      { id: 'y', orderIndex: 1, actionType: 'sign' },
    ]);
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['x', 'y']);
  });
});

describe('signing groups (approvers sharing an order_index)', () => {
  // Given out of order: positions decide, and within a group the order given.
  const groups = [
    { id: 'b', orderIndex: 2, actionType: 'sign' as const },
    { id: 'a1', orderIndex: 1, actionType: 'approve_only' as const },
    { id: 'a2', orderIndex: 1, actionType: 'stamp' as const },
  ];
  const sent = () => markNotified(createApprovalState('sequential', groups), ['a1', 'a2']);

  it('a group of 2 then 1: the group acts in any order, the next position only once all of it has completed', () => {
    let s = createApprovalState('sequential', groups);
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['a1', 'a2']);
    s = markNotified(s, ['a1', 'a2']);
    expect(dueForNotification(s)).toEqual([]);
    expect(decideAction(s, 'b', 'complete')).toEqual({ accepted: false, refusal: 'not_your_turn' });

    s = act(s, 'a2'); // the second member first
    expect(s.status).toBe('in_progress');
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['a1']);
    expect(dueForNotification(s)).toEqual([]); // b waits for the whole group
    expect(decideAction(s, 'b', 'complete')).toEqual({ accepted: false, refusal: 'not_your_turn' });

    expect(decideAction(s, 'a1', 'complete')).toMatchObject({
      accepted: true,
      firstCompletion: false,
      finished: false,
    });
    s = act(s, 'a1');
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['b']);
    s = markNotified(s, ['b']);
    expect(decideAction(s, 'b', 'complete')).toMatchObject({ accepted: true, finished: true });
    s = act(s, 'b');
    expect(acceptsActions(s)).toBe(false);
    expect(markApproved(s).status).toBe('approved');
  });

  it('a rejection by one member rejects the document; the next position is never notified', () => {
    let s = act(sent(), 'a1');
    expect(decideAction(s, 'a2', 'reject')).toMatchObject({ accepted: true, finished: true });
    s = act(s, 'a2', 'reject');
    expect(s.status).toBe('rejected');
    expect(currentApprovers(s)).toEqual([]);
    expect(dueForNotification(s)).toEqual([]);
    expect(decideAction(s, 'b', 'complete')).toEqual({ accepted: false, refusal: 'document_closed' });
    expect(notifiedApprovers(s).map((a) => a.id)).toEqual(['a1', 'a2']);
  });

  it('reminders go to every member of the current group who has not acted, and to nobody of the next', () => {
    let s = sent();
    expect(decideRemind(s, 'a1')).toBeUndefined();
    expect(decideRemind(s, 'a2')).toBeUndefined();
    expect(decideRemind(s, 'b')).toBe('not_notified');
    s = act(s, 'a1');
    expect(decideRemind(s, 'a1')).toBe('already_acted');
    expect(decideRemind(s, 'a2')).toBeUndefined();
    expect(decideRemind(s, 'b')).toBe('not_notified');
  });

  it('a parallel document is one group whatever the positions', () => {
    expect(dueForNotification(createApprovalState('parallel', groups)).map((a) => a.id)).toEqual([
      'a1',
      'a2',
      'b',
    ]);
  });
});

describe('parallel approval', () => {
  it('notifies everyone at once and accepts actions in any order', () => {
    let s = createApprovalState('parallel', three);
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['a', 'b', 'c']);
    s = markNotified(s, ['a', 'b', 'c']);
    s = act(s, 'c');
    s = act(s, 'a');
    expect(decideAction(s, 'b', 'complete')).toMatchObject({ accepted: true, finished: true });
  });
});

describe('one answer for every race', () => {
  const sent = () => markNotified(createApprovalState('parallel', three), ['a', 'b', 'c']);

  it('a second tap of the same button is refused', () => {
    const s = act(sent(), 'a');
    expect(decideAction(s, 'a', 'complete')).toEqual({ accepted: false, refusal: 'already_acted' });
    expect(decideAction(s, 'a', 'reject')).toEqual({ accepted: false, refusal: 'already_acted' });
  });

  it('any rejection closes the document for everyone', () => {
    const s = act(sent(), 'b', 'reject');
    expect(s.status).toBe('rejected');
    expect(decideAction(s, 'a', 'complete')).toEqual({ accepted: false, refusal: 'document_closed' });
    expect(decideVoid(s)).toEqual({ accepted: false, refusal: 'document_closed' });
  });

  it('void after the last approval is refused; the last approval after void is refused', () => {
    const allDone = act(act(act(sent(), 'a'), 'b'), 'c');
    expect(decideVoid(allDone)).toEqual({ accepted: false, refusal: 'document_closed' });

    const beforeLast = act(act(sent(), 'a'), 'b');
    const voided = decideVoid(beforeLast);
    if (!voided.accepted) throw new Error('void refused');
    expect(voided.next.status).toBe('voided');
    expect(decideAction(voided.next, 'c', 'complete')).toEqual({
      accepted: false,
      refusal: 'document_closed',
    });
  });

  it('an action after expiry is refused, and expiry leaves a finished document alone', () => {
    const expired = applyExpiry(sent());
    expect(expired.status).toBe('expired');
    expect(decideAction(expired, 'a', 'complete')).toEqual({ accepted: false, refusal: 'document_closed' });
    const allDone = act(act(act(sent(), 'a'), 'b'), 'c');
    expect(applyExpiry(allDone)).toBe(allDone);
  });

  it('unknown approvers are refused', () => {
    expect(decideAction(sent(), 'zzz', 'complete')).toEqual({ accepted: false, refusal: 'unknown_approver' });
  });
});

describe('remind and void notices', () => {
  it('reminds only a notified approver who has not acted, on an open document', () => {
    let s = createApprovalState('sequential', three);
    expect(decideRemind(s, 'a')).toBe('not_notified');
    s = markNotified(s, ['a']);
    expect(decideRemind(s, 'a')).toBeUndefined();
    expect(decideRemind(s, 'b')).toBe('not_notified');
    s = act(s, 'a');
    expect(decideRemind(s, 'a')).toBe('already_acted');
    expect(decideRemind(s, 'nobody')).toBe('unknown_approver');
  });

  it('voiding tells only the approvers who were told about the document', () => {
    const s = act(markNotified(createApprovalState('sequential', three), ['a']), 'a');
    const withB = markNotified(s, ['b']);
    expect(notifiedApprovers(withB).map((a) => a.id)).toEqual(['a', 'b']);
  });
});

describe('a finalization that failed for good', () => {
  const failure = { error: 'The PDF is too complex to process', failedAt: '2026-03-01T08:00:00.000Z' };
  const finalizing = () => {
    let s = markNotified(createApprovalState('parallel', three), ['a', 'b', 'c']);
    for (const id of ['a', 'b', 'c']) s = act(s, id);
    return s;
  };

  it('leaves the document in_progress, voidable, and retryable once', () => {
    const s = markFinalizationFailed(finalizing(), failure);
    expect(s.status).toBe('in_progress');
    expect(finalizationFailed(s)).toBe(true);
    expect(s.finalizationFailure).toEqual(failure);
    expect(acceptsActions(s)).toBe(false); // approvers are done; only void and retry remain

    const retry = decideRetryFinalization(s);
    expect(retry.accepted).toBe(true);
    if (!retry.accepted) return;
    expect(finalizationFailed(retry.next)).toBe(false);
    expect(decideRetryFinalization(retry.next)).toEqual({ accepted: false, refusal: 'nothing_to_retry' });
    expect(markApproved(retry.next)).toMatchObject({ status: 'approved', finalizationFailure: null });

    const voided = decideVoid(s);
    expect(voided).toMatchObject({ accepted: true, next: { status: 'voided', finalizationFailure: null } });
    if (voided.accepted) {
      expect(decideRetryFinalization(voided.next)).toEqual({ accepted: false, refusal: 'nothing_to_retry' });
      expect(notifiedApprovers(voided.next).map((a) => a.id)).toEqual(['a', 'b', 'c']);
    }
  });

  it('is refused while finalization runs or has not started, and on an open or closed document', () => {
    expect(decideRetryFinalization(finalizing())).toEqual({ accepted: false, refusal: 'nothing_to_retry' });
    expect(decideVoid(finalizing())).toEqual({ accepted: false, refusal: 'document_closed' });
    const open = markNotified(createApprovalState('parallel', three), ['a', 'b', 'c']);
    expect(markFinalizationFailed(open, failure)).toBe(open); // only a document being finalized fails it
    expect(decideRetryFinalization(open)).toEqual({ accepted: false, refusal: 'nothing_to_retry' });
    const approved = markApproved(finalizing());
    expect(markFinalizationFailed(approved, failure)).toBe(approved);
    expect(decideRetryFinalization(approved)).toEqual({ accepted: false, refusal: 'nothing_to_retry' });
  });

  it('expiry leaves a failed finalization alone', () => {
    const s = markFinalizationFailed(finalizing(), failure);
    expect(applyExpiry(s)).toBe(s);
  });
});

describe('following an action the database recorded', () => {
  it('applies it whatever the run thought of the turn, since the database decided', () => {
    // The notice's activity has not reported back: the run still has the approver waiting.
    const s = createApprovalState('sequential', three);
    const followed = followAction(s, 'a', 'complete');
    expect(followed.status).toBe('in_progress');
    expect(followed.approvers.find((a) => a.id === 'a')?.state).toBe('completed');
    expect(dueForNotification(followed).map((a) => a.id)).toEqual(['b']);
    // The notice that reports back afterwards changes nothing for an approver who acted.
    expect(markNotified(followed, ['a'])).toEqual(followed);
  });

  it('closes the document on a rejection', () => {
    const rejected = followAction(markNotified(createApprovalState('parallel', three), ['a']), 'a', 'reject');
    expect(rejected.status).toBe('rejected');
    expect(acceptsActions(rejected)).toBe(false);
  });

  it('the last completion leaves the document finalizing', () => {
    let s = createApprovalState('parallel', three);
    for (const id of ['c', 'a', 'b']) s = followAction(s, id, 'complete');
    expect(acceptsActions(s)).toBe(false);
    expect(s.status).toBe('in_progress');
    expect(markApproved(s).status).toBe('approved');
  });

  it('a repeat, an unknown approver or a closed document leaves the state as it is', () => {
    const s = followAction(createApprovalState('parallel', three), 'a', 'complete');
    expect(followAction(s, 'a', 'complete')).toBe(s);
    expect(followAction(s, 'a', 'reject')).toBe(s);
    expect(followAction(s, 'zzz', 'complete')).toBe(s);
    const expired = applyExpiry(s);
    expect(followAction(expired, 'b', 'complete')).toBe(expired);
  });
});
