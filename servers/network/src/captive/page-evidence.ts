/**
 * What a 200 page says when nobody knows what the URL should answer: a portal that hijacks the page shows a
 * login or terms form, or sends the browser on with a meta refresh or a script to its own host. A page of
 * the site itself does neither.
 */
import { type HopResponse, shownUrl } from "@roadnerd/conventions";

export interface PageEvidence {
  kind: "login_form" | "meta_refresh" | "script_redirect";
  /** One phrase for the reason: "a login form", "a meta refresh to portal.example". */
  says: string;
  /** Where the page sends the user, when it says. */
  target?: string;
}

/** A host without its www: one site for the redirect rules. */
export const siteOf = (host: string) => host.toLowerCase().replace(/^www\./, "");

/** A form that asks for a password, a voucher or room, or to accept terms or connect. */
const FORM = /<form\b[\s\S]*?<\/form>/i;
const LOGIN_WORDS =
  /type\s*=\s*["']?password|\b(log\s?in|sign\s?in|accept|agree|terms|connect|voucher|room number|access code)\b/i;
const META_REFRESH =
  /<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*content\s*=\s*["'][^"']*?url\s*=\s*([^"'>\s;]+)/i;
const SCRIPT_REDIRECT =
  /\b(?:window\.|document\.|top\.|self\.)?location(?:\.href)?\s*=\s*["']([^"']+)["']|\blocation\.(?:replace|assign)\(\s*["']([^"']+)["']/i;

/** The target if it leaves the site the page came from. */
function elsewhere(target: string | undefined, page: string): URL | undefined {
  if (!target) return undefined;
  try {
    const to = new URL(target, page);
    return siteOf(to.host) === siteOf(new URL(page).host) ? undefined : to;
  } catch {
    return undefined;
  }
}

export function pageEvidence(hop: HopResponse): PageEvidence | undefined {
  const form = FORM.exec(hop.body)?.[0];
  if (form && LOGIN_WORDS.test(form)) return { kind: "login_form", says: "a login form" };
  const refresh = elsewhere(META_REFRESH.exec(hop.body)?.[1], hop.url);
  if (refresh) {
    return {
      kind: "meta_refresh",
      says: `a meta refresh to ${refresh.host}`,
      target: shownUrl(refresh.href),
    };
  }
  const script = SCRIPT_REDIRECT.exec(hop.body);
  const scripted = elsewhere(script?.[1] ?? script?.[2], hop.url);
  if (scripted) {
    return {
      kind: "script_redirect",
      says: `a script redirect to ${scripted.host}`,
      target: shownUrl(scripted.href),
    };
  }
  return undefined;
}
