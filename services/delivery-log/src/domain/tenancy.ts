import { DEFAULT_TENANT } from '@sluice/config';
import type { Principal } from './access-policy.ts';

/** A change's `tenant` as given, and the tenant of what it changes (undefined: it creates). */
export interface TenantChange {
  given: unknown;
  current?: string;
  /** `whole`: a create or a replace, which names every field; `patch`: a merge patch, where an absent field stays. */
  form: 'whole' | 'patch';
}

/** What a change's `tenant` becomes: the value to write (undefined: leave it out), or why it is refused. */
export type TenantOutcome = { ok: true; tenant: unknown } | { ok: false; problem: string };

/**
 * The tenant a destination or source is written in (docs/reference/tenants.md): the admin's choice,
 * else the one it already has, else `default`; a tenant token's own tenant, which it may name but
 * never leave. What the admin gives is checked by the config's rules as any other field.
 */
export function tenantOfChange(principal: Principal, change: TenantChange): TenantOutcome {
  const { given, current, form } = change;
  if (principal.role === 'admin')
    return { ok: true, tenant: given ?? (form === 'patch' ? undefined : (current ?? DEFAULT_TENANT)) };
  if (given !== undefined && given !== principal.tenant)
    return { ok: false, problem: `must be ${principal.tenant}: a tenant token writes only in its own tenant` };
  return { ok: true, tenant: form === 'patch' ? given : principal.tenant };
}
