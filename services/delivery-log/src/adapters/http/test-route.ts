import { randomUUID } from 'node:crypto';
import type { Destination, SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { AddressPolicy, eventRequest, sendOnce } from '@sluice/webhook';
import { TEST_ANSWER_BYTES } from '../../constants.ts';
import { testAnswer } from '../../domain/test-answer.ts';
import { parseTestRequest, TEST_MESSAGE_ID_PREFIX, type TestRequest, testEnvelope } from '../../domain/test-event.ts';
import { badRequest, HttpError, pathId, readJson, type Route } from './http-io.ts';
import { scopeOf, unseen } from './tenant-scope.ts';

export interface TestRouteDeps {
  /** The config in force: its destinations (runtime ones laid over), the deadline, the SSRF policy, the CA bundle. */
  config: () => SluiceConfig;
  now: () => number;
  /** Each test sent is logged here. */
  logger: Logger;
}

/** The source a test event is said to come from: the destination's first, else a name of its own. */
const TEST_SOURCE_ID = 'sluice-test';

/** The destination a test is for, as the config in force has it: 404 without one. */
function destinationOf(config: SluiceConfig, id: string): Destination {
  const destination = config.destinations.find((d) => d.id === id);
  if (!destination) throw new HttpError(404, 'not_found', 'no destination has this id');
  return destination;
}

/** The endpoint a test asks for: 400 on `endpoint` past the destination's last. */
function endpointOf(destination: Destination, request: TestRequest): Destination['endpoints'][number] {
  const endpoint = destination.endpoints[request.endpoint];
  const count = destination.endpoints.length;
  if (!endpoint)
    throw new HttpError(
      400,
      'invalid_parameter',
      `endpoint must be an index from 0 to ${count - 1}: destination ${destination.id} has ${count} endpoint(s)`,
      'endpoint',
    );
  return endpoint;
}

/**
 * `POST /api/v1/destination-definitions/{id}/test` (docs/reference/runtime-destinations.md, "Test
 * event"): one test event, rendered and signed as the deliverer would for the destination, sent once
 * to one of its endpoints under the deliverer's rules (`sendOnce`: its connector with the SSRF guard,
 * the delivery deadline), and answered with what came back. Nothing is written to Kafka or to the log.
 */
export function destinationTestRoute(deps: TestRouteDeps): Route {
  return {
    method: 'POST',
    pattern: /^\/api\/v1\/destination-definitions\/([^/]+)\/test$/,
    name: 'testDefinition',
    params: [],
    run: async (m, _url, req) => {
      const config = deps.config();
      const id = pathId('destinationId', m[1]!);
      if (!scopeOf(req, config).seesDestination(id)) throw unseen('no destination has this id');
      const destination = destinationOf(config, id);
      const request = parseTestRequest(await readJson(req));
      if (!request.ok) throw badRequest(request);
      const endpoint = endpointOf(destination, request.value);
      const nowMs = deps.now();
      const event = testEnvelope({
        call: request.value.event,
        sourceId: destination.sourceIds[0] ?? TEST_SOURCE_ID,
        nowMs,
        messageId: `${TEST_MESSAGE_ID_PREFIX}${randomUUID()}`,
      });
      if (!event.ok) throw badRequest(event);
      const outgoing = eventRequest({ destination, endpoint, event: event.value, nowMs, batchId: randomUUID() });
      if (!outgoing.ok) throw new HttpError(400, 'invalid_parameter', `event ${outgoing.message}`, 'event');
      const { delivery } = config;
      const sent = await sendOnce({
        url: endpoint.url,
        headers: outgoing.headers,
        body: outgoing.body,
        timeoutMs: delivery.timeoutMs,
        policy: new AddressPolicy(delivery.ssrf),
        ...(delivery.caFile !== undefined && { caFile: delivery.caFile }),
        keepBytes: TEST_ANSWER_BYTES,
      });
      const answer = testAnswer({
        destinationId: destination.id,
        endpoint: request.value.endpoint,
        url: endpoint.ref,
        messageId: event.value.messageId,
        ...(outgoing.batchId !== undefined && { batchId: outgoing.batchId }),
        sent,
      });
      const { destinationId, url, messageId, status, latencyMs, error } = answer;
      deps.logger.info({ destinationId, endpoint: url, messageId, status, latencyMs, error }, 'destination test sent');
      return [200, answer];
    },
  };
}
