import { LIMITS } from '@sluice/config';
import { DEFAULT_ACTIONS_PAGE, MAX_ACTIONS_PAGE, MAX_REASON_LENGTH } from '../../constants.ts';
import { CONTROL_ACTIONS } from '../kafka/destination-control.ts';
import { byTokenId, errors, id, idParam, json, nullable, pageOf, pageParams, ref, time } from './openapi-schemas.ts';

const stateName = { type: 'string', enum: ['active', 'paused', 'disabled'] } as const;
const stateProperties = {
  state: stateName,
  reason: nullable({ type: 'string' }),
  by: nullable({ type: 'string' }),
  since: { ...nullable(time), description: 'When the state was set; null: never set (active)' },
  auto: { type: 'boolean', description: 'Set by auto-disable' },
};

/** The destination-control schemas of the OpenAPI document (docs/reference/destination-actions.md). */
export const controlSchemas = {
  ControlState: { type: 'object', required: Object.keys(stateProperties), properties: stateProperties },
  EndpointControlState: {
    type: 'object',
    required: ['ref', ...Object.keys(stateProperties)],
    properties: { ref: { type: 'string' }, ...stateProperties },
  },
  ControlRequest: {
    type: 'object',
    additionalProperties: false,
    required: ['reason'],
    properties: {
      reason: { type: 'string', minLength: 1, maxLength: MAX_REASON_LENGTH },
      by: {
        ...id,
        deprecated: true,
        description:
          'Ignored: the action is recorded by the name and the id of the token that calls (`admin` for the admin token)',
      },
    },
  },
  ControlActionRecord: {
    type: 'object',
    required: ['action', 'destinationId', 'state', 'reason', 'by', 'at'],
    properties: {
      action: { type: 'string', enum: [...CONTROL_ACTIONS] },
      destinationId: id,
      endpointRef: { type: 'string', description: 'Absent: the action was on the whole destination' },
      id: {
        type: 'string',
        description: 'Unique per action (a UUID); absent on records written before actions had one',
      },
      state: stateName,
      reason: { type: 'string' },
      by: { type: 'string', description: 'The name of the token that did it; `sluice` for auto-disable' },
      byTokenId,
      at: time,
      auto: { type: 'boolean', const: true },
    },
  },
  ControlResult: {
    type: 'object',
    required: ['action', ...Object.keys(stateProperties)],
    properties: { action: ref('ControlActionRecord'), ...stateProperties },
  },
  ControlActions: pageOf('actions', ref('ControlActionRecord')),
};

const SUMMARY = {
  pause: 'Pauses (nothing is attempted; events wait in Kafka)',
  resume: 'Resumes (the waiting events go out, in order)',
  disable: 'Disables (as a pause, and what auto-disable sets)',
  enable: 'Enables (the waiting events go out, in order)',
} as const;
const actionOperation = (operationId: string, summary: string, parameters: object[]) => ({
  post: {
    operationId,
    summary,
    parameters,
    requestBody: { required: true, ...json(ref('ControlRequest')) },
    responses: {
      '200': { description: 'Written to the state topic; the state now', ...json(ref('ControlResult')) },
      '404': { description: 'No such destination (or endpoint) in the config', ...json(ref('Error')) },
      ...errors,
    },
  },
});

/** The destination-control paths of the OpenAPI document. */
export const controlPaths = {
  ...Object.fromEntries(
    CONTROL_ACTIONS.flatMap((action) => [
      [
        `/api/v1/destinations/{destinationId}/${action}`,
        actionOperation(`${action}Destination`, `${SUMMARY[action]} a destination, with a reason and who did it`, [
          idParam('destinationId', 'The destination'),
        ]),
      ],
      [
        `/api/v1/destinations/{destinationId}/endpoints/{endpointRef}/${action}`,
        actionOperation(`${action}Endpoint`, `${SUMMARY[action]} one endpoint of a destination`, [
          idParam('destinationId', 'The destination'),
          {
            ...idParam('endpointRef', 'The endpoint as `endpoints` of the destination names it, percent-encoded'),
            // Any ref the config can give an endpoint: longer than an id.
            schema: { ...id, maxLength: LIMITS.endpointRefChars },
          },
        ]),
      ],
    ]),
  ),
  '/api/v1/destination-actions': {
    get: {
      operationId: 'listDestinationActions',
      summary:
        "The recorded actions on destinations and endpoints, newest first (auto-disable included), kept as long as the log's retention",
      parameters: pageParams({ max: MAX_ACTIONS_PAGE, default: DEFAULT_ACTIONS_PAGE }),
      responses: { '200': { description: 'Actions', ...json(ref('ControlActions')) }, ...errors },
    },
  },
};
