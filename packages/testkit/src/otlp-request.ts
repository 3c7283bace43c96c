/** One span as an OTLP export carries it, with the `service.name` of its resource. */
export interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty or absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  links: { traceId: string; spanId: string }[];
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface RequestSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  status?: { code?: number };
  links?: { traceId: string; spanId: string }[];
}
/** An `ExportTraceServiceRequest` in OTLP's JSON mapping (ids in hex), the fields the tests read. */
export interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: RequestSpan[] }[] }[];
}

const plain = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? ''));
const attributesOf = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, plain(kv.value)]));

/** The spans of an export request. */
export function spansOf(request: ExportRequest): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          service,
          traceId: s.traceId,
          spanId: s.spanId,
          ...(s.parentSpanId && { parentSpanId: s.parentSpanId }),
          name: s.name,
          kind: s.kind,
          attributes: attributesOf(s.attributes),
          status: s.status?.code ?? 0,
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
        });
      }
    }
  }
  return spans;
}

/** A protobuf message's fields: number → values in order (varints as bigint, length-delimited as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

/** Reads the protobuf wire format (the four wire types OTLP uses); no schema, so no code generation. */
function fieldsOf(buf: Buffer): Fields {
  const fields: Fields = new Map();
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('truncated protobuf varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) value = buf.subarray(at, (at += 8));
    else if (wire === 5) value = buf.subarray(at, (at += 4));
    else if (wire === 2) {
      const length = Number(varint());
      value = buf.subarray(at, (at += length));
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    const list = fields.get(tag >> 3);
    if (list) list.push(value);
    else fields.set(tag >> 3, [value]);
  }
  return fields;
}

const messages = (f: Fields, n: number) => (f.get(n) ?? []).map((v) => fieldsOf(v as Buffer));
const bytes = (f: Fields, n: number) => f.get(n)?.[0] as Buffer | undefined;
const text = (f: Fields, n: number) => bytes(f, n)?.toString('utf8') ?? '';
const hex = (f: Fields, n: number) => bytes(f, n)?.toString('hex') ?? '';
const int = (f: Fields, n: number) => Number((f.get(n)?.[0] as bigint | undefined) ?? 0n);

function anyValue(f: Fields): AnyValue {
  if (f.has(1)) return { stringValue: text(f, 1) };
  if (f.has(2)) return { boolValue: int(f, 2) !== 0 };
  if (f.has(3)) return { intValue: int(f, 3) };
  if (f.has(4)) return { doubleValue: bytes(f, 4)!.readDoubleLE(0) };
  return {};
}
const keyValues = (list: Fields[]): KeyValue[] =>
  list.map((kv) => ({ key: text(kv, 1), value: anyValue(messages(kv, 2)[0] ?? new Map()) }));

/** An OTLP protobuf `ExportTraceServiceRequest` (http/protobuf's body, gRPC's message) in the JSON mapping. */
export function decodeExportRequest(body: Buffer): ExportRequest {
  return {
    resourceSpans: messages(fieldsOf(body), 1).map((rs) => ({
      resource: { attributes: keyValues(messages(messages(rs, 1)[0] ?? new Map(), 1)) },
      scopeSpans: messages(rs, 2).map((ss) => ({
        spans: messages(ss, 2).map((s) => ({
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: text(s, 5),
          kind: int(s, 6),
          attributes: keyValues(messages(s, 9)),
          status: { code: int(messages(s, 15)[0] ?? new Map(), 3) },
          links: messages(s, 13).map((l) => ({ traceId: hex(l, 1), spanId: hex(l, 2) })),
        })),
      })),
    })),
  };
}
