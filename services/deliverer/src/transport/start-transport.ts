import type { SluiceConfig } from '@sluice/config';
import { addressPolicy, endpointOrigins, poolSettings, webhookThreadSettings } from '../service/config.ts';
import type { StartContext } from '../service/options.ts';
import { UndiciWebhookClient, type WebhookClient } from './webhook-client.ts';
import { WebhookThread } from './webhook-thread.ts';

/** The webhook client every request goes through, and how a reload reaches it. */
export interface Transport {
  client: WebhookClient;
  /**
   * Builds what `config` needs before it is swapped in (a policy that cannot be built throws and
   * refuses the reload); the returned step applies it.
   */
  prepareReload(config: SluiceConfig): () => void;
}

/**
 * The webhook client: in a worker thread by default (undici's request writing and response parsing
 * beside the main thread's Kafka work), on the main thread when asked or when a `lookup` is injected,
 * or the one a test or benchmark passes.
 */
export function startTransport(start: StartContext): Transport {
  const { ctx, life, options } = start;
  let policy = addressPolicy(ctx.config.current);
  const client =
    options.webhookClient ??
    (options.webhookThread !== false && !options.lookup
      ? new WebhookThread(webhookThreadSettings(ctx.config.current))
      : new UndiciWebhookClient({
          settings: () => poolSettings(ctx.config.current),
          policy: () => policy,
          ...(options.lookup && { lookup: options.lookup }),
        }));
  life.add({
    name: 'webhook client',
    stop: () => client.close(),
    ...(client instanceof WebhookThread && { fatal: client.died }),
  });
  return {
    client,
    prepareReload(config) {
      const nextPolicy = addressPolicy(config);
      const threadSettings = webhookThreadSettings(config);
      return () => {
        if (client instanceof UndiciWebhookClient) {
          policy = nextPolicy;
          void client.retain(endpointOrigins(config));
        } else if (client instanceof WebhookThread) client.update(threadSettings);
      };
    },
  };
}
