import { describe, expect, it } from 'vitest';
import {
  acceptsActions,
  allCompleted,
  createApprovalState,
  currentApprovers,
  decideAction,
  decideDelegation,
  decideRemind,
  dueForNotification,
  markNotified,
  notifiedApprovers,
  progress,
  type ApprovalState,
} from '../../src/features/approval/workflow/approval-state.ts';

/** Delegation in the pure reducer. */
const three = [
  { id: 'a', orderIndex: 1, actionType: 'sign' as const },
  { id: 'b', orderIndex: 2, actionType: 'stamp' as const },
  { id: 'c', orderIndex: 3, actionType: 'approve_only' as const },
];

function act(s: ApprovalState, id: string): ApprovalState {
  const d = decideAction(s, id, 'complete');
  if (!d.accepted) throw new Error(`refused: ${d.refusal}`);
  return d.next;
}

function delegate(s: ApprovalState, from: string, to: string): ApprovalState {
  const d = decideDelegation(s, from, to);
  if (!d.accepted) throw new Error(`refused: ${d.refusal}`);
  return d.next;
}

const ids = (s: ApprovalState) =>
  s.approvers.map((a) => `${a.id}:${a.orderIndex}:${a.actionType}:${a.state}`);

describe('delegation in a sequential document', () => {
  it('puts the delegate in the same place with the same action, due for notification', () => {
    let s = markNotified(createApprovalState('sequential', three, { allowDelegation: true }), ['a']);
    s = act(s, 'a');
    s = markNotified(s, ['b']);
    s = delegate(s, 'b', 'd');
    expect(ids(s)).toEqual([
      'a:1:sign:completed',
      'b:2:stamp:delegated',
      'd:2:stamp:waiting',
      'c:3:approve_only:waiting',
    ]);
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['d']);
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['d']);
    expect(progress(s)).toEqual({ completed: 1, total: 3 });
    // The one who delegated is out: no action, no reminder, no void notice.
    expect(decideAction(s, 'b', 'complete')).toEqual({ accepted: false, refusal: 'already_acted' });
    expect(decideRemind(s, 'b')).toBe('already_acted');
    expect(notifiedApprovers(s).map((a) => a.id)).toEqual(['a']);
    // The next approver still waits for the delegate.
    expect(decideAction(s, 'c', 'complete')).toEqual({ accepted: false, refusal: 'not_your_turn' });

    s = markNotified(s, ['d']);
    s = act(s, 'd');
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['c']);
    s = markNotified(s, ['c']);
    const last = decideAction(s, 'c', 'complete');
    expect(last.accepted && last.finished).toBe(true);
    s = act(s, 'c');
    expect(allCompleted(s)).toBe(true);
    expect(acceptsActions(s)).toBe(false);
    expect(progress(s)).toEqual({ completed: 3, total: 3 });
  });

  it('lets a delegate delegate in turn', () => {
    let s = markNotified(createApprovalState('sequential', three, { allowDelegation: true }), ['a']);
    s = delegate(s, 'a', 'd');
    s = markNotified(s, ['d']);
    s = delegate(s, 'd', 'e');
    expect(ids(s).slice(0, 3)).toEqual(['a:1:sign:delegated', 'd:1:sign:delegated', 'e:1:sign:waiting']);
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['e']);
    expect(progress(s).total).toBe(3);
  });

  it('refuses when the document does not allow it, out of turn, after acting, and when closed', () => {
    const closedToIt = markNotified(createApprovalState('sequential', three), ['a']);
    expect(decideDelegation(closedToIt, 'a', 'd')).toEqual({
      accepted: false,
      refusal: 'delegation_not_allowed',
    });

    let s = markNotified(createApprovalState('sequential', three, { allowDelegation: true }), ['a']);
    expect(decideDelegation(s, 'b', 'd')).toEqual({ accepted: false, refusal: 'not_your_turn' });
    expect(decideDelegation(s, 'x', 'd')).toEqual({ accepted: false, refusal: 'unknown_approver' });
    // A repeated request (the same delegate id) or a second delegation by the same approver.
    const once = delegate(s, 'a', 'd');
    expect(decideDelegation(once, 'a', 'd')).toEqual({ accepted: false, refusal: 'already_acted' });
    expect(decideDelegation(once, 'a', 'e')).toEqual({ accepted: false, refusal: 'already_acted' });
    // A delegate id already on the document.
    expect(decideDelegation(s, 'a', 'b')).toEqual({ accepted: false, refusal: 'already_acted' });

    s = act(s, 'a');
    expect(decideDelegation(s, 'a', 'd')).toEqual({ accepted: false, refusal: 'already_acted' });
    const rejected = decideAction(markNotified(s, ['b']), 'b', 'reject');
    expect(rejected.accepted).toBe(true);
    if (rejected.accepted)
      expect(decideDelegation(rejected.next, 'c', 'd')).toEqual({
        accepted: false,
        refusal: 'document_closed',
      });
  });
});

describe('delegation in a parallel document', () => {
  it('replaces the approver and leaves the others untouched', () => {
    let s = createApprovalState('parallel', three, { allowDelegation: true });
    s = markNotified(s, ['a', 'b', 'c']);
    s = act(s, 'a');
    s = delegate(s, 'c', 'd');
    expect(currentApprovers(s).map((a) => a.id)).toEqual(['b', 'd']);
    expect(dueForNotification(s).map((a) => a.id)).toEqual(['d']);
    s = act(s, 'b');
    expect(acceptsActions(s)).toBe(true); // the delegate has not acted yet
    s = act(markNotified(s, ['d']), 'd');
    expect(allCompleted(s)).toBe(true);
    expect(s.status).toBe('in_progress');
    expect(progress(s)).toEqual({ completed: 3, total: 3 });
  });
});
