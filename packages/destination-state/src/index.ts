export {
  DESTINATION_STATES,
  MAX_BY_CHARS,
  MAX_REASON_CHARS,
  parseStateKey,
  stateKey,
  type DestinationStateName,
  type DestinationStateValue,
  type EffectiveState,
} from './state.ts';
export { DestinationStateView, type StateChange } from './view.ts';
export { writeDestinationState } from './writer.ts';
export {
  startDestinationStateReader,
  type DestinationStateReader,
  type DestinationStateReaderOptions,
} from './reader.ts';
export { DestinationStateError, InvalidStateValueError } from './errors.ts';
export {
  actionRecord,
  AUTO_TOKEN_ID,
  type ActionWriterOptions,
  appendDestinationAction,
  DestinationActionWriter,
  newActionId,
  DESTINATION_ACTIONS,
  type DestinationAction,
  type DestinationActionRecord,
  parseActionRecord,
  STATE_AFTER,
  stateOf,
} from './actions.ts';
