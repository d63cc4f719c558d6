import { Context } from '@temporalio/activity';

/** The running activity's context, or undefined outside an activity (a direct call in a test). */
export function currentActivityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
