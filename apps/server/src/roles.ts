// The roles of `tollgate serve --role`, in a module of their own: the CLI checks the flag without
// loading the gateway, and deploy/ files are tested against the same list.
/** HTTP only (`api`), background work only (`worker`: watchers, expiry, webhooks, settlement), or both. */
export const ROLES = ['api', 'worker', 'all'] as const;
export type Role = (typeof ROLES)[number];
