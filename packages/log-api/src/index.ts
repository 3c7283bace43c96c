export type { AnswerGuard } from './answer-guard.ts';
export { type DestinationTestAnswer, destinationTestAnswer } from './destination-test.ts';
export {
  type Definition,
  type DefinitionsPage,
  definitionsAnswer,
  type FileDefinition,
  type RuntimeDefinition,
} from './definitions.ts';
export {
  type Ledger,
  type LedgerBucket,
  type LedgerCounts,
  type LedgerTotals,
  ledgerAnswer,
  type Unaccounted,
  UNACCOUNTED_REASONS,
  type UnaccountedDelivery,
  type UnaccountedReason,
  unaccountedAnswer,
  UNSETTLED_STATES,
  type UnsettledState,
} from './ledger.ts';
export {
  type FileSourceItem,
  type RuntimeSourceItem,
  type SourceItem,
  type SourcesPage,
  sourcesAnswer,
  type WriteKeyItem,
} from './sources.ts';
export { type PortalLinkAnswer, portalLinkAnswer } from './portal-links.ts';
export {
  TOKEN_ROLES,
  type TokenCreatedAnswer,
  tokenCreatedAnswer,
  type TokenRole,
  type TokenItem,
  type TokensList,
  tokensAnswer,
} from './tokens.ts';
