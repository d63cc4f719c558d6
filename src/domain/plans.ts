/** The plans an account can be on (docs/product-rules.md §8): each has its own request rate and upload size. */
export const PLANS = ['basic', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** Requests per minute one API key of each plan may make; an account's keys together may make a multiple of it. */
export const PLAN_REQUESTS_PER_MINUTE: Record<Plan, number> = {
  basic: 100,
  business: 300,
  enterprise: 1000,
};
