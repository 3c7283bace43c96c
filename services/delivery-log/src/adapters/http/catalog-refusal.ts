import { OUTCOME_STATUS, type RecordKind, type Refusal } from '@sluice/destination-catalog';
import { HttpError } from './http-io.ts';

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
