/** The call types `sluice send` can build (docs/reference/tracking-api.md routes). */
export const CALL_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;
export type CallType = (typeof CALL_TYPES)[number];

export interface TestCallOptions {
  type: CallType;
  event?: string;
  userId?: string;
  anonymousId?: string;
  groupId?: string;
  previousId?: string;
  name?: string;
  /** Properties (track, page, screen) or traits (identify, group). */
  properties?: Record<string, unknown>;
}

export const DEFAULT_TEST_EVENT = 'Sluice Test Event';
export const DEFAULT_TEST_USER = 'sluice-cli';

/** Builds one valid call of the given type, with defaults that pass ingest's validation. */
export function buildTestCall(options: TestCallOptions): Record<string, unknown> {
  const identity =
    options.anonymousId !== undefined && options.userId === undefined
      ? { anonymousId: options.anonymousId }
      : {
          userId: options.userId ?? DEFAULT_TEST_USER,
          ...(options.anonymousId !== undefined && { anonymousId: options.anonymousId }),
        };
  const bag = options.properties ?? { source: 'sluice send' };
  switch (options.type) {
    case 'track':
      return { ...identity, event: options.event ?? DEFAULT_TEST_EVENT, properties: bag };
    case 'identify':
      return { ...identity, traits: bag };
    case 'page':
    case 'screen':
      return { ...identity, name: options.name ?? 'Sluice Test', properties: bag };
    case 'group':
      return { ...identity, groupId: options.groupId ?? 'sluice-test-group', traits: bag };
    case 'alias':
      return { userId: options.userId ?? DEFAULT_TEST_USER, previousId: options.previousId ?? 'sluice-cli-previous' };
  }
}
