import type { IncomingMessage } from 'node:http';
import type { Logger } from '@sluice/logging';
import { OUTCOME_STATUS, type RecordKind, type Refusal } from '@sluice/destination-catalog';
import type { AuditedChange } from '../../domain/audit.ts';
import { expectedVersion } from '../../domain/definitions.ts';
import type { ChangeAudit } from '../db/change-audit.ts';
import { type TenantChange, tenantOfChange } from '../../domain/tenancy.ts';
import { callerOf } from './caller.ts';
import { badRequest, HttpError } from './http-io.ts';

/**
 * A definition's body as written by the caller of `req` (`tenantOfChange`): a create or a replace in
 * the caller's tenant (or, for the admin, the one named, else the one it has, else `default`); a
 * patch as given. 403 naming `tenant` when a tenant token names another tenant. A body that is not
 * an object is left for the config's rules to refuse.
 */
export function inCallerTenant(req: IncomingMessage, change: Omit<TenantChange, 'given'> & { body: unknown }): unknown {
  const { body, ...rest } = change;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  const outcome = tenantOfChange(callerOf(req), { ...rest, given: fields.tenant });
  if (!outcome.ok) throw new HttpError(403, 'forbidden', `tenant ${outcome.problem}`, 'tenant');
  const { tenant: _given, ...others } = fields;
  return outcome.tenant === undefined ? others : { ...others, tenant: outcome.tenant };
}

/** The version `If-Match` names: 428 without one, 400 for one that names no single version. */
export function ifMatch(req: IncomingMessage): number {
  const header = req.headers['if-match'];
  const checked = expectedVersion(Array.isArray(header) ? header.join(',') : header);
  if (checked === undefined)
    throw new HttpError(428, 'precondition_required', 'If-Match with the ETag of the version read is required');
  if (!checked.ok) throw badRequest(checked);
  return checked.value;
}

/** The answer to a change while the catalog is off (no `runtimeDestinations`): 409, the request conflicts with the config. */
export const catalogOff = (kind: RecordKind): HttpError =>
  new HttpError(
    409,
    `runtime_${kind}s_off`,
    `runtime ${kind}s are off: configure runtimeDestinations.keyring to change ${kind}s through the API`,
  );

/**
 * Records a change made in the audit. The change is made: one the audit cannot record is logged at
 * `error` (`<kind> change not audited`), and the answer goes out all the same.
 */
export async function audit(
  target: { changes: Pick<ChangeAudit, 'record'>; logger: Logger; kind: RecordKind },
  change: AuditedChange,
): Promise<void> {
  await target.changes
    .record(change)
    .catch((err: unknown) => target.logger.error({ err, ...change }, `${target.kind} change not audited`));
}

/**
 * A catalog change refused, as the API answers it (`OUTCOME_STATUS`): a code, a message naming the
 * runtime destination or source, the field or the file, and never a secret.
 */
export function refusalError(outcome: Refusal, kind: RecordKind): HttpError {
  const status = OUTCOME_STATUS[outcome.kind];
  switch (outcome.kind) {
    case 'invalid':
      return new HttpError(status, 'invalid_definition', `${outcome.field} ${outcome.problem}`, outcome.field);
    case 'not_found':
      return new HttpError(status, 'not_found', `no runtime ${kind} has the id ${outcome.id}`);
    case 'id_taken':
      return new HttpError(
        status,
        'id_taken',
        `a runtime ${kind} has the id ${outcome.id} (version ${outcome.version})`,
      );
    case 'id_reserved':
      return new HttpError(
        status,
        'id_reserved',
        `the id ${outcome.id} is another tenant's (in force, or deleted there): an id never passes from one tenant to another; choose another`,
      );
    case 'file_declared':
      return new HttpError(
        status,
        'file_declared',
        `${kind} ${outcome.id} is declared in the config file ${outcome.file}: change it there`,
      );
    case 'version_conflict':
      return new HttpError(
        status,
        'version_conflict',
        `${kind} ${outcome.id} is at version ${outcome.currentVersion}, not ${outcome.expectedVersion}: read it again`,
      );
    case 'too_large':
      return new HttpError(
        status,
        'too_large',
        `the definition's record would be ${outcome.bytes} bytes; at most ${outcome.limit}`,
      );
    case 'source_in_use':
      return new HttpError(
        status,
        'source_in_use',
        `source ${outcome.id} is named by the destinations ${outcome.destinationIds.join(', ')}: take it out of their sourceIds first`,
      );
    case 'key_not_found':
      return new HttpError(status, 'not_found', `source ${outcome.id} has no write key ${outcome.keyId}`);
    case 'already_revoked':
      return new HttpError(
        status,
        'already_revoked',
        `write key ${outcome.keyId} of source ${outcome.id} was revoked at ${outcome.revokedAt}`,
      );
  }
}
