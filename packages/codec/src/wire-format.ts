/** Confluent wire format: magic byte 0, 4-byte big-endian schema id, then the payload. */
export const CONFLUENT_MAGIC_BYTE = 0;

/** Length of the Confluent header: the magic byte and a 4-byte big-endian schema id. */
export const CONFLUENT_HEADER_BYTES = 5;

/** Whether a value is framed in the Confluent wire format (magic byte and room for the schema id). */
export function isConfluentFramed(value: Buffer): boolean {
  return value.length >= CONFLUENT_HEADER_BYTES && value[0] === CONFLUENT_MAGIC_BYTE;
}

/** Frames a payload in the Confluent wire format: `0x00`, schema id (int32 BE), payload. */
export function frameConfluent(schemaId: number, payload: Buffer): Buffer {
  if (!Number.isInteger(schemaId) || schemaId < 0 || schemaId > 0x7fffffff) {
    throw new RangeError(`schema id must be an int32 >= 0, got ${schemaId}`);
  }
  const header = Buffer.alloc(CONFLUENT_HEADER_BYTES);
  header.writeUInt8(CONFLUENT_MAGIC_BYTE, 0);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, payload]);
}

/** Splits a Confluent-framed value into schema id and payload; `undefined` when it is not framed. */
export function unframeConfluent(value: Buffer): { schemaId: number; payload: Buffer } | undefined {
  if (value.length < CONFLUENT_HEADER_BYTES || value[0] !== CONFLUENT_MAGIC_BYTE) return undefined;
  return { schemaId: value.readInt32BE(1), payload: value.subarray(CONFLUENT_HEADER_BYTES) };
}
