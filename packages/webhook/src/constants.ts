/** Fixed wire values of every webhook request (docs/reference/delivery.md). */
export const USER_AGENT = 'Sluice/1.0';
export const CONTENT_TYPE = 'application/json';
export const MESSAGE_ID_HEADER = 'X-Message-Id';
