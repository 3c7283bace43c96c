/** Why one call of a request was rejected (docs/reference/tracking-api.md per-call validation); stable codes. */
export const REJECT_CODES = {
  notAnObject: 'invalid_call',
  tooLarge: 'call_too_large',
  unknownType: 'unknown_type',
  missingIdentity: 'missing_identity',
  missingEvent: 'missing_event',
  missingGroupId: 'missing_group_id',
  missingAliasIds: 'missing_alias_ids',
  invalidField: 'invalid_field',
  invalidMessageId: 'invalid_message_id',
  tooDeep: 'too_deep',
  numberOutOfRange: 'number_out_of_range',
} as const;

export type RejectCode = (typeof REJECT_CODES)[keyof typeof REJECT_CODES];

export interface CallRejection {
  index: number;
  code: RejectCode;
  message: string;
}
