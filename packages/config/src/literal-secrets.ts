/** Header names whose values are credentials (besides any name with one of SECRET_WORDS in it). */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const SECRET_WORDS = /token|secret|key|auth|password|signature|session/i;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const literal = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** Whether a URL written in the file carries credentials: userinfo or a query string. */
function urlHoldsSecret(value: unknown): boolean {
  if (!literal(value)) return false;
  try {
    const url = new URL(value);
    return url.username !== '' || url.password !== '' || url.search !== '';
  } catch {
    return /@|\?/.test(value);
  }
}

/**
 * The fields of a config file (parsed, not yet validated) that hold a secret written in clear
 * rather than as `{ env: NAME }` or `{ file: PATH }`: every secret field, endpoint URLs with
 * userinfo or a query, the database URL with a password, and the values of headers whose name
 * says credential (`Authorization`, `Cookie`, `X-Api-Key`, `*token*`…). `sluice config validate`
 * warns about each; a deployment whose config sits in a ConfigMap must have none.
 */
export function literalSecretFields(input: unknown): string[] {
  const found: string[] = [];
  const secret = (field: string, value: unknown) => literal(value) && found.push(field);
  const config = isObject(input) ? input : {};
  list(config.sources).forEach((s, i) => {
    if (isObject(s)) list(s.writeKeys).forEach((k, j) => secret(`sources[${i}].writeKeys[${j}]`, k));
  });
  list(config.destinations).forEach((d, i) => {
    const settings = isObject(d) && isObject(d.settings) ? d.settings : {};
    const base = `destinations[${i}].settings`;
    secret(`${base}.sharedSecret`, settings.sharedSecret);
    if (urlHoldsSecret(settings.webhookUrl)) found.push(`${base}.webhookUrl`);
    list(settings.webhooks).forEach((w, j) => {
      if (!isObject(w)) return;
      if (urlHoldsSecret(w.url)) found.push(`${base}.webhooks[${j}].url`);
      for (const [name, value] of Object.entries(isObject(w.headers) ? w.headers : {})) {
        if (SECRET_HEADERS.has(name.toLowerCase()) || SECRET_WORDS.test(name))
          secret(`${base}.webhooks[${j}].headers.${name}`, value);
      }
    });
    const signing = isObject(settings.signing) ? settings.signing : {};
    for (const scheme of ['xSignature', 'standardWebhooks']) {
      const keys = isObject(signing[scheme]) ? list((signing[scheme] as Json).secrets) : [];
      keys.forEach((k, j) => isObject(k) && secret(`${base}.signing.${scheme}.secrets[${j}].secret`, k.secret));
    }
  });
  const section = (name: string): Json => (isObject(config[name]) ? (config[name] as Json) : {});
  secret('ingest.adminToken', section('ingest').adminToken);
  secret('deliveryLog.adminToken', section('deliveryLog').adminToken);
  const databaseUrl = section('deliveryLog').databaseUrl;
  if (literal(databaseUrl) && URL.canParse(databaseUrl) && new URL(databaseUrl).password !== '')
    found.push('deliveryLog.databaseUrl');
  const kafka = section('kafka');
  const sasl = isObject(kafka.sasl) ? kafka.sasl : {};
  secret('kafka.sasl.password', sasl.password);
  if (isObject(sasl.oidc)) secret('kafka.sasl.oidc.clientSecret', sasl.oidc.clientSecret);
  if (isObject(kafka.ssl)) secret('kafka.ssl.keyPassword', kafka.ssl.keyPassword);
  secret('schemaRegistry.password', section('schemaRegistry').password);
  secret('schemaRegistry.bearerToken', section('schemaRegistry').bearerToken);
  const operatorEvents = section('operatorEvents');
  secret('operatorEvents.secret', operatorEvents.secret);
  if (urlHoldsSecret(operatorEvents.url)) found.push('operatorEvents.url');
  return found;
}
