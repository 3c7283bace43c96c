import { answerGuard, isText, isTime } from './answer-guard.ts';

/** The answer of `POST /api/v1/portal-links` (docs/reference/portal-links.md): the link, its token and expiry. */
export interface PortalLinkAnswer {
  id: string;
  url: string;
  token: string;
  expiresAt: string;
}

/** Checks an answer of `POST /api/v1/portal-links`. */
export const portalLinkAnswer = answerGuard<PortalLinkAnswer>({
  id: isText,
  url: isText,
  token: isText,
  expiresAt: isTime,
});
