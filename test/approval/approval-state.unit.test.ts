import { describe, expect, it } from 'vitest';
import {
  acceptsActions,
  applyExpiry,
  createApprovalState,
  currentApprovers,
  decideAction,
  decideRemind,
  decideVoid,
  dueForNotification,
  markApproved,
  markNotified,
  notifiedApprovers,
  type ApprovalState,
} from '../../src/approval/workflow/approval-state.ts';

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

  it('keeps orders that tie in the order given', () => {
    const s = createApprovalState('sequential', [
      { id: 'x', orderIndex: 1, actionType: 'sign' },
      { id: 'y', orderIndex: 1, actionType: 'sign' },
    ]);
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['x']);
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
