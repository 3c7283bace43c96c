/** What the banner needs to know about the running pipeline. */
export interface BannerInfo {
  /** Base URL of ingest, e.g. `http://localhost:8080`. */
  ingestUrl: string;
  /** The first write key of the first source; undefined when the config has no source. */
  writeKey?: string;
  sourceId?: string;
  /** `name → base URL` of every service (each serves /metrics, /healthz, /readyz). */
  services: { name: string; url: string }[];
  brokers: string;
  /** True when the runner started the broker (it is stopped on exit). */
  localKafka: boolean;
  configPath: string;
  /** Where the config's first webhook endpoint is, and who receives there; none when it has none. */
  webhooks?: WebhookTarget;
  /** The delivery-log console, and the admin token it asks for (`deliveryLog.adminToken`) when set. */
  deliveryLog?: { url: string; token?: string };
}

/**
 * The receiver of the config's first webhook endpoint: `demo` (the runner started the demo receiver
 * on its loopback port), `already-listening` (something listened on that loopback port before the
 * runner started: the user's own receiver), or `elsewhere` (not on this machine).
 */
export interface WebhookTarget {
  url: string;
  receiver: 'demo' | 'already-listening' | 'elsewhere';
}

function receiverRow(webhooks: WebhookTarget): [label: string, value: string] {
  switch (webhooks.receiver) {
    case 'demo':
      return ['demo receiver', `${webhooks.url}  (prints each webhook and its X-Signature check)`];
    case 'already-listening':
      return ['receiver', `${webhooks.url}  (your own: it was already listening, so the demo receiver is not started)`];
    case 'elsewhere':
      return ['receiver', `${webhooks.url}  (not on this machine, so the demo receiver is not started)`];
  }
}

function webhookHint(webhooks: WebhookTarget | undefined): string {
  if (webhooks === undefined) return 'The config has no http webhook endpoint, so no receiver is shown.';
  return webhooks.receiver === 'demo'
    ? 'Webhooks the demo receiver gets are printed below.'
    : `Webhooks go to ${webhooks.url}; the runner does not print them.`;
}

/** Quotes a value for a POSIX shell. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

export const DEMO_TRACK_BODY = { userId: 'user-1', event: 'Demo Event', properties: { plan: 'pro' } };

/** The one-line curl command that sends a track call to ingest with the write key (Basic auth). */
export function curlLine(ingestUrl: string, writeKey: string): string {
  return [
    'curl -sS',
    `-u ${shellQuote(`${writeKey}:`)}`,
    "-H 'Content-Type: application/json'",
    `-d ${shellQuote(JSON.stringify(DEMO_TRACK_BODY))}`,
    `${ingestUrl}/v1/track`,
  ].join(' ');
}

function tsSnippet(ingestUrl: string, writeKey: string): string[] {
  return [
    "import { Analytics } from '@sluice/analytics';",
    `const analytics = new Analytics(${JSON.stringify(writeKey)}, { endpoint: ${JSON.stringify(ingestUrl)} });`,
    "analytics.track({ userId: 'user-1', event: 'Demo Event', properties: { plan: 'pro' } });",
    'await analytics.close();',
  ];
}

/** Module path of the Go client (clients/go/go.mod). */
export const GO_MODULE = 'github.com/sluice-oss/sluice/clients/go';

function goSnippet(ingestUrl: string, writeKey: string): string[] {
  return [
    `import analytics "${GO_MODULE}"`,
    '',
    `client := analytics.New(${JSON.stringify(writeKey)})`,
    `client.Endpoint = ${JSON.stringify(ingestUrl)}`,
    'client.Track(&analytics.Track{UserId: "user-1", Event: "Demo Event", Properties: map[string]interface{}{"plan": "pro"}})',
    'client.Close()',
  ];
}

/** The text printed once every service is ready. */
export function renderBanner(info: BannerInfo): string {
  const width = Math.max(...info.services.map((s) => s.name.length), 'demo receiver'.length) + 2;
  const row = (label: string, value: string) => `  ${label.padEnd(width)}${value}`;
  const lines = [
    '',
    'Sluice is running. Ctrl-C stops everything.',
    '',
    ...info.services.map((s) => row(s.name, `${s.url}  metrics ${s.url}/metrics`)),
    ...(info.webhooks ? [row(...receiverRow(info.webhooks))] : []),
    row('Kafka', `${info.brokers}${info.localKafka ? '  (local broker, stopped on exit)' : '  (KAFKA_BROKERS)'}`),
    row('config', info.configPath),
    ...(info.deliveryLog
      ? [
          row(
            'console',
            `${info.deliveryLog.url}  (delivery log${info.deliveryLog.token !== undefined ? `, admin token ${info.deliveryLog.token}` : ': set deliveryLog.adminToken to use it'})`,
          ),
        ]
      : []),
    '',
  ];
  if (info.writeKey === undefined) {
    lines.push('The config has no source, so there is no write key to send with.', '');
    return lines.join('\n');
  }
  const indent = (l: string) => `    ${l}`;
  lines.push(
    `Write key (source ${JSON.stringify(info.sourceId)}): ${info.writeKey}`,
    '',
    'Send an event:',
    indent(curlLine(info.ingestUrl, info.writeKey)),
    '',
    'From Node (@sluice/analytics):',
    ...tsSnippet(info.ingestUrl, info.writeKey).map(indent),
    '',
    'From Go (clients/go):',
    ...goSnippet(info.ingestUrl, info.writeKey).map(indent),
    '',
    'Or: npm run sluice -- send --endpoint ' + info.ingestUrl + ' --write-key ' + shellQuote(info.writeKey),
    `Each service also answers /healthz and /readyz. ${webhookHint(info.webhooks)}`,
    '',
  );
  return lines.join('\n');
}
