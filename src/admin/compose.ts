import type { Middleware, Next, ParameterizedContext } from 'koa';

/** Runs middleware in order, like Koa's own stack (a local copy: koa-compose is not a direct dependency). */
export function compose<S>(
  stack: readonly Middleware<S>[],
): (ctx: ParameterizedContext<S>, next: Next) => Promise<void> {
  return (ctx, next) => {
    let last = -1;
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error('next() called more than once');
      last = i;
      const mw = stack[i];
      if (!mw) {
        await next();
        return;
      }
      await mw(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
