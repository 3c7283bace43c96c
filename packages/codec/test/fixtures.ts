/** The track call the codec tests encode and decode. */
export const track = {
  sourceId: 's',
  type: 'track',
  messageId: 'm',
  timestamp: '2026-11-21T23:34:15.123Z',
  userId: 'u',
  event: 'Clicked',
} as const;
