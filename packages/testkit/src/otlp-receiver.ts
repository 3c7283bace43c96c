import { createServer } from 'node:http';
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { decodeExportRequest, type ExportedSpan, type ExportRequest, spansOf } from './otlp-request.ts';

export type { ExportedSpan } from './otlp-request.ts';

export interface OtlpReceiver {
  /**
   * The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT` (an HTTP exporter posts to `<url>/v1/traces`;
   * a gRPC exporter calls the trace service there).
   */
  url: string;
  /** Every span received so far (empty when started with `keep: false`). */
  spans: ExportedSpan[];
  /** The content type of each export request received (`application/grpc` for every gRPC call). */
  contentTypes: string[];
  /** Spans received so far. */
  readonly count: number;
  close(): Promise<void>;
}

const PROTOBUF = 'application/x-protobuf';

/** Keeps (or only counts, without `keep`) the spans of each export request. */
class Collector {
  readonly spans: ExportedSpan[] = [];
  readonly contentTypes: string[] = [];
  count = 0;
  readonly #keep: boolean;
  constructor(keep: boolean) {
    this.#keep = keep;
  }
  add(contentType: string, request: ExportRequest): void {
    this.contentTypes.push(contentType);
    const spans = spansOf(request);
    this.count += spans.length;
    if (this.#keep) this.spans.push(...spans);
  }
  receiver(url: string, close: () => Promise<void>): OtlpReceiver {
    const collector = this;
    return {
      url,
      spans: this.spans,
      contentTypes: this.contentTypes,
      get count() {
        return collector.count;
      },
      close,
    };
  }
}

/**
 * A real OTLP/HTTP endpoint on 127.0.0.1 that decodes exports (`POST /v1/traces`) in JSON
 * (`http/json`) or protobuf (`http/protobuf`) and keeps their spans; with `keep: false` it only
 * counts them (benchmarks).
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const collector = new Collector(options.keep ?? true);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = String(req.headers['content-type']);
      const body = Buffer.concat(chunks);
      if (req.url !== '/v1/traces') {
        res.writeHead(404).end();
      } else if (contentType.startsWith('application/json')) {
        collector.add(contentType, JSON.parse(body.toString('utf8')) as ExportRequest);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else if (contentType.startsWith(PROTOBUF)) {
        collector.add(contentType, decodeExportRequest(body));
        // An empty ExportTraceServiceResponse.
        res.writeHead(200, { 'content-type': PROTOBUF }).end();
      } else {
        res.writeHead(415).end();
      }
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return collector.receiver(
    `http://127.0.0.1:${port}`,
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
}

/** OTLP's trace service with one unary method; messages stay bytes and are decoded here. */
const TRACE_SERVICE: ServiceDefinition = {
  Export: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};

/**
 * A real OTLP/gRPC endpoint on 127.0.0.1 (plaintext HTTP/2): a gRPC server implementing the trace
 * service's `Export`, decoding each request's spans.
 */
export async function startOtlpGrpcReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const collector = new Collector(options.keep ?? true);
  const server = new Server();
  server.addService(TRACE_SERVICE, {
    Export: (call: { request: Buffer }, done: (err: Error | null, response: Buffer) => void) => {
      collector.add('application/grpc', decodeExportRequest(call.request));
      done(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return collector.receiver(`http://127.0.0.1:${port}`, async () => server.forceShutdown());
}
