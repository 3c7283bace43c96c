/** A Kafka record's headers as kafkajs gives them: a value, several, or none per name. */
export type RawHeaders = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

/** The first value of header `name` as text, or undefined when the record has none. */
export function headerText(headers: RawHeaders | undefined, name: string): string | undefined {
  const raw = headers?.[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined ? undefined : value.toString();
}

/** Every header's first value as text (names without a value left out). */
export function headersText(headers: RawHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers ?? {})) {
    const value = headerText(headers, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
