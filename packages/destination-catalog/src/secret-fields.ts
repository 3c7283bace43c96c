/** A JSON object: a definition, or a part of one. */
export type JsonObject = { [key: string]: unknown };

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * A copy of `definition` with every field the config's schema types as a secret replaced by what
 * `visit` returns for it: the legacy `webhookUrl`, each endpoint's `url` and header values,
 * `sharedSecret`, and the secrets of both signing schemes. Fields are named as `validateDestination`
 * names them (`settings.webhooks[1].headers.Authorization`).
 */
export function mapSecrets(definition: JsonObject, visit: (field: string, value: unknown) => unknown): JsonObject {
  // A JSON copy: parts the caller shares between fields (one headers object for two endpoints) become two.
  const copy = JSON.parse(JSON.stringify(definition)) as JsonObject;
  const settings = copy.settings;
  if (!isObject(settings)) return copy;
  const at = (holder: JsonObject, key: string, field: string) => {
    if (holder[key] !== undefined) holder[key] = visit(field, holder[key]);
  };
  at(settings, 'webhookUrl', 'settings.webhookUrl');
  list(settings.webhooks).forEach((endpoint, i) => {
    if (!isObject(endpoint)) return;
    at(endpoint, 'url', `settings.webhooks[${i}].url`);
    const headers = endpoint.headers;
    if (isObject(headers))
      for (const name of Object.keys(headers)) at(headers, name, `settings.webhooks[${i}].headers.${name}`);
  });
  at(settings, 'sharedSecret', 'settings.sharedSecret');
  const signing = isObject(settings.signing) ? settings.signing : {};
  for (const scheme of ['xSignature', 'standardWebhooks']) {
    const set = signing[scheme];
    list(isObject(set) ? set.secrets : undefined).forEach((key, i) => {
      if (isObject(key)) at(key, 'secret', `settings.signing.${scheme}.secrets[${i}].secret`);
    });
  }
  return copy;
}
