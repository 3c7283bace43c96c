import { type Static, Type } from '@sinclair/typebox';
import { SourceSchema } from './schema.ts';
import { ajv, schemaError } from './schema-errors.ts';

/**
 * What a source is besides its write keys: `id` and `name`, by the rules of the config file's
 * `sources` (the same schema parts, so the same messages). What a runtime source is given.
 */
const SourceFieldsSchema = Type.Object(
  {
    id: SourceSchema.properties.id,
    name: SourceSchema.properties.name,
    tenant: SourceSchema.properties.tenant,
  },
  { additionalProperties: false },
);

export type SourceFields = Static<typeof SourceFieldsSchema>;

const validate = ajv.compile<SourceFields>(SourceFieldsSchema);

/**
 * Validates a source's id, name and tenant by the file's rules for `sources` (the name defaults to
 * `''`, the tenant to `default`),
 * each field named relative to the source (`id`, `name`). Throws `ConfigError`; `input` is not changed.
 */
export function validateSource(input: unknown): SourceFields {
  const fields = structuredClone(input) as SourceFields;
  if (!validate(fields)) throw schemaError(validate.errors ?? []);
  return fields;
}
