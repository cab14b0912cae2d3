/**
 * The page's icon: a small SVG served from our origin (`/favicon.svg`, and at `/favicon.ico`, where a browser
 * looks when a page names none), so Chromium logs no 404 and the CSP's `img-src 'self'` allows it.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#0969da"/>
<circle cx="14" cy="14" r="7" fill="none" stroke="#fff" stroke-width="3"/>
<path d="M19 19l7 7" stroke="#fff" stroke-width="3.5" stroke-linecap="round"/>
</svg>
`;
